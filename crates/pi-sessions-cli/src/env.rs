//! What the tool knows about the world it runs in. Everything a command would otherwise read from
//! the process (terminal, environment, clock, stdin) comes from here, so tests can set it.

use std::ffi::OsString;
use std::io::{BufRead, IsTerminal};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use pi_session_core::listing::cache;
use pi_session_core::{paths, Config};

/// The environment of one run.
pub struct CliEnv {
    /// stdout is a terminal (colours, and the table fits the width).
    pub is_tty_out: bool,
    /// stderr is a terminal (the progress bar is drawn there).
    pub is_tty_err: bool,
    /// stdin is a terminal (confirmations can be asked).
    pub is_tty_in: bool,
    /// `NO_COLOR` is set to a non-empty value: never colour.
    pub no_color: bool,
    /// The agent directory as given (`PI_CODING_AGENT_DIR`; tilde and file URL expanded when
    /// used); `None` (or empty) is `~/.pi/agent`.
    pub agent_dir: Option<String>,
    /// The working directory that picks the project; `None` is the process's.
    pub cwd: Option<String>,
    /// Terminal columns; `None` means 100.
    pub width: Option<usize>,
    /// The clock in Unix ms for relative times; `None` is now.
    pub now_ms: Option<i64>,
    /// Show clock times in UTC instead of local time.
    pub utc: bool,
    /// The search path for a `trash` command; `None` is `$PATH`.
    pub path_var: Option<OsString>,
    /// Where confirmations are read from.
    pub stdin: Mutex<Box<dyn BufRead + Send>>,
    /// Use the listing cache the addon keeps in the agent directory (`PI_SESSION_LIST_CACHE=0`
    /// turns it off, as for the addon).
    pub list_cache: bool,
    /// What the sessions a command writes through are configured with (`PI_SESSION_FSYNC`,
    /// `PI_SESSION_EXCLUSIVE`, `PI_SESSION_RESTORE_MISSING`, as for the addon's managers).
    pub session_config: Config,
    /// How the user starts this tool, for the commands the demo suggests: `PI_SESSIONS_COMMAND`
    /// (bin/pi-sessions.js sets it under `npm run demo`, where no `pi-sessions` may be on PATH);
    /// `None` is `pi-sessions`.
    pub command: Option<String>,
}

impl CliEnv {
    /// The real process: terminals, `NO_COLOR`, `PI_CODING_AGENT_DIR`, `COLUMNS`,
    /// `PI_SESSION_LIST_CACHE` and the session variables (see [`Config::from_vars`]), read now,
    /// once per run.
    pub fn from_process() -> CliEnv {
        let width = std::env::var("COLUMNS")
            .ok()
            .and_then(|c| c.trim().parse::<usize>().ok())
            .filter(|&w| w > 0);
        CliEnv {
            is_tty_out: std::io::stdout().is_terminal(),
            is_tty_err: std::io::stderr().is_terminal(),
            is_tty_in: std::io::stdin().is_terminal(),
            no_color: std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty()),
            agent_dir: std::env::var(paths::AGENT_DIR_VAR).ok(),
            cwd: None,
            width,
            now_ms: None,
            utc: false,
            path_var: None,
            stdin: Mutex::new(Box::new(std::io::BufReader::new(std::io::stdin()))),
            list_cache: std::env::var_os("PI_SESSION_LIST_CACHE").is_none_or(|v| v != "0"),
            session_config: Config::from_vars(|name| std::env::var(name).ok()),
            command: std::env::var("PI_SESSIONS_COMMAND")
                .ok()
                .filter(|c| !c.trim().is_empty()),
        }
    }

    /// No terminal anywhere, no colour, the given agent directory, empty stdin: for tests.
    pub fn plain(agent_dir: impl Into<String>) -> CliEnv {
        CliEnv {
            is_tty_out: false,
            is_tty_err: false,
            is_tty_in: false,
            no_color: true,
            agent_dir: Some(agent_dir.into()),
            cwd: None,
            width: None,
            now_ms: None,
            utc: true,
            path_var: Some(OsString::new()),
            stdin: Mutex::new(Box::new(std::io::empty())),
            list_cache: true,
            session_config: Config::default(),
            command: None,
        }
    }

    /// How to start this tool in a suggested command line.
    pub fn command(&self) -> &str {
        self.command.as_deref().unwrap_or("pi-sessions")
    }

    /// The agent directory (`PI_CODING_AGENT_DIR`, tilde-expanded, else `~/.pi/agent`).
    pub fn agent_dir(&self) -> String {
        paths::agent_dir(self.agent_dir.as_deref(), &paths::home())
    }

    /// `<agent dir>/sessions`, as `SessionManager.listAll()` reads it (relative stays relative).
    pub fn sessions_root(&self) -> PathBuf {
        PathBuf::from(paths::sessions_root(&self.agent_dir()))
    }

    /// The listing cache file shared with the addon (`lib/listing.js`), unless turned off:
    /// `<agent dir>/.pi-session-native/list-cache` (see `cache::DIR` for why there).
    pub fn list_cache_file(&self) -> Option<PathBuf> {
        self.list_cache
            .then(|| cache::file_in(Path::new(&self.agent_dir())))
    }

    /// The working directory, resolved.
    pub fn cwd(&self) -> String {
        match &self.cwd {
            Some(c) => paths::resolve(c),
            None => paths::process_cwd(),
        }
    }

    /// The session directory of a project, as `SessionManager.list(cwd)` reads it.
    pub fn project_dir(&self, cwd: &str) -> PathBuf {
        paths::default_session_dir(&self.agent_dir(), cwd)
    }

    pub fn width(&self) -> usize {
        self.width.unwrap_or(100).max(40)
    }

    pub fn now_ms(&self) -> i64 {
        self.now_ms
            .unwrap_or_else(|| chrono::Utc::now().timestamp_millis())
    }

    /// Read one line of an answer (empty at end of input).
    pub fn read_answer(&self) -> String {
        let mut line = String::new();
        let mut input = self.stdin.lock().unwrap_or_else(|e| e.into_inner());
        let _ = input.read_line(&mut line);
        line.trim().to_owned()
    }
}
