//! Node's `path.win32` rules, as pure functions on strings, compiled on every OS (so the tests on
//! Linux hold them to Node's answers; `__test__/path-rules.test.mjs` compares them with Node's own
//! `path.win32` on whatever Node runs it). Both `\` and `/` separate; results use `\`. A root is
//! a drive (`C:`, absolute with a separator after it: `C:\`), a UNC share (`\\server\share`) or a
//! device namespace (`\\.\` and `\\?\`).

/// `\` or `/`.
pub fn is_sep(c: u8) -> bool {
    c == b'\\' || c == b'/'
}

fn is_drive_letter(c: u8) -> bool {
    c.is_ascii_alphabetic()
}

/// Device names Windows reserves in every directory (`CON:` is a device, not a relative path).
const RESERVED: [&str; 28] = [
    "CON",
    "PRN",
    "AUX",
    "NUL",
    "COM1",
    "COM2",
    "COM3",
    "COM4",
    "COM5",
    "COM6",
    "COM7",
    "COM8",
    "COM9",
    "LPT1",
    "LPT2",
    "LPT3",
    "LPT4",
    "LPT5",
    "LPT6",
    "LPT7",
    "LPT8",
    "LPT9",
    "COM\u{b9}",
    "COM\u{b2}",
    "COM\u{b3}",
    "LPT\u{b9}",
    "LPT\u{b2}",
    "LPT\u{b3}",
];

/// Whether the part of `p` before its first `:` names a reserved device. Without a colon Node
/// reads all but the last character (`CONx` is `.\CONx`), and so does this.
fn reserved_before_colon(p: &str) -> bool {
    let before = match p.find(':') {
        Some(i) => &p[..i],
        None => {
            let mut chars = p.chars();
            chars.next_back();
            chars.as_str()
        }
    };
    RESERVED.contains(&before.to_uppercase().as_str())
}

/// What a path starts with: its device (`C:`, `\\server\share`, `\\.`), where the rest begins,
/// and whether it is absolute.
#[derive(Debug, Default)]
struct Root {
    device: String,
    end: usize,
    absolute: bool,
    /// `\\server\share` with nothing after it.
    share_only: bool,
}

/// The root of `p` as `path.win32.resolve` reads it (normalize reads the same, and more).
fn root(p: &str) -> Root {
    let b = p.as_bytes();
    let len = b.len();
    let mut r = Root::default();
    if len == 0 {
        return r;
    }
    if is_sep(b[0]) {
        r.absolute = true;
        r.end = 1;
        if len == 1 || !is_sep(b[1]) {
            return r;
        }
        // `\\first\second…`: a UNC share, or a device namespace when `first` is `.` or `?`.
        let scan = |mut j: usize, sep: bool| {
            while j < len && is_sep(b[j]) == sep {
                j += 1;
            }
            j
        };
        let j = scan(2, false);
        if j == len || j == 2 {
            return r;
        }
        let first = &p[2..j];
        let last = scan(j, true);
        if last == len || last == j {
            return r;
        }
        let j = scan(last, false);
        if first == "." || first == "?" {
            r.device = format!("\\\\{first}");
            r.end = 4;
        } else {
            r.device = format!("\\\\{first}\\{}", &p[last..j]);
            r.end = j;
            r.share_only = j == len;
        }
    } else if len >= 2 && is_drive_letter(b[0]) && b[1] == b':' {
        r.device = p[..2].to_owned();
        r.end = 2;
        if len > 2 && is_sep(b[2]) {
            r.absolute = true;
            r.end = 3;
        }
    }
    r
}

/// The segments of `tail` without empty ones and `.`, each `..` cancelling the name before it
/// (kept when there is none and `above_root`), joined by `\`.
fn collapse(tail: &str, above_root: bool) -> String {
    let mut parts: Vec<&str> = Vec::new();
    for seg in tail.split(['\\', '/']) {
        match seg {
            "" | "." => {}
            ".." => {
                if parts.last().is_some_and(|l| *l != "..") {
                    parts.pop();
                } else if above_root {
                    parts.push("..");
                }
            }
            s => parts.push(s),
        }
    }
    parts.join("\\")
}

