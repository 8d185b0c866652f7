//! What a lease file says: its holder's line, read and written, and whether that holder is gone.

use super::process::{hostname, pid_alive, proc_start};
use crate::json;

/// The holder named in a lease file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Holder {
    pub pid: u32,
    pub hostname: String,
    pub started_at: String,
    pub proc_start: Option<u64>,
    pub nonce: String,
}

impl Holder {
    pub(super) fn ours(nonce: String) -> Holder {
        let pid = std::process::id();
        Holder {
            pid,
            hostname: hostname(),
            started_at: crate::timefmt::now_iso().0,
            proc_start: proc_start(pid),
            nonce,
        }
    }

    pub(super) fn to_line(&self) -> String {
        let s = crate::json::string_to_json;
        let proc_start = self
            .proc_start
            .map(|p| format!(",\"procStart\":{p}"))
            .unwrap_or_default();
        format!(
            "{{\"pid\":{},\"hostname\":{},\"startedAt\":{},\"nonce\":{}{proc_start}}}\n",
            self.pid,
            s(&self.hostname),
            s(&self.started_at),
            s(&self.nonce)
        )
    }

    pub(super) fn parse(bytes: &[u8]) -> Option<Holder> {
        let v = json::parse(bytes.trim_ascii()).ok()?;
        let text = |k: &str| {
            v.get(k)
                .and_then(|s| s.as_str())
                .map(|s| s.to_string_lossy())
        };
        let pid = v.get("pid")?.as_f64()?;
        if !(pid >= 1.0 && pid <= f64::from(i32::MAX) && pid.fract() == 0.0) {
            return None;
        }
        Some(Holder {
            pid: pid as u32,
            hostname: text("hostname")?,
            started_at: text("startedAt").unwrap_or_default(),
            proc_start: v
                .get("procStart")
                .and_then(|p| p.as_f64())
                .map(|p| p as u64),
            nonce: text("nonce").unwrap_or_default(),
        })
    }

    /// Whether the holder is certainly gone, so its lease may be taken over. `held_here` says
    /// whether this process still holds a lease of a nonce (a holder of our own pid is gone when
    /// we do not).
    pub(super) fn is_stale(&self, held_here: impl Fn(&str) -> bool) -> bool {
        // Host names are case-insensitive (Windows' COMPUTERNAME is upper case where Node's
        // os.hostname() is not).
        if !self.hostname.eq_ignore_ascii_case(&hostname()) {
            return false;
        }
        let me = std::process::id();
        if self.pid == me {
            return !held_here(&self.nonce);
        }
        match pid_alive(self.pid) {
            Some(false) => true,
            // A live pid started after the lease was taken is a reused pid.
            Some(true) => matches!(
                (self.proc_start, proc_start(self.pid)),
                (Some(then), Some(now)) if then != now
            ),
            None => false,
        }
    }
}
