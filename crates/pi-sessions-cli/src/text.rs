//! Text measured in terminal columns: display width (wide CJK and emoji count two, ANSI colour codes
//! count nothing), truncation with an ellipsis, padding, and one-line previews.

/// Columns a character takes in a terminal.
pub fn char_width(c: char) -> usize {
    let u = c as u32;
    if u == 0 || c.is_control() {
        return 0;
    }
    // Combining marks and zero-width characters.
    if matches!(u, 0x0300..=0x036F | 0x200B..=0x200F | 0x20D0..=0x20FF | 0xFE00..=0xFE0F | 0xFE20..=0xFE2F)
    {
        return 0;
    }
    if matches!(u,
        0x1100..=0x115F | 0x2E80..=0x303E | 0x3041..=0x33FF | 0x3400..=0x4DBF | 0x4E00..=0x9FFF
        | 0xA000..=0xA4CF | 0xAC00..=0xD7A3 | 0xF900..=0xFAFF | 0xFE30..=0xFE4F | 0xFF00..=0xFF60
        | 0xFFE0..=0xFFE6 | 0x1F300..=0x1F64F | 0x1F900..=0x1F9FF | 0x1FA70..=0x1FAFF
        | 0x20000..=0x3FFFD)
    {
        return 2;
    }
    1
}

/// Display width, skipping ANSI escape sequences.
pub fn width(s: &str) -> usize {
    let mut w = 0;
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c == '\x1b' {
            // CSI: ESC [ params final-byte
            for d in chars.by_ref() {
                if d.is_ascii_alphabetic() {
                    break;
                }
            }
            continue;
        }
        w += char_width(c);
    }
    w
}

/// Cut plain text to at most `max` columns, ending with `…` when cut.
pub fn truncate(s: &str, max: usize) -> String {
    if width(s) <= max {
        return s.to_owned();
    }
    if max == 0 {
        return String::new();
    }
    let mut out = String::new();
    let mut w = 0;
    for c in s.chars() {
        let cw = char_width(c);
        if w + cw > max - 1 {
            break;
        }
        out.push(c);
        w += cw;
    }
    out.push('…');
    out
}

/// Cut from the left: `…end of a long path`.
pub fn truncate_left(s: &str, max: usize) -> String {
    if width(s) <= max {
        return s.to_owned();
    }
    let mut tail: Vec<char> = Vec::new();
    let mut w = 0;
    for c in s.chars().rev() {
        let cw = char_width(c);
        if w + cw > max.saturating_sub(1) {
            break;
        }
        tail.push(c);
        w += cw;
    }
    let mut out = String::from("…");
    out.extend(tail.into_iter().rev());
    out
}

/// Pad (text that may hold ANSI codes) with spaces to `w` columns.
pub fn pad(s: &str, w: usize) -> String {
    let n = width(s);
    if n >= w {
        s.to_owned()
    } else {
        format!("{s}{}", " ".repeat(w - n))
    }
}

/// Right-align to `w` columns.
pub fn pad_left(s: &str, w: usize) -> String {
    let n = width(s);
    if n >= w {
        s.to_owned()
    } else {
        format!("{}{s}", " ".repeat(w - n))
    }
}

/// Whitespace runs (newlines included) collapsed to one space, control characters dropped, trimmed.
pub fn one_line(s: &str) -> String {
    let mut out = String::with_capacity(s.len().min(512));
    let mut space = false;
    for c in s.chars() {
        if c.is_whitespace() {
            space = true;
        } else if !c.is_control() {
            if space && !out.is_empty() {
                out.push(' ');
            }
            space = false;
            out.push(c);
        }
    }
    out
}

/// A one-line preview of at most `max` columns.
pub fn preview(s: &str, max: usize) -> String {
    // Only the start matters: avoid collapsing a megabyte of tool output.
    let head: String = s.chars().take(max * 4 + 16).collect();
    truncate(&one_line(&head), max)
}

/// Greedy word wrap of plain text to `max` columns per line; words longer than a line are split.
/// Existing line breaks are kept.
pub fn wrap(s: &str, max: usize) -> Vec<String> {
    let max = max.max(10);
    let mut out = Vec::new();
    for para in s.split('\n') {
        let mut line = String::new();
        let mut w = 0;
        // Something (maybe an empty word between two spaces) is on this line already.
        let mut started = false;
        for word in para.split(' ') {
            let ww = width(word);
            if started && w + 1 + ww > max {
                out.push(std::mem::take(&mut line));
                w = 0;
                started = false;
            }
            if started {
                line.push(' ');
                w += 1;
            }
            started = true;
            if w + ww <= max {
                line.push_str(word);
                w += ww;
                continue;
            }
            for c in word.chars() {
                let cw = char_width(c);
                if w + cw > max {
                    out.push(std::mem::take(&mut line));
                    w = 0;
                }
                line.push(c);
                w += cw;
            }
        }
        out.push(line);
    }
    out
}

/// Characters that must not reach a terminal raw (escape sequences in session text).
pub fn sanitize(s: &str) -> String {
    s.chars()
        .map(|c| match c {
            '\n' | '\t' => c,
            c if c.is_control() => '\u{FFFD}',
            c => c,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn width_counts_columns_not_bytes_and_ignores_colour() {
        assert_eq!(width("abc"), 3);
        assert_eq!(width("日本"), 4);
        assert_eq!(width("\x1b[1mab\x1b[0m"), 2);
        assert_eq!(truncate("hello world", 6), "hello…");
        assert_eq!(truncate("日本語", 4), "日…");
        assert_eq!(truncate_left("/a/b/c/d", 5), "…/c/d");
        assert_eq!(one_line("  a \n\n b\tc "), "a b c");
        assert_eq!(wrap("aaa bbb ccc ddd", 10), ["aaa bbb", "ccc ddd"]);
        assert_eq!(wrap("x\n\ny", 10), ["x", "", "y"]);
        assert_eq!(wrap("abcdefghijklmnop", 10), ["abcdefghij", "klmnop"]);
        assert_eq!(wrap("  indented", 20), ["  indented"]);
        assert_eq!(
            pad("\x1b[1mab\x1b[0m", 4).len(),
            "\x1b[1mab\x1b[0m".len() + 2
        );
    }
}