/// `path.win32.isAbsolute`.
pub fn is_absolute(p: &str) -> bool {
    let b = p.as_bytes();
    match b {
        [] => false,
        [c, ..] if is_sep(*c) => true,
        [d, b':', s, ..] => is_drive_letter(*d) && is_sep(*s),
        _ => false,
    }
}

/// `path.win32.normalize`.
pub fn normalize(p: &str) -> String {
    let b = p.as_bytes();
    let len = b.len();
    if len == 0 {
        return ".".into();
    }
    if len == 1 {
        return if b[0] == b'/' { "\\".into() } else { p.into() };
    }
    let mut r = root(p);
    if r.share_only {
        return format!("{}\\", r.device);
    }
    let mut device = (!r.device.is_empty()).then(|| r.device.clone());
    if device.is_none() && !is_sep(b[0]) {
        // `CON:x`: a reserved device name before a colon is a device.
        if let Some(i) = p.find(':').filter(|&i| i > 0) {
            if reserved_before_colon(p) {
                device = Some(p[..=i].to_owned());
                r.end = i + 1;
            }
        }
    }
    let mut tail = if r.end < len {
        collapse(&p[r.end..], !r.absolute)
    } else {
        String::new()
    };
    if tail.is_empty() && !r.absolute {
        tail = ".".into();
    }
    if !tail.is_empty() && is_sep(b[len - 1]) {
        tail.push('\\');
    }
    if !r.absolute && device.is_none() && p.contains(':') {
        // A relative path must not come out reading as a drive or a stream (CVE-2024-36139).
        let t = tail.as_bytes();
        if t.len() >= 2 && is_drive_letter(t[0]) && t[1] == b':' {
            return format!(".\\{tail}");
        }
        let ends_a_part = |i: usize| i == len - 1 || is_sep(b[i + 1]);
        if p.match_indices(':').any(|(i, _)| ends_a_part(i)) {
            return format!(".\\{tail}");
        }
    }
    if reserved_before_colon(p) {
        return format!(".\\{}{tail}", device.unwrap_or_default());
    }
    match (device, r.absolute) {
        (None, true) => format!("\\{tail}"),
        (None, false) => tail,
        (Some(d), true) => format!("{d}\\{tail}"),
        (Some(d), false) => format!("{d}{tail}"),
    }
}

/// `path.win32.join` of the given parts.
pub fn join(parts: &[&str]) -> String {
    let mut nonempty = parts.iter().filter(|p| !p.is_empty());
    let Some(first) = nonempty.next() else {
        return ".".into();
    };
    let mut joined = (*first).to_owned();
    for p in nonempty {
        joined.push('\\');
        joined.push_str(p);
    }
    // A join never makes a UNC path out of leading separators, unless the first part already is
    // one (exactly two separators, then a name).
    let f = first.as_bytes();
    let first_is_unc = f.len() > 2 && is_sep(f[0]) && is_sep(f[1]) && !is_sep(f[2]);
    if !first_is_unc {
        let leading = joined.bytes().take_while(|&c| is_sep(c)).count();
        if leading >= 2 {
            joined = format!("\\{}", &joined[leading..]);
        }
    }
    normalize(&joined)
}

