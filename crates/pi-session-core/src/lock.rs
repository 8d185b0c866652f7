//! Who may write a session file: an ownership lease next to it, `<file>.lock`.
//!
//! The lease is one JSON line naming its holder: `pid`, `hostname`, `startedAt` (when it was
//! taken), the holder process's start time where the OS tells it (`procStart`: clock ticks since
//! boot on Linux, milliseconds since 1601 on Windows, where pids are reused quickly), and a random
//! `nonce` that tells two leases of one process apart. It appears complete or not at all: it is
//! written to a temp file and linked into place, which fails if the name is taken (the same
//! exclusivity as `O_EXCL`, which is the fallback where hard links are not supported).
//!
//! - **Exclusive mode** (opt-in per manager, or for a new one by [`crate::Config::exclusive`]):
//!   the manager takes the lease when it opens an existing file and before its first write to
//!   any file, and keeps it until it moves to another file, leaves exclusive mode, or is dropped.
//!   A live holder makes these fail with `SESSION_LOCKED`, naming its pid.
//! - **Default mode** takes no lease (two default writers may share a file, as with the
//!   reference; lines stay whole), but respects one: before its first write to a file, and again at
//!   most once per [`RECHECK`], it looks for a live exclusive holder and refuses with
//!   `SESSION_LOCKED` if there is one. Errors reading a lease never block a default writer.
//! - **Stale leases** are taken over: the holder is on this host and its pid is gone (or now
//!   belongs to a process started later, or, for our own pid, no manager of this process holds that
//!   lease). A lease from another host is never judged stale: we cannot see its processes.
//!
//! What it does not do: it is advisory (a process that ignores it, such as the reference, writes
//! anyway); a holder does not notice its lease file being deleted by hand; on network file systems
//! both exclusivity and the liveness test are only as good as the server's `link` and the pid
//! namespace (two hosts are told apart by hostname only).

use std::fs::{self, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::error::{Error, ErrorCode, Result};
use crate::json;

/// How long a default-mode manager trusts its last look for an exclusive holder.
pub const RECHECK: Duration = Duration::from_secs(1);

/// Leases this process holds: (lock path, nonce). Tells our own live leases from ones a previous
/// process with the same pid left behind, and lets [`release_all`] clean up at exit.
static HELD: Mutex<Vec<(PathBuf, String)>> = Mutex::new(Vec::new());

fn held() -> std::sync::MutexGuard<'static, Vec<(PathBuf, String)>> {
    HELD.lock().unwrap_or_else(|p| p.into_inner())
}

