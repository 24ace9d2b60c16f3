//! The benchmarks, one folder per subsystem.

pub mod cpu;
pub mod mem;
