//! The project paths that differ between machines: a small config of lines
//! `<path as the remote names it> = <the same directory on this machine>`, e.g.
//! `/Users/ana/src = /home/ana/src` on the Linux machine (and nothing on the Mac, whose paths are
//! the remote's). `#` starts a comment. The remote always holds the left side: a session's `cwd`
//! under a right-side prefix is written there with the left-side prefix, and read back the other
//! way. A path under no prefix is the same on both sides.
//!
//! A fork's `parentSession` (the file it was made from) moves the same way, and when it lies in
//! the session dir named for the session's own project (`--home-ana-src-app--`, the usual fork)
//! that directory's name is renamed for the project's path on the other side, so that with the
//! agent dirs mapped too (a line for the home dirs) it names the parent's file on each machine.

use std::path::Path;

use crate::error::{Error, ErrorCode, Result};
use crate::{fsio, paths};

/// The prefix pairs of a config, longest first (so `/a/b` wins over `/a`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PathMap {
    /// `(remote, local)` prefixes, without trailing separators.
    pairs: Vec<(String, String)>,
}

fn trim_sep(p: &str) -> &str {
    let t = p.trim_end_matches(['/', '\\']);
    if t.is_empty() {
        &p[..p.len().min(1)]
    } else {
        t
    }
}

/// Whether `p` is spelled as Windows spells paths: a drive (`C:`), or a backslash in it.
fn windows_style(p: &str) -> bool {
    let b = p.as_bytes();
    (b.len() >= 2 && b[0].is_ascii_alphabetic() && b[1] == b':') || p.contains('\\')
}

/// The length of `path`'s part that `prefix` names, when it names a whole-component prefix of it.
/// A Windows prefix matches as Windows compares: ASCII case folded, `/` the same as `\`.
fn prefix_len(path: &str, prefix: &str) -> Option<usize> {
    let head = path.get(..prefix.len())?;
    let same = if windows_style(prefix) {
        let norm = |c: u8| {
            if c == b'/' {
                b'\\'
            } else {
                c.to_ascii_lowercase()
            }
        };
        head.bytes().map(norm).eq(prefix.bytes().map(norm))
    } else {
        head == prefix
    };
    let rest = &path[prefix.len()..];
    let whole = rest.is_empty() || rest.starts_with(['/', '\\']) || prefix.ends_with(['/', '\\']);
    (same && whole).then_some(prefix.len())
}

/// `path` with `prefix` replaced by `to`, when `prefix` is a whole-component prefix of it. The
/// rest takes the separators of `to`'s side (a Windows machine's `C:\src` for a Mac's `/src`).
fn swap(path: &str, prefix: &str, to: &str) -> Option<String> {
    let rest = &path[prefix_len(path, prefix)?..];
    let rest = if windows_style(to) {
        rest.replace('/', "\\")
    } else if to.starts_with('/') {
        rest.replace('\\', "/")
    } else {
        rest.to_owned()
    };
    Some(format!("{to}{rest}"))
}

impl PathMap {
    /// Parse a config's text; a line that is neither blank, a comment nor `a = b` is an
    /// `INVALID_ARGUMENT` error naming its line.
    pub fn parse(text: &str) -> Result<PathMap> {
        let mut pairs = Vec::new();
        for (i, raw) in text.lines().enumerate() {
            let line = raw.split('#').next().unwrap_or("").trim();
            if line.is_empty() {
                continue;
            }
            let bad = || {
                Error::invalid_argument(format!(
                    "path map line {}: expected `<remote path> = <local path>`, got `{}`",
                    i + 1,
                    raw.trim()
                ))
            };
            let (remote, local) = line.split_once('=').ok_or_else(bad)?;
            let (remote, local) = (trim_sep(remote.trim()), trim_sep(local.trim()));
            if remote.is_empty() || local.is_empty() {
                return Err(bad());
            }
            pairs.push((remote.to_owned(), local.to_owned()));
        }
        pairs.sort_by_key(|(r, l)| std::cmp::Reverse(r.len().max(l.len())));
        Ok(PathMap { pairs })
    }

    /// The config at `path`; an empty map when there is no such file.
    pub fn load(path: &Path) -> Result<PathMap> {
        match fsio::read_all(path)? {
            None => Ok(PathMap::default()),
            Some(b) => PathMap::parse(&String::from_utf8_lossy(&b))
                .map_err(|e| Error::new(e.code, format!("{}: {}", path.display(), e.message))),
        }
    }

    /// A local project path as the remote names it.
    pub fn to_remote(&self, local: &str) -> String {
        let mut by_local: Vec<&(String, String)> = self.pairs.iter().collect();
        by_local.sort_by_key(|(_, l)| std::cmp::Reverse(l.len()));
        by_local
            .iter()
            .find_map(|(r, l)| swap(local, l, r))
            .unwrap_or_else(|| local.to_owned())
    }

    /// A remote project path on this machine, and whether a mapping made it.
    pub fn to_local(&self, remote: &str) -> (String, bool) {
        let mut by_remote: Vec<&(String, String)> = self.pairs.iter().collect();
        by_remote.sort_by_key(|(r, _)| std::cmp::Reverse(r.len()));
        match by_remote.iter().find_map(|(r, l)| swap(remote, r, l)) {
            Some(p) => (p, true),
            None => (remote.to_owned(), false),
        }
    }
}

