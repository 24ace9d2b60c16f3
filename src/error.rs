//! The errors that any layer may return and that the binary maps to exit codes.

/// A user error: bad input that the user can fix; exit code 2.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct UsageError(pub String);

/// A run stopped by SIGINT/SIGTERM; what was measured is kept. Exit code 130.
#[derive(Debug, thiserror::Error)]
#[error("interrupted: the points measured before the signal are kept")]
pub struct Interrupted;
