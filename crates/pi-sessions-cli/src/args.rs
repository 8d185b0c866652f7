//! A small argument parser: long options (`--out FILE`, `--out=FILE`), a few short ones, flags,
//! `--` to end options, and a help text per command generated from the same table.

use crate::error::CliError;

/// One option of a command.
pub struct Opt {
    pub long: &'static str,
    pub short: Option<char>,
    /// The value's name in help (`FILE`); `None` for a flag.
    pub value: Option<&'static str>,
    pub help: &'static str,
}

/// A command's interface.
pub struct Command {
    pub name: &'static str,
    /// One line for the overview.
    pub summary: &'static str,
    /// What follows the command name in the usage line.
    pub usage: &'static str,
    /// A paragraph or two for `--help`.
    pub description: &'static str,
    pub opts: &'static [Opt],
    pub min_pos: usize,
    /// `None`: any number.
    pub max_pos: Option<usize>,
    pub examples: &'static [&'static str],
}

/// Parsed arguments.
#[derive(Debug, Default)]
pub struct Parsed {
    flags: Vec<&'static str>,
    values: Vec<(&'static str, String)>,
    pub pos: Vec<String>,
}

impl Parsed {
    pub fn flag(&self, long: &str) -> bool {
        self.flags.contains(&long)
    }
    /// Every value given for an option, in order (a repeated option).
    pub fn values(&self, long: &str) -> Vec<&str> {
        self.values
            .iter()
            .filter(|(k, _)| *k == long)
            .map(|(_, v)| v.as_str())
            .collect()
    }
    /// The last value given for an option.
    pub fn value(&self, long: &str) -> Option<&str> {
        self.values
            .iter()
            .rev()
            .find(|(k, _)| *k == long)
            .map(|(_, v)| v.as_str())
    }
}

const HELP: Opt = Opt {
    long: "help",
    short: Some('h'),
    value: None,
    help: "show this help",
};

/// `--color`, taken by every command (read before the command runs, in `crate::run`); listed
/// here so its row is aligned with the command's own.
const COLOR: Opt = Opt {
    long: "color",
    short: None,
    value: Some("WHEN"),
    help: "colours: auto (default: on a terminal), always, never; NO_COLOR wins",
};

/// Parse `args` (after the command name). `Ok(None)` means `--help` was asked for.
pub fn parse(cmd: &Command, args: &[String]) -> Result<Option<Parsed>, CliError> {
    let mut p = Parsed::default();
    let mut i = 0;
    let mut only_pos = false;
    while i < args.len() {
        let a = &args[i];
        i += 1;
        if only_pos || a == "-" || !a.starts_with('-') {
            p.pos.push(a.clone());
            continue;
        }
        if a == "--" {
            only_pos = true;
            continue;
        }
        let Some((opt, inline)) = option(cmd, a)? else {
            return Ok(None);
        };
        match opt.value {
            None => {
                if inline.is_some() {
                    return Err(CliError::usage_in(
                        cmd.name,
                        format!("--{} takes no value", opt.long),
                    ));
                }
                p.flags.push(opt.long);
            }
            Some(meta) => {
                let v = match inline {
                    Some(v) => v,
                    None => {
                        let v = args.get(i).ok_or_else(|| {
                            CliError::usage_in(
                                cmd.name,
                                format!("--{} needs a value ({meta})", opt.long),
                            )
                        })?;
                        i += 1;
                        v.clone()
                    }
                };
                p.values.push((opt.long, v));
            }
        }
    }
    check_counts(cmd, &p)?;
    Ok(Some(p))
}

/// The option `a` names (`--name`, `--name=value`, `-c`, `-cvalue`), with its inline value;
/// `None` for `--help` or `-h`.
fn option<'c>(cmd: &'c Command, a: &str) -> Result<Option<(&'c Opt, Option<String>)>, CliError> {
    if let Some(body) = a.strip_prefix("--") {
        let (name, inline) = match body.split_once('=') {
            Some((n, v)) => (n, Some(v.to_owned())),
            None => (body, None),
        };
        if name == "help" {
            return Ok(None);
        }
        let opt = cmd
            .opts
            .iter()
            .find(|o| o.long == name)
            .ok_or_else(|| CliError::usage_in(cmd.name, format!("unknown option --{name}")))?;
        Ok(Some((opt, inline)))
    } else {
        let mut chars = a[1..].chars();
        let c = chars.next().unwrap_or('-');
        let rest: String = chars.collect();
        if c == 'h' && rest.is_empty() {
            return Ok(None);
        }
        let opt = cmd
            .opts
            .iter()
            .find(|o| o.short == Some(c))
            .ok_or_else(|| CliError::usage_in(cmd.name, format!("unknown option -{c}")))?;
        Ok(Some((opt, (!rest.is_empty()).then_some(rest))))
    }
}

