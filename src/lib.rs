//! peakbench: measures a machine's CPU, memory, disk and network performance and says, for every
//! figure, how close it is to the hardware's theoretical peak.

pub mod app;
pub mod bench;
pub mod cli;
pub mod cluster;
pub mod error;
pub mod files;
pub mod history;
pub mod ids;
pub mod measure;
pub mod profile;
pub mod reference;
pub mod report;
pub mod results;
pub mod runner;
pub mod sweep;
pub mod sysinfo;
pub mod text;
pub mod units;
pub mod verify;
pub mod wire;
pub mod workload;
