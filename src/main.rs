//! The peakbench binary: everything lives in the library.

fn main() -> std::process::ExitCode {
    peakbench::cli::main_with(std::env::args().collect())
}
