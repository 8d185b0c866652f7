//! Where sessions live: the agent directory, the per-cwd default session directory, and path
//! resolution with Node's `path` rules of the platform the core is built for: `path.win32` on
//! Windows ([`win32`]), `path.posix` elsewhere ([`Style::HOST`]), with the reference's tilde,
//! `file://` and (Windows) shell-path handling. Both rule sets are compiled on every OS, so the
//! tests of each run anywhere.

use std::path::{Path, PathBuf};

pub mod win32;

/// Which of Node's `path` rule sets applies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Style {
    Posix,
    Win32,
}

impl Style {
    /// The rules of the platform this core is built for, as Node's `path` picks them.
    pub const HOST: Style = if cfg!(windows) {
        Style::Win32
    } else {
        Style::Posix
    };

    /// `path.normalize`.
    pub fn normalize(self, p: &str) -> String {
        match self {
            Style::Posix => normalize_posix(p),
            Style::Win32 => win32::normalize(p),
        }
    }

    /// `path.join(a, b)`.
    pub fn join(self, a: &str, b: &str) -> String {
        match self {
            Style::Posix => join_posix(a, b),
            Style::Win32 => win32::join(&[a, b]),
        }
    }

    /// `path.isAbsolute`.
    pub fn is_absolute(self, p: &str) -> bool {
        match self {
            Style::Posix => p.starts_with('/'),
            Style::Win32 => win32::is_absolute(p),
        }
    }

    /// `path.resolve(p)` with `cwd` as the process's current directory.
    pub fn resolve(self, cwd: &str, p: &str) -> String {
        self.resolve_parts(cwd, &[p])
    }

    /// `path.resolve(...parts)` with `cwd` as the process's current directory.
    pub fn resolve_parts(self, cwd: &str, parts: &[&str]) -> String {
        match self {
            Style::Posix => {
                let from = parts.iter().rposition(|p| p.starts_with('/'));
                let (base, rest) = match from {
                    Some(i) => (parts[i], &parts[i + 1..]),
                    None => (cwd, parts),
                };
                let joined =
                    rest.iter()
                        .filter(|p| !p.is_empty())
                        .fold(base.to_owned(), |mut acc, p| {
                            acc.push('/');
                            acc.push_str(p);
                            acc
                        });
                resolve_posix(cwd, &joined)
            }
            Style::Win32 => win32::resolve(cwd, parts),
        }
    }

    /// The rules named as Node names them (`"posix"`, `"win32"`).
    pub fn named(name: &str) -> Option<Style> {
        match name {
            "posix" => Some(Style::Posix),
            "win32" => Some(Style::Win32),
            _ => None,
        }
    }

    /// The reference's `normalizePath` (no resolution): on Windows a shell drive path (`/c/x`)
    /// as Windows spells it; `~`, `~/x` (and `~\x` on Windows) under `home`; a `file://` URL as
    /// `url.fileURLToPath` reads it (left as it is where Node would throw).
    pub fn expand(self, input: &str, home: &str) -> String {
        let input = match self {
            Style::Win32 => win32::from_shell_path(input),
            Style::Posix => input.to_owned(),
        };
        if input == "~" {
            return home.to_owned();
        }
        let under_home = input
            .strip_prefix("~/")
            .or_else(|| input.strip_prefix("~\\").filter(|_| self == Style::Win32));
        if let Some(rest) = under_home {
            return self.join(home, rest);
        }
        if input.starts_with("file://") {
            let path = match self {
                Style::Posix => Some(posix_file_url_to_path(&input)),
                Style::Win32 => win32::file_url_to_path(&input),
            };
            return path.unwrap_or(input);
        }
        input
    }

    /// The reference's `resolvePath(input)`: [`Style::expand`], then resolved against `cwd`.
    pub fn resolve_input(self, cwd: &str, input: &str, home: &str) -> String {
        self.resolve(cwd, &self.expand(input, home))
    }

    /// The reference's `pathsEqual` of two resolved paths: case-insensitive on Windows.
    pub fn same(self, a: &str, b: &str) -> bool {
        match self {
            Style::Posix => a == b,
            Style::Win32 => a == b || a.to_lowercase() == b.to_lowercase(),
        }
    }
}

/// `~`, `~/x` and `file://` handling of the reference's `normalizePath` (no resolution), with the
/// rules of this platform.
pub fn normalize(input: &str) -> String {
    Style::HOST.expand(input, &home())
}

