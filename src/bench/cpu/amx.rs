//! Intel AMX kernels: TMUL instructions on tiles of 16 rows × 64 bytes, four independent
//! accumulator tiles (a 2 × 2 block, as Intel's optimisation manual lays out a TMUL loop) fed
//! by two A tiles and two B tiles loaded once. Handed out only where
//! [`crate::sysinfo::amx::usable`] says the CPU, the OS and Linux's permission allow it.
//!
//! One `tdpbusd` updates 16 × 16 int32 lanes, each with 64 u8 × s8 products (the lanes wrap,
//! never fault); one `tdpbf16ps` 16 × 16 fp32 lanes, each with 32 bf16 products (inputs of 0.5:
//! a lane grows by 8 an instruction, far from overflow in any run).

use super::{Kernel, Op};
use crate::sysinfo::amx::{TILE_ROW_BYTES, TILE_ROWS, TileType, usable};
use core::arch::asm;

/// The 64-byte tile configuration `ldtilecfg` reads: palette 1, tiles 0–7 of 16 rows × 64
/// bytes (bytes 16–31: bytes per row of tiles 0–15; bytes 48–63: rows).
#[repr(C, align(64))]
struct TileConfig([u8; 64]);

const fn config() -> TileConfig {
    let mut c = [0u8; 64];
    c[0] = 1;
    let mut t = 0;
    while t < 8 {
        c[16 + 2 * t] = TILE_ROW_BYTES as u8;
        c[48 + t] = TILE_ROWS as u8;
        t += 1;
    }
    TileConfig(c)
}
static CONFIG: TileConfig = config();

/// One tile of operands (16 rows × 64 bytes, stride 64).
#[repr(C, align(64))]
struct Tile([u8; 1024]);
/// int8: ones; bf16: 0.5 (0x3F00, little-endian) in every element.
static INT8_ONES: Tile = Tile([1; 1024]);
static BF16_HALVES: Tile = {
    let mut t = [0u8; 1024];
    let mut i = 1;
    while i < 1024 {
        t[i] = 0x3F;
        i += 2;
    }
    Tile(t)
};

/// TMUL instructions per loop iteration: the 2 × 2 block twice.
const PER_ITERATION: u64 = 8;

macro_rules! amx_kernel {
    ($name:ident, $op:literal, $data:ident) => {
        /// # Safety
        /// The CPU has AMX-TILE and the kernel's type, the OS saves the tile state and Linux
        /// granted this process the tile data ([`usable`]).
        #[inline(never)]
        unsafe fn $name(iterations: u64) {
            // SAFETY: the caller's promise makes every tile instruction legal; ldtilecfg reads
            // the 64-byte CONFIG, tileloadd 16 rows of 64 bytes at a 64-byte stride from the
            // 1 KiB static operand tile; tilerelease returns the tile state to its initial
            // (unused) state, so no tile register outlives the call.
            unsafe {
                asm!(
                    "ldtilecfg [{cfg}]",
                    "tileloadd tmm4, [{data} + {stride}*1]",
                    "tileloadd tmm5, [{data} + {stride}*1]",
                    "tileloadd tmm6, [{data} + {stride}*1]",
                    "tileloadd tmm7, [{data} + {stride}*1]",
                    "tilezero tmm0",
                    "tilezero tmm1",
                    "tilezero tmm2",
                    "tilezero tmm3",
                    "2:",
                    concat!($op, " tmm0, tmm4, tmm6"),
                    concat!($op, " tmm1, tmm4, tmm7"),
                    concat!($op, " tmm2, tmm5, tmm6"),
                    concat!($op, " tmm3, tmm5, tmm7"),
                    concat!($op, " tmm0, tmm4, tmm6"),
                    concat!($op, " tmm1, tmm4, tmm7"),
                    concat!($op, " tmm2, tmm5, tmm6"),
                    concat!($op, " tmm3, tmm5, tmm7"),
                    "dec {n}",
                    "jnz 2b",
                    "tilerelease",
                    cfg = in(reg) &CONFIG,
                    data = in(reg) &$data,
                    stride = in(reg) u64::from(TILE_ROW_BYTES),
                    n = inout(reg) iterations.max(1) => _,
                    options(nostack, readonly),
                );
            }
        }
    };
}
amx_kernel!(int8_amx, "tdpbusd", INT8_ONES);
amx_kernel!(bf16_amx, "tdpbf16ps", BF16_HALVES);

