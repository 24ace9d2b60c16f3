//! What crosses a connection between two peakbench processes: frames bounded before they are
//! read, the shared token's proofs and seals, the network benchmark's control protocol (a
//! test's parameters, each side's counts, the reference tools' servers asked for), and its
//! client's handshake. Below `bench`, `cluster` and `reference`, which all speak it.

pub mod auth;
pub mod client;
pub mod frame;
pub mod net_test;
pub mod protocol;
pub mod tools;
