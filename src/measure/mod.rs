//! Measurements: raw samples and the statistics computed from them, in one place.

pub mod cpu_usage;
pub mod latency;
pub mod levels;
pub mod noise;
pub mod precision;
pub mod stats;
pub mod steady;
pub mod timeline;
pub mod welch;

pub use stats::Summary;
