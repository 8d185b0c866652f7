//! Where a manager's sessions live, decided as the reference's factories decide it, with the path
//! rules of this platform ([`crate::paths`]): the directory a factory uses, whether finding and
//! listing in it keep to one cwd's sessions, the file and directory `open` uses, and the cwd match
//! those rest on. The binding answers the JS shell from here, so the shell decides none of it.

use crate::paths::{self, Style};

/// A factory's place for a cwd: the cwd resolved, the session directory, and whether that
/// directory is shared (given, and not the cwd's default one): `continueRecent`, `findById` and
/// `list` then keep to the sessions of this cwd in it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Place {
    pub cwd: String,
    pub dir: String,
    pub shared: bool,
    /// The directory is the cwd's default one (under the agent directory).
    pub default: bool,
}

/// The place of `cwd` (resolved against the process's cwd) with `session_dir` when given and not
/// empty (tilde and file URL expanded, not resolved, as the reference keeps it), else the cwd's
/// default directory under `agent_dir`.
pub fn session_place(cwd: &str, session_dir: Option<&str>, agent_dir: &str) -> Place {
    let resolved = paths::resolve(cwd);
    let default = default_dir(agent_dir, &resolved);
    match session_dir.filter(|d| !d.is_empty()) {
        Some(given) => {
            let dir = paths::normalize(given);
            let shared = !same_dir(&dir, &default);
            Place {
                cwd: resolved,
                dir,
                shared,
                default: false,
            }
        }
        None => Place {
            cwd: resolved,
            dir: default,
            shared: false,
            default: true,
        },
    }
}

/// Whether `dir` is the default session directory of `cwd` (`usesDefaultSessionDir`).
pub fn is_default_dir(dir: &str, cwd: &str, agent_dir: &str) -> bool {
    same_dir(dir, &default_dir(agent_dir, cwd))
}

/// `open(path, sessionDir?)`: the file resolved, and the directory new and branched sessions go
/// to: `session_dir` when given and not empty (expanded, not resolved), else the file's own.
pub fn open_place(file: &str, session_dir: Option<&str>) -> (String, String) {
    let resolved = paths::resolve(file);
    let dir = match session_dir.filter(|d| !d.is_empty()) {
        Some(given) => paths::normalize(given),
        None => Style::HOST.resolve_parts(&paths::process_cwd(), &[&resolved, ".."]),
    };
    (resolved, dir)
}

/// A header's cwd (empty: not a string) is the session of `resolved_cwd`: resolved, it is the
/// same path (case-insensitively on Windows).
pub fn cwd_matches(header_cwd: &str, resolved_cwd: &str) -> bool {
    !header_cwd.is_empty() && Style::HOST.same(&paths::resolve(header_cwd), resolved_cwd)
}

fn default_dir(agent_dir: &str, resolved_cwd: &str) -> String {
    paths::default_session_dir(agent_dir, resolved_cwd)
        .to_string_lossy()
        .into_owned()
}

/// The reference's `pathsEqual`: both resolved, then compared by the platform's rule.
fn same_dir(a: &str, b: &str) -> bool {
    Style::HOST.same(&paths::resolve(a), &paths::resolve(b))
}

#[cfg(all(test, not(windows)))]
mod tests {
    use super::*;

    #[test]
    fn a_factory_without_a_dir_uses_the_cwds_default_one_and_keeps_to_nothing() {
        let p = session_place("/work/proj/", None, "/h/.pi/agent");
        assert_eq!(p.cwd, "/work/proj");
        assert_eq!(p.dir, "/h/.pi/agent/sessions/--work-proj--");
        assert!(!p.shared && p.default);
        assert_eq!(session_place("/work/proj", Some(""), "/h/.pi/agent"), p);
    }

    #[test]
    fn a_given_dir_is_shared_unless_it_is_the_default_one() {
        let shared = session_place("/work/proj", Some("/tmp/all"), "/agent");
        assert_eq!((shared.dir.as_str(), shared.shared), ("/tmp/all", true));
        let same = session_place(
            "/work/proj",
            Some("/agent/sessions/x/../--work-proj--"),
            "/agent",
        );
        assert!(!same.shared && !same.default);
        assert_eq!(
            same.dir, "/agent/sessions/x/../--work-proj--",
            "a given dir stays as given"
        );
    }

    #[test]
    fn open_takes_the_files_own_directory_unless_one_is_given() {
        assert_eq!(
            open_place("/s/a/f.jsonl", None),
            ("/s/a/f.jsonl".into(), "/s/a".into())
        );
        assert_eq!(
            open_place("/s/a/f.jsonl", Some("/d")),
            ("/s/a/f.jsonl".into(), "/d".into())
        );
    }

    #[test]
    fn a_header_cwd_matches_when_it_resolves_to_the_same_path() {
        assert!(cwd_matches("/work/proj/", "/work/proj"));
        assert!(cwd_matches("/work/x/../proj", "/work/proj"));
        assert!(!cwd_matches("", "/work/proj"));
        assert!(!cwd_matches("/work/other", "/work/proj"));
        assert!(is_default_dir("/agent/sessions/--p--", "/p", "/agent"));
    }
}
