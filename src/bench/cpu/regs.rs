//! What the assembly kernels of every architecture share: the constants they load, and macros
//! that repeat one instruction over a list of registers (one independent chain each).

/// Constants the kernels load, 64 bytes each: fp64 m and a (offsets 0, 64), fp32 m and a (128,
/// 192), 64 bytes of ones (256), fp16 m and a as bit patterns (320, 384: m = 1 − 2⁻¹⁰,
/// a = 2⁻¹⁰, both normal in fp16).
#[repr(C, align(64))]
pub struct Consts {
    pub f64_m: [f64; 8],
    pub f64_a: [f64; 8],
    pub f32_m: [f32; 16],
    pub f32_a: [f32; 16],
    pub ones: [u8; 64],
    pub f16_m: [u16; 32],
    pub f16_a: [u16; 32],
}

pub static CONSTS: Consts = Consts {
    f64_m: [1.0 - 1e-6; 8],
    f64_a: [1e-6; 8],
    f32_m: [1.0 - 1e-4; 16],
    f32_a: [1e-4; 16],
    ones: [1; 64],
    f16_m: [0x3BFF; 32],
    f16_a: [0x1400; 32],
};

/// Repeats `$a R $b` (one register number R) for each listed register, one line each.
macro_rules! each1 {
    ($a:expr, $b:expr; $($r:literal)*) => { concat!($($a, $r, $b, "\n"),*) };
}
/// Repeats `$a R $b R $c` (the register number twice) for each listed register.
macro_rules! each2 {
    ($a:expr, $b:expr, $c:expr; $($r:literal)*) => { concat!($($a, $r, $b, $r, $c, "\n"),*) };
}
#[allow(unused_macros)] // only the x86 kernels use 12 chains
macro_rules! r12 {
    ($m:ident!($($t:expr),*)) => { $m!($($t),*; "0" "1" "2" "3" "4" "5" "6" "7" "8" "9" "10" "11") };
}
#[allow(unused_macros)] // only the x86 FMA+add kernels use 14 chains
macro_rules! r14 {
    ($m:ident!($($t:expr),*)) => {
        $m!($($t),*; "0" "1" "2" "3" "4" "5" "6" "7" "8" "9" "10" "11" "12" "13")
    };
}
macro_rules! r24 {
    ($m:ident!($($t:expr),*)) => {
        $m!($($t),*; "0" "1" "2" "3" "4" "5" "6" "7" "8" "9" "10" "11"
            "12" "13" "14" "15" "16" "17" "18" "19" "20" "21" "22" "23")
    };
}

/// Safe entry points (`mod checked`) for the `unsafe` `#[target_feature]` kernels listed.
macro_rules! safe_wrapper {
    ($($f:ident),*) => {
        /// Safe entry points: each is only handed out by `kernel()` when its ISA was detected.
        mod checked {
            $(
                pub fn $f(iterations: u64) {
                    // SAFETY: `kernel()` returns this function only for an ISA in the machine's
                    // detected list (x86: CPUID features and XCR0 state; aarch64: HWCAP ASIMD or
                    // SVE), and the fp16 kernels only where fp16 arithmetic was detected too.
                    unsafe { super::$f(iterations) }
                }
            )*
        }
    };
}
