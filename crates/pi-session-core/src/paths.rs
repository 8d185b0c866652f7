//! Where sessions live: the agent directory, the per-cwd default session directory, and path
//! resolution with Node's `path.resolve` rules (POSIX), tilde and `file://` handling.

use std::path::PathBuf;

/// `~`, `~/x` and `file://` handling of the reference's `normalizePath` (no resolution).
pub fn normalize(input: &str) -> String {
    if input == "~" {
        return home();
    }
    if let Some(rest) = input.strip_prefix("~/") {
        return join(&home(), rest);
    }
    if let Some(rest) = input.strip_prefix("file://") {
        // file:///abs/path (empty host) -> /abs/path, percent-decoded.
        let path = rest.strip_prefix("localhost").unwrap_or(rest);
        return percent_decode(path);
    }
    input.to_owned()
}

fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' && i + 2 < b.len() {
            if let Ok(v) = u8::from_str_radix(&s[i + 1..i + 3], 16) {
                out.push(v);
                i += 3;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The user's home directory (`$HOME` first, as Node's `os.homedir()`).
pub fn home() -> String {
    std::env::var("HOME")
        .ok()
        .filter(|h| !h.is_empty())
        .or_else(|| dirs::home_dir().map(|p| p.to_string_lossy().into_owned()))
        .unwrap_or_else(|| "/".to_owned())
}

/// `path.join` for two POSIX parts, normalized.
pub fn join(a: &str, b: &str) -> String {
    if a.is_empty() {
        return normalize_posix(b);
    }
    if b.is_empty() {
        return normalize_posix(a);
    }
    normalize_posix(&format!("{a}/{b}"))
}

/// `path.normalize` (POSIX): collapse `//`, `.` and `..`, drop a trailing slash.
pub fn normalize_posix(p: &str) -> String {
    if p.is_empty() {
        return ".".into();
    }
    let absolute = p.starts_with('/');
    let mut parts: Vec<&str> = Vec::new();
    for seg in p.split('/') {
        match seg {
            "" | "." => {}
            ".." => {
                if parts.last().is_some_and(|l| *l != "..") {
                    parts.pop();
                } else if !absolute {
                    parts.push("..");
                }
            }
            s => parts.push(s),
        }
    }
    let body = parts.join("/");
    match (absolute, body.is_empty()) {
        (true, _) => format!("/{body}"),
        (false, true) => ".".into(),
        (false, false) => body,
    }
}

/// The process's current directory as Node's `process.cwd()` reports it.
pub fn process_cwd() -> String {
    std::env::current_dir()
        .map(|p| p.to_string_lossy().into_owned())
        .unwrap_or_else(|_| "/".into())
}

/// The reference's `resolvePath`: normalize (tilde, file URL), then resolve against the process cwd.
pub fn resolve(input: &str) -> String {
    let n = normalize(input);
    if n.starts_with('/') {
        normalize_posix(&n)
    } else {
        join(&process_cwd(), &n)
    }
}

/// The agent directory: `PI_CODING_AGENT_DIR` (tilde/file URL expanded, not made absolute) or
/// `~/.pi/agent`. Read at call time.
pub fn agent_dir() -> String {
    match std::env::var("PI_CODING_AGENT_DIR") {
        Ok(v) if !v.is_empty() => normalize(&v),
        _ => join(&home(), ".pi/agent"),
    }
}

/// `<agentDir>/sessions` (relative if the agent dir is).
pub fn sessions_root() -> String {
    join(&agent_dir(), "sessions")
}

/// The directory name for a cwd: one leading separator removed, `/ \ :` turned into `-`, wrapped
/// in `--…--`.
pub fn encode_cwd(resolved_cwd: &str) -> String {
    let trimmed = resolved_cwd
        .strip_prefix(['/', '\\'])
        .unwrap_or(resolved_cwd);
    let body: String = trimmed
        .chars()
        .map(|c| {
            if matches!(c, '/' | '\\' | ':') {
                '-'
            } else {
                c
            }
        })
        .collect();
    format!("--{body}--")
}

/// The default session directory for a cwd (not created here).
pub fn default_session_dir(cwd: &str) -> PathBuf {
    let root = join(&resolve(&agent_dir()), "sessions");
    PathBuf::from(join(&root, &encode_cwd(&resolve(cwd))))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cwd_encoding_matches_the_reference_examples() {
        assert_eq!(encode_cwd("/home/u/proj:x y"), "--home-u-proj-x y--");
        assert_eq!(encode_cwd("/"), "----");
        assert_eq!(
            encode_cwd(&normalize_posix("/a\\b:c/d.e/")),
            "--a-b-c-d.e--"
        );
        assert_eq!(encode_cwd(&normalize_posix("/a//b/../c")), "--a-c--");
    }

    #[test]
    fn posix_normalization_follows_node() {
        assert_eq!(normalize_posix("/a/b/../c/./d/"), "/a/c/d");
        assert_eq!(normalize_posix("/.."), "/");
        assert_eq!(normalize_posix("a/../.."), "..");
        assert_eq!(join("/x", "../y"), "/y");
    }
}