/// `<file>.lock`.
pub fn lock_path(file: &Path) -> PathBuf {
    let mut name = file.as_os_str().to_owned();
    name.push(".lock");
    PathBuf::from(name)
}

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
    fn ours(nonce: String) -> Holder {
        let pid = std::process::id();
        Holder {
            pid,
            hostname: hostname(),
            started_at: crate::timefmt::now_iso().0,
            proc_start: proc_start(pid),
            nonce,
        }
    }

    fn to_line(&self) -> String {
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

    fn parse(bytes: &[u8]) -> Option<Holder> {
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

    /// Whether the holder is certainly gone, so its lease may be taken over.
    fn is_stale(&self) -> bool {
        // Host names are case-insensitive (Windows' COMPUTERNAME is upper case where Node's
        // os.hostname() is not).
        if !self.hostname.eq_ignore_ascii_case(&hostname()) {
            return false;
        }
        let me = std::process::id();
        if self.pid == me {
            return !held().iter().any(|(_, n)| *n == self.nonce);
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

fn locked(file: &Path, h: Option<&Holder>) -> Error {
    let who = match h {
        Some(h) => format!(
            "pid {} on {} (since {})",
            h.pid,
            if h.hostname.is_empty() {
                "an unknown host"
            } else {
                &h.hostname
            },
            h.started_at
        ),
        None => "a process whose lease is still being written (pid unknown)".to_owned(),
    };
    Error::new(
        ErrorCode::SessionLocked,
        format!(
            "Session file {} is locked by {who}: another session manager is writing to it. If that process is gone, delete {}",
            file.display(),
            lock_path(file).display()
        ),
    )
}

/// A lease this manager holds; dropping it releases the lock file (if it is still ours).
#[derive(Debug)]
pub struct Lease {
    lock: PathBuf,
    nonce: String,
}

impl Drop for Lease {
    fn drop(&mut self) {
        release(&self.lock, &self.nonce);
        held().retain(|(_, n)| *n != self.nonce);
    }
}

fn release(lock: &Path, nonce: &str) {
    if let Ok(bytes) = fs::read(lock) {
        if Holder::parse(&bytes).is_some_and(|h| h.nonce == nonce) {
            let _ = fs::remove_file(lock);
        }
    }
}

/// Remove every lease this process holds (for a process about to exit).
pub fn release_all() {
    for (lock, nonce) in held().drain(..) {
        release(&lock, &nonce);
    }
}

/// The live holder of `file`'s lease, if any; `Ok(None)` when there is none or it is stale.
pub fn live_holder(file: &Path) -> Result<Option<Holder>> {
    let lock = lock_path(file);
    match fs::read(&lock) {
        Ok(bytes) => match Holder::parse(&bytes) {
            Some(h) if !h.is_stale() => Ok(Some(h)),
            _ => Ok(None),
        },
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(Error::io(&e, "open", &lock)),
    }
}

/// Take the lease of `file`, taking over a stale one.
pub fn acquire(file: &Path) -> Result<Lease> {
    let lock = lock_path(file);
    let nonce = uuid::Uuid::new_v4().simple().to_string();
    let line = Holder::ours(nonce.clone()).to_line();
    for _ in 0..8 {
        match create_exclusive(&lock, line.as_bytes()) {
            Ok(()) => {
                held().push((lock.clone(), nonce.clone()));
                return Ok(Lease { lock, nonce });
            }
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(Error::io(&e, "open", &lock)),
        }
        let bytes = match fs::read(&lock) {
            Ok(b) => b,
            Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
            Err(e) => return Err(Error::io(&e, "open", &lock)),
        };
        match Holder::parse(&bytes) {
            Some(h) if !h.is_stale() => return Err(locked(file, Some(&h))),
            Some(_) => {}
            // Unreadable: a lease being written through the O_EXCL fallback, or garbage. Garbage
            // older than a few seconds is taken over.
            None if recently_modified(&lock) => return Err(locked(file, None)),
            None => {}
        }
        take_over(&lock, &bytes).map_err(|e| Error::io(&e, "rename", &lock))?;
    }
    Err(locked(file, live_holder(file)?.as_ref()))
}

/// Move a stale lease out of the way. If what we moved is not the lease we judged (someone took
/// over first), it is put back.
fn take_over(lock: &Path, judged: &[u8]) -> io::Result<()> {
    let aside = sibling(lock, "stale");
    match fs::rename(lock, &aside) {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(e),
    }
    if fs::read(&aside).ok().as_deref() != Some(judged) {
        let _ = fs::hard_link(&aside, lock);
    }
    let _ = fs::remove_file(&aside);
    Ok(())
}

/// Create `lock` with `bytes`, failing with `AlreadyExists` if the name is taken. Written aside and
/// linked into place so that a reader never sees a partial lease.
fn create_exclusive(lock: &Path, bytes: &[u8]) -> io::Result<()> {
    let tmp = sibling(lock, "tmp");
    let linked = (|| {
        let mut f = OpenOptions::new().write(true).create_new(true).open(&tmp)?;
        f.write_all(bytes)?;
        drop(f);
        fs::hard_link(&tmp, lock)
    })();
    let _ = fs::remove_file(&tmp);
    match linked {
        Err(e)
            if e.kind() != io::ErrorKind::AlreadyExists && e.kind() != io::ErrorKind::NotFound =>
        {
            // No hard links here (some network and FUSE file systems): plain O_EXCL.
            let mut f = OpenOptions::new().write(true).create_new(true).open(lock)?;
            f.write_all(bytes)
        }
        other => other,
    }
}

fn sibling(lock: &Path, what: &str) -> PathBuf {
    let name = lock
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let unique = uuid::Uuid::new_v4().simple().to_string();
    lock.with_file_name(format!(
        ".{name}.{}.{}.{what}",
        std::process::id(),
        &unique[..8]
    ))
}

fn recently_modified(path: &Path) -> bool {
    fs::metadata(path)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| t.elapsed().ok())
        .is_some_and(|age| age < Duration::from_secs(5))
}

/// Exclusive mode on or off, the lease it holds, and default mode's last look for a holder.
#[derive(Debug, Default)]
pub struct WriterGuard {
    exclusive: bool,
    /// The session file the lease is for, and the lease.
    lease: Option<(PathBuf, Lease)>,
    /// Default mode: the file last checked for an exclusive holder, and when.
    checked: Option<(PathBuf, Instant)>,
}

impl WriterGuard {
    /// A guard in exclusive mode or not (see [`crate::Config::exclusive`]), holding no lease yet.
    pub fn new(exclusive: bool) -> WriterGuard {
        WriterGuard {
            exclusive,
            ..WriterGuard::default()
        }
    }

    pub fn is_exclusive(&self) -> bool {
        self.exclusive
    }

    /// Whether this manager holds the lease of `file`.
    pub fn holds(&self, file: &Path) -> bool {
        matches!(&self.lease, Some((f, _)) if f == file)
    }

    /// Turn exclusive mode on (taking the lease of `existing`, the session's file if it exists, at
    /// once) or off (releasing the lease). A refused lease leaves the mode on: writes keep trying.
    pub fn set_exclusive(&mut self, on: bool, existing: Option<&Path>) -> Result<()> {
        self.exclusive = on;
        if !on {
            self.lease = None;
            return Ok(());
        }
        match existing {
            Some(file) => self.take(file),
            None => Ok(()),
        }
    }

    /// Before loading `file` (loading may repair or migrate it): an exclusive manager takes its
    /// lease if the file exists.
    pub fn before_open(&mut self, file: &Path) -> Result<()> {
        if self.exclusive && crate::fsio::exists(file) {
            self.take(file)
        } else {
            Ok(())
        }
    }

    /// Before any write to `file`.
    pub fn before_write(&mut self, file: &Path) -> Result<()> {
        if self.exclusive {
            return self.take(file);
        }
        if let Some((f, at)) = &self.checked {
            if f == file && at.elapsed() < RECHECK {
                return Ok(());
            }
        }
        // A default writer is never blocked by a lease it cannot read.
        if let Ok(Some(h)) = live_holder(file) {
            return Err(locked(file, Some(&h)));
        }
        self.checked = Some((file.to_path_buf(), Instant::now()));
        Ok(())
    }

    /// After `file`'s directory was made again (it had been removed, the lease file with it):
    /// an exclusive manager that held the lease takes it again, unless another process took it
    /// meanwhile (`SESSION_LOCKED`).
    pub fn renew(&mut self, file: &Path) -> Result<()> {
        let intact = match &self.lease {
            Some((f, lease)) if f == file => fs::read(&lease.lock)
                .ok()
                .and_then(|b| Holder::parse(&b))
                .is_some_and(|h| h.nonce == lease.nonce),
            _ => return Ok(()),
        };
        if !self.exclusive || intact {
            return Ok(());
        }
        self.lease = None;
        self.take(file)
    }

    /// The session now lives at `file`: a lease on any other file is released.
    pub fn follow(&mut self, file: Option<&Path>) {
        if !matches!((&self.lease, file), (Some((f, _)), Some(file)) if f == file) {
            self.lease = None;
        }
    }

    fn take(&mut self, file: &Path) -> Result<()> {
        if self.holds(file) {
            return Ok(());
        }
        let lease = acquire(file)?;
        self.lease = Some((file.to_path_buf(), lease));
        Ok(())
    }
}

/// This machine's name, as the lease records it.
pub fn hostname() -> String {
    #[cfg(unix)]
    {
        let mut buf = [0u8; 256];
        // SAFETY: the buffer is valid for its length; gethostname NUL-terminates on success
        // (truncation is handled by stopping at the first NUL or the buffer end).
        let rc = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) };
        if rc == 0 {
            let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
            return String::from_utf8_lossy(&buf[..end]).into_owned();
        }
        String::new()
    }
    #[cfg(not(unix))]
    {
        // Windows keeps the machine name in the environment (a fact about the host, not
        // configuration).
        std::env::var("COMPUTERNAME").unwrap_or_default()
    }
}

/// `Some(alive)` when the OS can tell, `None` when it cannot.
fn pid_alive(pid: u32) -> Option<bool> {
    #[cfg(unix)]
    {
        let Ok(pid) = i32::try_from(pid) else {
            return Some(false);
        };
        if pid <= 0 {
            return Some(false);
        }
        // SAFETY: signal 0 sends nothing; it only checks that the process exists.
        if unsafe { libc::kill(pid, 0) } == 0 {
            return Some(true);
        }
        match io::Error::last_os_error().raw_os_error() {
            Some(libc::ESRCH) => Some(false),
            // EPERM: it exists, owned by someone else.
            _ => Some(true),
        }
    }
    #[cfg(windows)]
    {
        use windows_sys::Win32::Foundation::{
            CloseHandle, GetLastError, ERROR_ACCESS_DENIED, ERROR_INVALID_PARAMETER, WAIT_TIMEOUT,
        };
        use windows_sys::Win32::System::Threading::{
            OpenProcess, WaitForSingleObject, PROCESS_SYNCHRONIZE,
        };
        // SAFETY: OpenProcess takes plain values and returns a handle or null; a handle it gave is
        // waited on with a zero timeout (no blocking) and closed exactly once.
        unsafe {
            let process = OpenProcess(PROCESS_SYNCHRONIZE, 0, pid);
            if process.is_null() {
                return match GetLastError() {
                    // No process has this id.
                    ERROR_INVALID_PARAMETER => Some(false),
                    // It exists, and is not ours to look into.
                    ERROR_ACCESS_DENIED => Some(true),
                    _ => None,
                };
            }
            // A process object outlives its process while handles to it are open: signalled
            // means it has exited.
            let alive = WaitForSingleObject(process, 0) == WAIT_TIMEOUT;
            CloseHandle(process);
            Some(alive)
        }
    }
    #[cfg(not(any(unix, windows)))]
    {
        let _ = pid;
        None
    }
}

/// A process's creation time in milliseconds since 1601 (whole milliseconds, so that the lease's
/// JSON number holds it exactly).
#[cfg(windows)]
fn proc_start(pid: u32) -> Option<u64> {
    use windows_sys::Win32::Foundation::{CloseHandle, FILETIME};
    use windows_sys::Win32::System::Threading::{
        GetProcessTimes, OpenProcess, PROCESS_QUERY_LIMITED_INFORMATION,
    };
    // SAFETY: the handle is checked for null, used for one query into four local FILETIMEs that
    // the call fills in when it returns nonzero (only then read), and closed exactly once.
    unsafe {
        let process = OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION, 0, pid);
        if process.is_null() {
            return None;
        }
        let zero = FILETIME {
            dwLowDateTime: 0,
            dwHighDateTime: 0,
        };
        let (mut created, mut exited, mut kernel, mut user) = (zero, zero, zero, zero);
        let ok = GetProcessTimes(process, &mut created, &mut exited, &mut kernel, &mut user);
        CloseHandle(process);
        (ok != 0).then(|| {
            ((u64::from(created.dwHighDateTime) << 32) | u64::from(created.dwLowDateTime)) / 10_000
        })
    }
}

/// A process's start time in clock ticks since boot (`/proc/<pid>/stat` field 22), Linux only.
#[cfg(not(windows))]
fn proc_start(pid: u32) -> Option<u64> {
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) may contain spaces and parentheses: fields after its last ')'.
    let rest = &stat[stat.rfind(')')? + 1..];
    rest.split_ascii_whitespace().nth(19)?.parse().ok()
}
