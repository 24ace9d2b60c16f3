//! Measurements: raw samples and the statistics computed from them, in one place.

pub mod latency;
pub mod stats;
pub mod welch;

pub use stats::Summary;