fn int8_checked(iterations: u64) {
    // SAFETY: handed out by `kernel` only when `usable(TileType::Int8)` held.
    unsafe { int8_amx(iterations) }
}

fn bf16_checked(iterations: u64) {
    // SAFETY: handed out by `kernel` only when `usable(TileType::Bf16)` held.
    unsafe { bf16_amx(iterations) }
}

/// The type of an AMX operation's inputs.
fn tile_type(op: Op) -> Option<TileType> {
    match op {
        Op::Matrix { element_bits: 8 } => Some(TileType::Int8),
        Op::Matrix { element_bits: 16 } => Some(TileType::Bf16),
        _ => None,
    }
}

/// The AMX kernel of `op`, or why this process cannot run one.
pub fn kernel(op: Op) -> Result<Kernel, String> {
    let ty = tile_type(op).ok_or("AMX multiplies int8 or bf16 tiles only")?;
    usable(ty)?;
    Ok(tile_kernel(ty))
}

/// The kernel and its work model (its use still needs [`usable`]).
fn tile_kernel(ty: TileType) -> Kernel {
    let (run, instruction, products): (fn(u64), _, u64) = match ty {
        TileType::Int8 => (int8_checked, "tdpbusd tmm (AMX-INT8)", 64),
        TileType::Bf16 => (bf16_checked, "tdpbf16ps tmm (AMX-BF16)", 32),
    };
    let lanes = u64::from(TILE_ROWS) * u64::from(TILE_ROW_BYTES) / 4;
    Kernel {
        run,
        ops_per_iteration: PER_ITERATION * lanes * 2 * products,
        instruction,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The tile configuration is palette 1 with eight 16 × 64-byte tiles, and the work model
    /// is Intel's: a tdpbusd is 16·16·64 multiply-adds (32768 operations), a tdpbf16ps half
    /// that.
    #[test]
    fn the_configuration_and_the_work_model_are_the_documented_ones() {
        let c = &CONFIG.0;
        assert_eq!(c[0], 1);
        for t in 0..8 {
            assert_eq!(u16::from_le_bytes([c[16 + 2 * t], c[17 + 2 * t]]), 64);
            assert_eq!(c[48 + t], 16);
        }
        assert!(c[32..48].iter().all(|&b| b == 0) && c[56..].iter().all(|&b| b == 0));
        assert_eq!(
            tile_kernel(TileType::Int8).ops_per_iteration,
            8 * 16 * 16 * 64 * 2
        );
        assert_eq!(
            tile_kernel(TileType::Bf16).ops_per_iteration,
            8 * 16 * 16 * 32 * 2
        );
        assert_eq!(
            u16::from_le_bytes([BF16_HALVES.0[0], BF16_HALVES.0[1]]),
            0x3F00
        );
    }

    /// Where the process may use AMX the kernels run; elsewhere `kernel` says why and hands
    /// out nothing.
    #[test]
    fn the_kernels_run_only_where_amx_is_usable() {
        for (bits, ty) in [(8, TileType::Int8), (16, TileType::Bf16)] {
            match (kernel(Op::Matrix { element_bits: bits }), usable(ty)) {
                (Ok(k), Ok(())) => (k.run)(10),
                (Err(why), Err(because)) => {
                    assert_eq!(why, because);
                    eprintln!("SKIPPED: AMX kernels ({why})");
                }
                (k, u) => panic!("kernel {:?} but usable {u:?}", k.map(|k| k.instruction)),
            }
        }
        assert!(kernel(Op::Dot { element_bits: 8 }).is_err());
    }
}