/// `path` with its directory's name `--<from>--` (the session dir of project `from`) renamed for
/// project `to`; as it was when its directory has another name.
fn rename_session_dir(path: &str, from: &str, to: &str) -> String {
    let (from, to) = (paths::encode_cwd(from), paths::encode_cwd(to));
    let file_at = path.rfind(['/', '\\']);
    let dir_at = file_at.and_then(|f| path[..f].rfind(['/', '\\']));
    match (dir_at, file_at) {
        (Some(d), Some(f)) if path[d + 1..f] == from => {
            format!("{}{to}{}", &path[..=d], &path[f..])
        }
        _ => path.to_owned(),
    }
}

impl PathMap {
    /// A fork's `parentSession` of a local session (project `local_cwd`, `remote_cwd` on the
    /// remote) as the remote names it.
    pub fn parent_to_remote(&self, parent: &str, local_cwd: &str, remote_cwd: &str) -> String {
        rename_session_dir(&self.to_remote(parent), local_cwd, remote_cwd)
    }

    /// A remote session's `parentSession` as this machine names it, the inverse of
    /// [`PathMap::parent_to_remote`].
    pub fn parent_to_local(&self, parent: &str, remote_cwd: &str, local_cwd: &str) -> String {
        rename_session_dir(&self.to_local(parent).0, remote_cwd, local_cwd)
    }
}

/// The error for a remote project path that has no place here.
pub fn unmapped(cwd: &str, config: &Path) -> Error {
    Error::new(
        ErrorCode::SyncUnmappedPath,
        format!(
            "project path {cwd} is not on this machine and no line of {} maps it \
             (add `{cwd} = <the project here>`)",
            config.display()
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_prefix_maps_both_ways_on_whole_components_only() {
        let m = PathMap::parse("# homes\n/Users/ana/src = /home/ana/src/\n").unwrap();
        assert_eq!(m.to_remote("/home/ana/src/p"), "/Users/ana/src/p");
        assert_eq!(m.to_remote("/home/ana/srcx"), "/home/ana/srcx");
        assert_eq!(
            m.to_local("/Users/ana/src/p"),
            ("/home/ana/src/p".into(), true)
        );
        assert_eq!(m.to_local("/Users/bob/p"), ("/Users/bob/p".into(), false));
    }

    #[test]
    fn a_windows_machine_and_a_mac_map_with_each_sides_separators_and_windows_case() {
        // On the Windows machine: the remote holds the Mac's paths.
        let m = PathMap::parse("/Users/ana/src = C:\\Users\\ana\\src\n").unwrap();
        assert_eq!(
            m.to_local("/Users/ana/src/app/web"),
            (r"C:\Users\ana\src\app\web".into(), true)
        );
        assert_eq!(m.to_remote(r"c:\users\ana\src\app"), "/Users/ana/src/app");
        assert_eq!(m.to_remote(r"C:\Users\ana\srcx"), r"C:\Users\ana\srcx");
        // On the Mac, were the Windows paths the remote's.
        let m = PathMap::parse("C:\\Users\\ana\\src = /Users/ana/src\n").unwrap();
        assert_eq!(
            m.to_local(r"C:\Users\ana\src\app"),
            ("/Users/ana/src/app".into(), true)
        );
        assert_eq!(m.to_remote("/Users/ana/src/app"), r"C:\Users\ana\src\app");
        // POSIX prefixes stay case-sensitive.
        let m = PathMap::parse("/Users/ana = /home/ana\n").unwrap();
        assert_eq!(m.to_local("/users/ana/x"), ("/users/ana/x".into(), false));
    }

    #[test]
    fn a_parent_in_the_projects_own_session_dir_follows_the_project_and_others_only_the_prefix() {
        let m = PathMap::parse("/Users/ana = /home/ana\n").unwrap();
        let (lc, rc) = ("/home/ana/src/app", "/Users/ana/src/app");
        let own = "/home/ana/.pi/agent/sessions/--home-ana-src-app--/p.jsonl";
        let there = m.parent_to_remote(own, lc, rc);
        assert_eq!(
            there,
            "/Users/ana/.pi/agent/sessions/--Users-ana-src-app--/p.jsonl"
        );
        assert_eq!(m.parent_to_local(&there, rc, lc), own);
        let other = "/home/ana/.pi/agent/sessions/--home-ana-src-lib--/p.jsonl";
        assert_eq!(
            m.parent_to_remote(other, lc, rc),
            "/Users/ana/.pi/agent/sessions/--home-ana-src-lib--/p.jsonl"
        );
        assert_eq!(m.parent_to_remote("p.jsonl", lc, rc), "p.jsonl");
    }

    #[test]
    fn a_line_without_an_equals_sign_is_refused_with_its_number() {
        let e = PathMap::parse("\n/a = /b\n/c /d\n").unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidArgument);
        assert!(e.message.contains("line 3"), "{}", e.message);
    }
}
