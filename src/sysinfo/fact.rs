//! A value that may be unknown, with where it came from or why it is missing.
//!
//! Every figure peakbench reports about the machine is a `Fact`: either a value with its
//! [`Source`], or `null` with the reason it could not be found. Nothing is guessed.

use serde::{Deserialize, Serialize};

/// Where a value came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Source {
    /// Read from the machine (CPUID, sysfs, procfs).
    Detected,
    /// Looked up in peakbench's table of microarchitectures.
    Table,
    /// Measured by peakbench on this machine.
    Measured,
    /// Given by the user on the command line.
    User,
}

/// A value with its source, or the reason it is unknown.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Fact<T> {
    pub value: Option<T>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<Source>,
    /// Why the value is unknown (present only when `value` is null).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unknown_reason: Option<String>,
}

impl<T> Fact<T> {
    pub fn known(value: T, source: Source) -> Self {
        Fact {
            value: Some(value),
            source: Some(source),
            unknown_reason: None,
        }
    }

    pub fn unknown(reason: impl Into<String>) -> Self {
        Fact {
            value: None,
            source: None,
            unknown_reason: Some(reason.into()),
        }
    }

    pub fn get(&self) -> Option<&T> {
        self.value.as_ref()
    }
}

impl<T: std::fmt::Display> Fact<T> {
    /// The value as text, or `unknown (reason)`.
    pub fn display(&self) -> String {
        match (&self.value, &self.unknown_reason) {
            (Some(v), _) => v.to_string(),
            (None, Some(r)) => format!("unknown ({r})"),
            (None, None) => "unknown".to_string(),
        }
    }
}
