//! Acknowledged findings: fingerprints the user has seen and accepted (a test key, a password of
//! a throwaway database), which are then no longer reported, held back by sync, or redacted.
//!
//! The store is `<agentDir>/.pi-session-native/secrets-acknowledged`, one fingerprint per line
//! (the first 64 bits of the secret's SHA-256; never the secret), with the kind and the time it
//! was acknowledged. It is private (0600 in a 0700 directory, on Unix) and replaced atomically.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::kind::Kind;
use super::mask::is_fingerprint;
use crate::error::{Error, Result};
use crate::fsio;

const FILE: &str = "secrets-acknowledged";
const HEAD: &str = "# pi-session-native: acknowledged secrets, by fingerprint (the first 64 bits of the secret's SHA-256, never the secret)\n";

/// The acknowledged fingerprints.
#[derive(Debug, Clone, Default)]
pub struct Acks {
    /// fingerprint -> the rest of its line (kind, time).
    known: BTreeMap<String, String>,
}

impl Acks {
    /// `<agentDir>/.pi-session-native/secrets-acknowledged`.
    pub fn file_in(agent_dir: &Path) -> PathBuf {
        agent_dir.join(crate::listing::cache::DIR).join(FILE)
    }

    /// The store of `agent_dir`; empty when there is none. Lines that are no fingerprint are
    /// skipped (and dropped at the next save).
    pub fn load(agent_dir: &Path) -> Result<Acks> {
        let path = Acks::file_in(agent_dir);
        let Some(bytes) = fsio::read_all(&path)? else {
            return Ok(Acks::default());
        };
        let mut known = BTreeMap::new();
        for line in String::from_utf8_lossy(&bytes).lines() {
            let (fp, rest) = line.split_once('\t').unwrap_or((line, ""));
            if is_fingerprint(fp) {
                known.insert(fp.to_owned(), rest.to_owned());
            }
        }
        Ok(Acks { known })
    }

    pub fn contains(&self, fingerprint: &str) -> bool {
        self.known.contains_key(fingerprint)
    }

    pub fn len(&self) -> usize {
        self.known.len()
    }

    pub fn is_empty(&self) -> bool {
        self.known.is_empty()
    }

    /// Acknowledge `fingerprints` (with their kind when known) in `agent_dir`'s store, at time
    /// `now` (an ISO string). Returns how many were new. A malformed fingerprint is refused
    /// (`INVALID_ARGUMENT`) before anything is written.
    pub fn add(
        agent_dir: &Path,
        fingerprints: &[(String, Option<Kind>)],
        now: &str,
    ) -> Result<usize> {
        if let Some((bad, _)) = fingerprints.iter().find(|(f, _)| !is_fingerprint(f)) {
            return Err(Error::invalid_argument(format!(
                "{bad} is not a fingerprint (16 hex digits, as `pi-sessions secrets` prints them)"
            )));
        }
        let mut acks = Acks::load(agent_dir)?;
        let mut added = 0;
        for (fp, kind) in fingerprints {
            if !acks.known.contains_key(fp) {
                let kind = kind.map_or("-", Kind::name);
                acks.known.insert(fp.clone(), format!("{kind}\t{now}"));
                added += 1;
            }
        }
        if added > 0 {
            acks.save(agent_dir)?;
        }
        Ok(added)
    }

    fn save(&self, agent_dir: &Path) -> Result<()> {
        let mut out = String::from(HEAD);
        for (fp, rest) in &self.known {
            out.push_str(fp);
            if !rest.is_empty() {
                out.push('\t');
                out.push_str(rest);
            }
            out.push('\n');
        }
        let path = Acks::file_in(agent_dir);
        fsio::ensure_private_dir(&agent_dir.join(crate::listing::cache::DIR))?;
        fsio::replace_private(&path, out.as_bytes())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn acknowledged_fingerprints_are_kept_and_bad_ones_refused() {
        let agent = crate::testing::temp_dir("acks");
        let fp = super::super::mask::fingerprint(b"some secret");
        assert!(Acks::load(&agent).unwrap().is_empty());
        let n = Acks::add(
            &agent,
            &[(fp.clone(), Some(Kind::Jwt))],
            "2026-01-01T00:00:00.000Z",
        )
        .unwrap();
        assert_eq!(n, 1);
        assert_eq!(Acks::add(&agent, &[(fp.clone(), None)], "t").unwrap(), 0);
        let acks = Acks::load(&agent).unwrap();
        assert!(acks.contains(&fp) && acks.len() == 1);
        let text = std::fs::read_to_string(Acks::file_in(&agent)).unwrap();
        assert!(text.contains(&format!("{fp}\tjwt\t")), "{text}");
        let e = Acks::add(&agent, &[("nope".into(), None)], "t").unwrap_err();
        assert_eq!(e.js_code(), "INVALID_ARGUMENT");
    }
}
