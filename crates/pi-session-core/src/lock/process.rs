//! What the OS says about a process: this host's name, whether a pid is alive, and when a
//! process started (so a reused pid is told from the lease's holder).

#[cfg(not(windows))]
use std::fs;
#[cfg(unix)]
use std::io;

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
pub(super) fn pid_alive(pid: u32) -> Option<bool> {
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
pub(super) fn proc_start(pid: u32) -> Option<u64> {
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
pub(super) fn proc_start(pid: u32) -> Option<u64> {
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) may contain spaces and parentheses: fields after its last ')'.
    let rest = &stat[stat.rfind(')')? + 1..];
    rest.split_ascii_whitespace().nth(19)?.parse().ok()
}
