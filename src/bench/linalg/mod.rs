//! Dense linear algebra for the LINPACK and GEMM workloads: a BLIS-style matrix multiply
//! ([`gemm`]) whose micro-kernels are the machine's widest FMA ([`kernels`]), or an installed
//! BLAS/LAPACK loaded at run time ([`system_blas`]).
//!
//! Matrices are column-major (as BLAS and HPL): element (i, j) of a matrix with leading
//! dimension `ld` is at `i + j·ld`.

pub mod gemm;
pub mod grid;
pub mod hpl;
pub mod kernels;
pub mod lu;
pub mod lu_team;
mod pack;
pub mod system_blas;
mod tiles;
pub mod workload;
