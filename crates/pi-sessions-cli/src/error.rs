//! How a command fails: a usage error (exit 2), something asked for that does not exist (exit 3)
//! or a failure (exit 1), each with a message that names the file (and line) involved.

use std::fmt;

/// Exit code: success.
pub const EXIT_OK: i32 = 0;
/// Exit code: problems found (verify, repair, search without matches) or a command failed.
pub const EXIT_PROBLEMS: i32 = 1;
/// Exit code: bad usage (unknown command or option, missing argument, ambiguous id or prefix).
pub const EXIT_USAGE: i32 = 2;
/// Exit code: what the command was asked to act on does not exist (no such session, file, entry
/// or project sessions), or nothing matched (`search`). A script can tell "not there" from a
/// mistyped command line.
pub const EXIT_NOT_FOUND: i32 = 3;

#[derive(Debug)]
pub enum CliError {
    /// Bad command line; `command` names the command whose `--help` to suggest.
    Usage {
        command: Option<&'static str>,
        message: String,
    },
    /// What the command was asked to act on does not exist.
    NotFound(String),
    /// The command could not do its job.
    Failed(String),
    /// The reader of our output went away (`| head`): stop quietly.
    Closed,
}

impl CliError {
    pub fn usage(message: impl Into<String>) -> CliError {
        CliError::Usage {
            command: None,
            message: message.into(),
        }
    }
    pub fn usage_in(command: &'static str, message: impl Into<String>) -> CliError {
        CliError::Usage {
            command: Some(command),
            message: message.into(),
        }
    }
    pub fn not_found(message: impl Into<String>) -> CliError {
        CliError::NotFound(message.into())
    }
    pub fn failed(message: impl Into<String>) -> CliError {
        CliError::Failed(message.into())
    }
    pub fn exit_code(&self) -> i32 {
        match self {
            CliError::Usage { .. } => EXIT_USAGE,
            CliError::NotFound(_) => EXIT_NOT_FOUND,
            CliError::Failed(_) => EXIT_PROBLEMS,
            CliError::Closed => EXIT_OK,
        }
    }
}

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CliError::Usage { message, .. }
            | CliError::NotFound(message)
            | CliError::Failed(message) => f.write_str(message),
            CliError::Closed => f.write_str("output closed"),
        }
    }
}

impl From<std::io::Error> for CliError {
    fn from(e: std::io::Error) -> Self {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            return CliError::Closed;
        }
        CliError::Failed(format!("write failed: {e}"))
    }
}

pub type CliResult = Result<i32, CliError>;
