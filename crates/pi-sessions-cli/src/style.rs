//! ANSI colours, only when the output is a terminal and `NO_COLOR` is not set.

/// Paints text when enabled; a no-op otherwise.
#[derive(Debug, Clone, Copy)]
pub struct Style {
    pub on: bool,
}

macro_rules! paint {
    ($($name:ident => $code:literal),* $(,)?) => {
        $(pub fn $name(&self, s: &str) -> String {
            self.paint($code, s)
        })*
    };
}

impl Style {
    /// Each line is painted on its own (newlines stay outside the codes), so pagers and
    /// captures that look at one line at a time see the right style.
    pub fn paint(&self, code: &str, s: &str) -> String {
        if !self.on || s.is_empty() {
            return s.to_owned();
        }
        s.split('\n')
            .map(|line| {
                if line.is_empty() {
                    String::new()
                } else {
                    format!("\x1b[{code}m{line}\x1b[0m")
                }
            })
            .collect::<Vec<_>>()
            .join("\n")
    }

    paint! {
        bold => "1",
        dim => "2",
        red => "31",
        green => "32",
        yellow => "33",
        blue => "34",
        magenta => "35",
        cyan => "36",
        gray => "90",
        bold_red => "1;31",
        bold_green => "1;32",
        bold_yellow => "1;33",
        bold_blue => "1;34",
        bold_magenta => "1;35",
        bold_cyan => "1;36",
        highlight => "1;30;43",
    }
}

/// When to colour, from `--color`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ColorChoice {
    Auto,
    Always,
    Never,
}

impl ColorChoice {
    pub fn parse(s: &str) -> Option<ColorChoice> {
        match s {
            "auto" => Some(ColorChoice::Auto),
            "always" => Some(ColorChoice::Always),
            "never" => Some(ColorChoice::Never),
            _ => None,
        }
    }

    /// `NO_COLOR` always wins; otherwise `always`, or a terminal under `auto`.
    pub fn style(self, is_tty: bool, no_color: bool) -> Style {
        let on = !no_color
            && match self {
                ColorChoice::Always => true,
                ColorChoice::Never => false,
                ColorChoice::Auto => is_tty,
            };
        Style { on }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_line_carries_its_own_codes() {
        let st = Style { on: true };
        assert_eq!(st.dim("a\nb\n"), "\x1b[2ma\x1b[0m\n\x1b[2mb\x1b[0m\n");
        assert_eq!(Style { on: false }.dim("a\n"), "a\n");
    }
}
