//! The secrets gate: before anything leaves the machine, the local sessions a round would send
//! (new or changed since the last sync) are scanned for unacknowledged credentials
//! (`crate::secrets`), and the policy decides what happens to those that hold some.
//!
//! The default ([`SecretPolicy::Auto`]) follows where the sessions go. A git remote reached over
//! the network (`https://`, `ssh://`, `git@host:path`) is someone else's machine, often a hosted
//! service: such sessions are held back (skipped, both sides left as they were) and each is
//! reported by name once; later runs only count them, so a user who syncs from cron is protected
//! without being told the same thing every hour. A bare repository on a local or mounted disk,
//! or a shared folder, is the user's own storage: sessions go, with a warning (once each). A
//! session whose findings are all acknowledged, or that was redacted, goes everywhere.
//! `--skip-secrets`, `--refuse-secrets` (the whole run stops before anything is written) and
//! `--send-secrets` (go, with the warning) override the default.
//!
//! Which sessions were reported is kept in `<sync home>/secrets-reported` (session id and the
//! fingerprints reported; private), so a new finding in a session is reported again.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use super::scan::Side;
use super::state::State;
use super::transport::{Kind as Transport, Transport as Remote};
use crate::error::{Error, ErrorCode, Result};
use crate::fsio;
use crate::secrets::{self, Acks, Kind};

/// What to do with a session that holds unacknowledged credentials.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SecretPolicy {
    /// Skip for a network git remote, warn for a local repository or folder.
    #[default]
    Auto,
    /// Leave such sessions alone (both sides), reporting them.
    Skip,
    /// Stop the run before anything is written when any session has some.
    Refuse,
    /// Send them, reporting them.
    Warn,
}

impl SecretPolicy {
    pub fn name(self) -> &'static str {
        match self {
            SecretPolicy::Auto => "auto",
            SecretPolicy::Skip => "skip",
            SecretPolicy::Refuse => "refuse",
            SecretPolicy::Warn => "warn",
        }
    }

    pub fn from_name(name: &str) -> Option<SecretPolicy> {
        [Self::Auto, Self::Skip, Self::Refuse, Self::Warn]
            .into_iter()
            .find(|p| p.name() == name)
    }
}

/// A session that holds unacknowledged credentials.
#[derive(Debug, Clone)]
pub struct Flagged {
    pub id: String,
    pub path: PathBuf,
    /// The kinds found, each once.
    pub kinds: Vec<Kind>,
    pub findings: usize,
    /// False: held back; true: sent anyway (warn).
    pub sent: bool,
    /// Reported for the first time (or with a new finding) by this run.
    pub first: bool,
}

/// A git remote that is reached over the network (not a path, not `file://`).
pub fn is_network_remote(remote: &Remote) -> bool {
    let r = remote.remote.as_str();
    if remote.kind != Transport::Git || r.starts_with("file://") {
        return false;
    }
    super::transport::is_url(r)
}

/// The policy in force for `remote`.
pub fn effective(policy: SecretPolicy, remote: &Remote) -> SecretPolicy {
    match policy {
        SecretPolicy::Auto if is_network_remote(remote) => SecretPolicy::Skip,
        SecretPolicy::Auto => SecretPolicy::Warn,
        p => p,
    }
}

