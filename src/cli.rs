//! The `pi-sessions` command line, run inside Node (`bin/pi-sessions.js`).

use napi_derive::napi;

/// A writer that waits when the other end is not ready. Node makes a piped stdout non-blocking,
/// so `pi-sessions list --all | less` met `EAGAIN` as soon as the pipe was full; an error from
/// `write` means nothing was taken, so trying again later is safe.
struct Patient<W>(W);

impl<W: std::io::Write> Patient<W> {
    fn patiently<T>(
        &mut self,
        mut op: impl FnMut(&mut W) -> std::io::Result<T>,
    ) -> std::io::Result<T> {
        loop {
            match op(&mut self.0) {
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                    std::thread::sleep(std::time::Duration::from_millis(1))
                }
                r => return r,
            }
        }
    }
}

impl<W: std::io::Write> std::io::Write for Patient<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.patiently(|w| w.write(buf))
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.patiently(|w| w.flush())
    }
}

/// The `pi-sessions` command line (`bin/pi-sessions.js`): runs one command with the real terminal,
/// environment (`NO_COLOR`, `PI_CODING_AGENT_DIR`, `COLUMNS`) and stdio; returns the exit code.
#[napi(catch_unwind)]
pub fn run_cli(args: Vec<String>) -> i32 {
    use std::io::Write;
    let env = pi_sessions_cli::CliEnv::from_process();
    let stdout = std::io::stdout();
    let stderr = std::io::stderr();
    let mut out = Patient(stdout.lock());
    let mut err = Patient(stderr.lock());
    let code = pi_sessions_cli::run(&args, &env, &mut out, &mut err);
    let _ = out.flush();
    let _ = err.flush();
    code
}