/// Too few or too many positional arguments.
fn check_counts(cmd: &Command, p: &Parsed) -> Result<(), CliError> {
    if p.pos.len() < cmd.min_pos {
        return Err(CliError::usage_in(
            cmd.name,
            format!("missing argument: {} {}", cmd.name, cmd.usage),
        ));
    }
    if let Some(max) = cmd.max_pos {
        if p.pos.len() > max {
            return Err(CliError::usage_in(
                cmd.name,
                format!("unexpected argument '{}'", p.pos[max]),
            ));
        }
    }
    Ok(())
}

/// The `--help` text of a command.
pub fn help_text(cmd: &Command) -> String {
    let mut s = format!(
        "pi-sessions {} — {}\n\nUsage: pi-sessions {} {}\n\n{}\n\nOptions:\n",
        cmd.name, cmd.summary, cmd.name, cmd.usage, cmd.description
    );
    let rows: Vec<(String, &str)> = cmd
        .opts
        .iter()
        .chain([&HELP, &COLOR])
        .map(|o| {
            let mut left = match o.short {
                Some(c) => format!("-{c}, --{}", o.long),
                None => format!("    --{}", o.long),
            };
            if let Some(v) = o.value {
                left.push(' ');
                left.push_str(v);
            }
            (left, o.help)
        })
        .collect();
    let w = rows.iter().map(|(l, _)| l.len()).max().unwrap_or(0);
    for (l, h) in rows {
        s.push_str(&format!("  {l:<w$}  {h}\n"));
    }
    if !cmd.examples.is_empty() {
        s.push_str("\nExamples:\n");
        for e in cmd.examples {
            s.push_str(&format!("  {e}\n"));
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    const CMD: Command = Command {
        name: "t",
        summary: "test",
        usage: "<x>",
        description: "d",
        opts: &[
            Opt {
                long: "out",
                short: Some('o'),
                value: Some("FILE"),
                help: "",
            },
            Opt {
                long: "yes",
                short: Some('y'),
                value: None,
                help: "",
            },
        ],
        min_pos: 1,
        max_pos: Some(2),
        examples: &[],
    };

    fn v(a: &[&str]) -> Vec<String> {
        a.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn options_take_values_inline_or_next_and_flags_do_not() {
        let p = parse(&CMD, &v(&["a", "--out=x", "-y", "--", "-b"]))
            .unwrap()
            .unwrap();
        assert_eq!(p.pos, ["a", "-b"]);
        assert_eq!(p.value("out"), Some("x"));
        assert!(p.flag("yes"));
        let p = parse(&CMD, &v(&["-o", "f", "a"])).unwrap().unwrap();
        assert_eq!(p.value("out"), Some("f"));
        assert!(parse(&CMD, &v(&["a", "--yes=1"])).is_err());
        assert!(parse(&CMD, &v(&["a", "--nope"])).is_err());
        assert!(parse(&CMD, &v(&[])).is_err());
        assert!(parse(&CMD, &v(&["a", "b", "c"])).is_err());
        assert!(parse(&CMD, &v(&["--help"])).unwrap().is_none());
    }
}