/// The local sessions a round would send (new or changed since `st`) that hold unacknowledged
/// credentials, decided by the policy in force. `Refuse` with any: `SYNC_SECRETS_FOUND`.
pub fn check(
    policy: SecretPolicy,
    remote: &Remote,
    agent_dir: &str,
    local: &Side,
    st: &State,
    dry_run: bool,
) -> Result<Vec<Flagged>> {
    let policy = effective(policy, remote);
    let mut outgoing: Vec<(&String, PathBuf)> = Vec::new();
    for (id, g) in &local.by_id {
        let seen = st.sessions.get(id);
        let unchanged = g.copies.is_empty()
            && seen.is_some_and(|s| s.local == g.main.path && s.local_stamp == g.main.stamp);
        if !unchanged {
            outgoing.push((id, g.main.path.clone()));
            outgoing.extend(g.copies.iter().map(|c| (id, c.path.clone())));
        }
    }
    let acks = Acks::load(Path::new(agent_dir))?;
    let paths: Vec<PathBuf> = outgoing.iter().map(|(_, p)| p.clone()).collect();
    let scans = secrets::scan_files(&paths, &acks, &mut |_| {});
    let mut found: BTreeMap<&String, (PathBuf, BTreeSet<Kind>, BTreeSet<String>)> = BTreeMap::new();
    for ((id, path), scan) in outgoing.iter().zip(scans) {
        let Ok(scan) = scan else { continue };
        if scan.findings.is_empty() {
            continue;
        }
        let e = found
            .entry(id)
            .or_insert_with(|| (path.clone(), BTreeSet::new(), BTreeSet::new()));
        e.1.extend(scan.findings.iter().map(|f| f.kind));
        e.2.extend(scan.findings.iter().map(|f| f.fingerprint.clone()));
    }
    if policy == SecretPolicy::Refuse && !found.is_empty() {
        let list: Vec<String> = found
            .values()
            .map(|(p, ..)| p.display().to_string())
            .collect();
        return Err(Error::new(
            ErrorCode::SyncSecretsFound,
            format!(
                "{} session(s) hold credentials and nothing was sent: {} (see `pi-sessions secrets`)",
                list.len(),
                list.join(", ")
            ),
        ));
    }
    let reported_file = remote.home.join("secrets-reported");
    let mut reported = load_reported(&reported_file);
    let mut out = Vec::new();
    for (id, (path, kinds, fps)) in found {
        let known = reported.entry(id.clone()).or_default();
        let first = !fps.is_subset(known);
        known.extend(fps.iter().cloned());
        out.push(Flagged {
            id: id.clone(),
            path,
            kinds: kinds.into_iter().collect(),
            findings: fps.len(),
            sent: policy == SecretPolicy::Warn,
            first,
        });
    }
    if !dry_run && out.iter().any(|f| f.first) {
        save_reported(&reported_file, &reported)?;
    }
    Ok(out)
}

type Reported = BTreeMap<String, BTreeSet<String>>;

fn load_reported(path: &Path) -> Reported {
    let Ok(text) = std::fs::read_to_string(path) else {
        return Reported::new();
    };
    text.lines()
        .filter_map(|l| l.split_once('\t'))
        .map(|(id, fps)| (id.to_owned(), fps.split(',').map(str::to_owned).collect()))
        .collect()
}

fn save_reported(path: &Path, r: &Reported) -> Result<()> {
    let mut out = String::new();
    for (id, fps) in r {
        if id.contains(['\t', '\n', '\r']) {
            continue;
        }
        let list: Vec<&str> = fps.iter().map(String::as_str).collect();
        out.push_str(&format!("{id}\t{}\n", list.join(",")));
    }
    if let Some(dir) = path.parent() {
        fsio::ensure_private_dir(dir)?;
    }
    fsio::replace_private(path, out.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn remote(kind: Transport, r: &str) -> Remote {
        Remote {
            kind,
            remote: r.to_owned(),
            home: PathBuf::new(),
            root: PathBuf::new(),
            branch: crate::sync::transport::DEFAULT_BRANCH.to_owned(),
        }
    }

    #[test]
    fn a_network_git_remote_is_skipped_by_default_and_a_local_one_warned() {
        for r in [
            "https://github.com/a/b.git",
            "git@github.com:a/b.git",
            "ssh://h/r",
        ] {
            assert_eq!(
                effective(SecretPolicy::Auto, &remote(Transport::Git, r)),
                SecretPolicy::Skip,
                "{r}"
            );
        }
        for r in ["/mnt/share/s.git", "file:///mnt/s.git", "C:\\share\\s.git"] {
            assert_eq!(
                effective(SecretPolicy::Auto, &remote(Transport::Git, r)),
                SecretPolicy::Warn,
                "{r}"
            );
        }
        assert_eq!(
            effective(
                SecretPolicy::Auto,
                &remote(Transport::Folder, "/home/a/Sync")
            ),
            SecretPolicy::Warn
        );
        let hosted = remote(Transport::Git, "https://h/r");
        assert_eq!(effective(SecretPolicy::Warn, &hosted), SecretPolicy::Warn);
        assert_eq!(
            effective(SecretPolicy::Refuse, &hosted),
            SecretPolicy::Refuse
        );
    }
}