/// `file:///abs/path` (empty host or `localhost`) -> `/abs/path`, percent-decoded.
fn posix_file_url_to_path(url: &str) -> String {
    let rest = &url["file://".len()..];
    let path = rest.strip_prefix("localhost").unwrap_or(rest);
    percent_decode(path)
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

/// The user's home directory as the OS reports it now, as Node's `os.homedir()` does: `$HOME`
/// (on Windows `%USERPROFILE%`) when set and not empty, else what the OS says (`dirs::home_dir`:
/// the user database, the profile folder); `/` when neither tells. On Windows `dirs` never reads
/// USERPROFILE, while Node (libuv) reads it first, so it is asked here. Like [`process_cwd`], a
/// fact about the process, not configuration.
pub fn home() -> String {
    #[cfg(windows)]
    if let Some(profile) = std::env::var_os("USERPROFILE").filter(|v| !v.is_empty()) {
        return profile.to_string_lossy().into_owned();
    }
    dirs::home_dir()
        .map(|p| p.to_string_lossy().into_owned())
        .unwrap_or_else(|| "/".to_owned())
}

/// Node's `path.join(a, b)` with this platform's rules. Every path the reference builds with
/// `join` (session files, listing results, the sessions root) is spelled by this one rule, so a
/// relative or untidy session dir (`./x`, `x//y`, `x/../y`) gives the same strings here as there
/// (`x`, `x/y`, `y`; on Windows `x\y` and `y`).
pub fn join(a: &str, b: &str) -> String {
    Style::HOST.join(a, b)
}

/// Node's `path.posix.join(a, b)`: the non-empty parts joined with `/`, then [`normalize_posix`].
fn join_posix(a: &str, b: &str) -> String {
    match (a.is_empty(), b.is_empty()) {
        (true, _) => normalize_posix(b),
        (false, true) => normalize_posix(a),
        (false, false) => normalize_posix(&format!("{a}/{b}")),
    }
}

/// [`join`] for a directory held as a path and a file name in it.
pub fn join_in(dir: &Path, name: &str) -> PathBuf {
    PathBuf::from(join(&dir.to_string_lossy(), name))
}

/// Node's `path.normalize` (POSIX): collapse `//`, `.` and `..` (a relative path may climb above
/// its start, an absolute one stops at `/`), keep one trailing slash if there was one; `""` is `.`.
pub fn normalize_posix(p: &str) -> String {
    if p.is_empty() {
        return ".".into();
    }
    let absolute = p.starts_with('/');
    let trailing = p.ends_with('/');
    let body = collapse(p, absolute);
    match (absolute, body.is_empty(), trailing) {
        (true, true, _) => "/".into(),
        (false, true, true) => "./".into(),
        (false, true, false) => ".".into(),
        (true, false, true) => format!("/{body}/"),
        (true, false, false) => format!("/{body}"),
        (false, false, true) => format!("{body}/"),
        (false, false, false) => body,
    }
}

/// The segments of `p` without empty ones, `.`, and the `..` that cancel a name, joined by `/`.
fn collapse(p: &str, absolute: bool) -> String {
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
    parts.join("/")
}

/// The process's current directory as Node's `process.cwd()` reports it.
pub fn process_cwd() -> String {
    std::env::current_dir()
        .map(|p| p.to_string_lossy().into_owned())
        .unwrap_or_else(|_| "/".into())
}

/// The reference's `resolvePath`: normalize (tilde, file URL), then resolve against the process
/// cwd, with this platform's rules.
pub fn resolve(input: &str) -> String {
    // The home directory and the process's cwd are each a system call or an environment read:
    // asked only when the path needs them (every in-memory manager resolves its cwd here).
    let style = Style::HOST;
    let home = if input.starts_with('~') {
        home()
    } else {
        String::new()
    };
    let expanded = style.expand(input, &home);
    let cwd = if style == Style::Posix && expanded.starts_with('/') {
        String::new()
    } else {
        process_cwd()
    };
    style.resolve(&cwd, &expanded)
}

/// `path.posix.resolve(cwd, p)`, for an absolute `cwd` (`process.cwd()` always is).
fn resolve_posix(cwd: &str, p: &str) -> String {
    let absolute = if p.starts_with('/') {
        p.to_owned()
    } else {
        format!("{cwd}/{p}")
    };
    // `path.resolve` never keeps a trailing slash.
    format!("/{}", collapse(&absolute, true))
}

/// The variable that names the agent directory; callers read it at call time, as the reference
/// does, and pass its value to [`agent_dir`].
pub const AGENT_DIR_VAR: &str = "PI_CODING_AGENT_DIR";

/// The agent directory: `agent_dir_var` (the value of `PI_CODING_AGENT_DIR`; tilde and file URL
/// expanded, not made absolute) unless it is unset or empty, else `<home>/.pi/agent`.
pub fn agent_dir(agent_dir_var: Option<&str>, home: &str) -> String {
    match agent_dir_var {
        Some(v) if !v.is_empty() => Style::HOST.expand(v, home),
        _ => join(home, ".pi/agent"),
    }
}

/// `<agentDir>/sessions` (relative if the agent dir is), as `SessionManager.listAll()` reads it.
pub fn sessions_root(agent_dir: &str) -> String {
    join(agent_dir, "sessions")
}

/// The directory name for a (resolved) cwd: one leading separator removed, `/ \ :` turned into
/// `-`, wrapped in `--…--` (`C:\Users\ana\proj` is `--C--Users-ana-proj--`).
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

/// The default session directory for a cwd under an agent directory (not created here), as
/// `SessionManager.list(cwd)` reads it.
pub fn default_session_dir(agent_dir: &str, cwd: &str) -> PathBuf {
    let root = join(&resolve(agent_dir), "sessions");
    PathBuf::from(join(&root, &encode_cwd(&resolve(cwd))))
}

#[cfg(test)]
mod win32_tests;

// The tests below spell Node's POSIX answers through the host's rules.
#[cfg(all(test, not(windows)))]
mod tests {
    use super::*;

    #[test]
    fn cwd_encoding_matches_the_reference_examples() {
        assert_eq!(encode_cwd("/home/u/proj:x y"), "--home-u-proj-x y--");
        assert_eq!(encode_cwd("/"), "----");
        assert_eq!(encode_cwd(&resolve("/a\\b:c/d.e/")), "--a-b-c-d.e--");
        assert_eq!(encode_cwd(&resolve("/a//b/../c")), "--a-c--");
    }

    // Expected values below were printed by Node 20's `path.join` / `path.normalize` /
    // `path.resolve` for the same inputs.

    #[test]
    fn posix_normalization_follows_node() {
        for (input, node) in [
            ("/a/b/../c/./d/", "/a/c/d/"),
            ("/..", "/"),
            ("a/../..", ".."),
            ("./", "./"),
            ("a/..", "."),
            ("a/../", "./"),
            ("", "."),
            ("/", "/"),
            ("//", "/"),
            ("x//y/", "x/y/"),
            ("../../a/", "../../a/"),
        ] {
            assert_eq!(normalize_posix(input), node, "normalize({input:?})");
        }
    }

    #[test]
    fn joining_a_file_name_onto_a_session_dir_spells_it_as_node_does() {
        for (dir, name, node) in [
            ("./custom", "f.jsonl", "custom/f.jsonl"),
            ("custom", "f.jsonl", "custom/f.jsonl"),
            ("x/../y", "f.jsonl", "y/f.jsonl"),
            ("x//y", "f.jsonl", "x/y/f.jsonl"),
            ("t/", "f.jsonl", "t/f.jsonl"),
            ("./", "f.jsonl", "f.jsonl"),
            ("..", "f.jsonl", "../f.jsonl"),
            ("../..", "f.jsonl", "../../f.jsonl"),
            ("sub/..", "f.jsonl", "f.jsonl"),
            ("a/../..", "f.jsonl", "../f.jsonl"),
            ("/abs/./q/", "f.jsonl", "/abs/q/f.jsonl"),
            ("/", "f.jsonl", "/f.jsonl"),
            ("//x//", "f.jsonl", "/x/f.jsonl"),
            ("/..", "f.jsonl", "/f.jsonl"),
            ("", "f.jsonl", "f.jsonl"),
            (".", "", "."),
            ("", "", "."),
            ("a/", "", "a/"),
            ("/root", "x/", "/root/x/"),
            ("/x", "../y", "/y"),
            ("..a/.b", "...c", "..a/.b/...c"),
        ] {
            assert_eq!(join(dir, name), node, "join({dir:?}, {name:?})");
            // Compared as strings: `Path`'s own equality ignores `./` and `//`.
            assert_eq!(
                join_in(Path::new(dir), name).to_str(),
                Some(node),
                "join_in({dir:?}, {name:?})"
            );
        }
    }

    #[test]
    fn the_agent_dir_is_the_variable_expanded_or_under_home() {
        assert_eq!(agent_dir(Some("/x/agent"), "/h"), "/x/agent");
        assert_eq!(agent_dir(Some("rel/agent/"), "/h"), "rel/agent/");
        assert_eq!(agent_dir(Some("file:///x%20y"), "/h"), "/x y");
        assert_eq!(agent_dir(Some(""), "/h"), "/h/.pi/agent");
        assert_eq!(agent_dir(None, "/h/"), "/h/.pi/agent");
        assert_eq!(sessions_root("rel"), "rel/sessions");
        assert_eq!(
            default_session_dir("/a/../agent", "/w/p"),
            PathBuf::from("/agent/sessions/--w-p--")
        );
    }

    #[test]
    fn resolving_drops_the_trailing_slash_that_joining_keeps() {
        assert_eq!(resolve("/a/b/"), "/a/b");
        assert_eq!(resolve("/a//b/../c/"), "/a/c");
        assert_eq!(resolve("/"), "/");
        assert_eq!(join("/a/b", "c/"), "/a/b/c/");
    }
}