/// `path.win32.resolve(...parts)` with `cwd` as `process.cwd()`. A drive-relative part (`D:x`)
/// on a drive other than the cwd's resolves against that drive's root: Node would first look at
/// the `=D:` variable, which only cmd.exe sets, never Node or the agent.
pub fn resolve(cwd: &str, parts: &[&str]) -> String {
    let mut r = Resolved::default();
    let stopped = parts
        .iter()
        .rev()
        .filter(|p| !p.is_empty())
        .any(|p| r.take(p));
    if !stopped {
        let c = cwd.as_bytes();
        let other_drive = !r.device.is_empty()
            && c.get(2) == Some(&b'\\')
            && !cwd
                .get(..2)
                .is_some_and(|d| d.eq_ignore_ascii_case(&r.device));
        let last = if other_drive {
            format!("{}\\", r.device)
        } else {
            cwd.to_owned()
        };
        r.take(&last);
    }
    let tail = collapse(&r.tail, !r.absolute);
    match (r.absolute, format!("{}{tail}", r.device)) {
        (true, _) => format!("{}\\{tail}", r.device),
        (false, s) if s.is_empty() => ".".into(),
        (false, s) => s,
    }
}

/// What `resolve` has gathered, from the last part backwards.
#[derive(Debug, Default)]
struct Resolved {
    device: String,
    tail: String,
    absolute: bool,
}

impl Resolved {
    /// Take in the next part (right to left); true when the result is complete.
    fn take(&mut self, path: &str) -> bool {
        let r = root(path);
        if !r.device.is_empty() {
            if self.device.is_empty() {
                self.device = r.device;
            } else if !r.device.eq_ignore_ascii_case(&self.device) {
                // A part on another device does not count.
                return false;
            }
        }
        if self.absolute {
            return !self.device.is_empty();
        }
        self.tail = format!("{}\\{}", &path[r.end..], self.tail);
        self.absolute = r.absolute;
        self.absolute && !self.device.is_empty()
    }
}

/// Node's `url.fileURLToPath` on Windows: `file:///C:/x%20y` is `C:\x y`, `file://host/share/x`
/// is `\\host\share\x`. `None` where Node throws (no drive letter without a host, an encoded
/// `/` or `\`).
pub fn file_url_to_path(url: &str) -> Option<String> {
    let rest = url
        .get(..7)?
        .eq_ignore_ascii_case("file://")
        .then(|| &url[7..])?;
    let (host, path) = match rest.find('/') {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, "/"),
    };
    let host = host.to_ascii_lowercase();
    let host = if host == "localhost" { "" } else { &host };
    let lower = path.to_ascii_lowercase();
    if lower.contains("%2f") || lower.contains("%5c") {
        return None;
    }
    let path = super::percent_decode(&path.replace('/', "\\"));
    if !host.is_empty() {
        return Some(format!("\\\\{host}{path}"));
    }
    let b = path.as_bytes();
    // The URL parser reads `C|` as `C:`.
    (b.len() >= 3 && is_drive_letter(b[1]) && (b[2] == b':' || b[2] == b'|'))
        .then(|| format!("{}:{}", &path[1..2], &path[3..]))
}

/// The reference's `normalizeWindowsShellPath`: a Git Bash, MSYS, Cygwin or WSL drive path
/// (`/c/x`, `/mnt/c/x`, `/cygdrive/c/x`) as Windows spells it (`C:\x`); anything else unchanged.
pub fn from_shell_path(p: &str) -> String {
    if !p.starts_with('/') || p.starts_with("//") || p.contains('\\') {
        return p.to_owned();
    }
    let rest = &p[1..];
    let rest = rest
        .strip_prefix("mnt/")
        .or_else(|| rest.strip_prefix("cygdrive/"))
        .filter(|r| drive_then_end(r))
        .unwrap_or(rest);
    if !drive_then_end(rest) {
        return p.to_owned();
    }
    let letter = rest[..1].to_ascii_uppercase();
    let suffix = rest.get(2..).unwrap_or("").replace('/', "\\");
    format!("{letter}:\\{suffix}")
}

/// `c`, or `c/` followed by anything: a drive letter as a whole first segment.
fn drive_then_end(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty() && is_drive_letter(b[0]) && (b.len() == 1 || b[1] == b'/')
}
