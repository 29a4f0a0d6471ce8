//! How a command fails, and the exit code each kind maps to (documented in the README).

use std::fmt;

/// A failed command. Every message says what was wrong, where, and how to fix it.
#[derive(Debug)]
pub enum CliError {
    /// The operator asked for something impossible or malformed: exit code 2.
    Usage(String),
    /// The run started but the system failed it, or it found a problem (corruption): exit code 1.
    Runtime(String),
}

impl CliError {
    pub fn usage(message: impl Into<String>) -> Self {
        CliError::Usage(message.into())
    }

    pub fn runtime(message: impl Into<String>) -> Self {
        CliError::Runtime(message.into())
    }

    pub fn exit_code(&self) -> i32 {
        match self {
            CliError::Usage(_) => 2,
            CliError::Runtime(_) => 1,
        }
    }
}

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CliError::Usage(m) | CliError::Runtime(m) => f.write_str(m),
        }
    }
}

impl std::error::Error for CliError {}

pub type CliResult = Result<(), CliError>;
