//! The benchmarks, one folder per subsystem.

pub mod cpu;
pub mod disk;
pub mod mem;
pub mod net;
pub mod rng;
