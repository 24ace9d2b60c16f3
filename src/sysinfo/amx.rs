//! Whether this process may run Intel AMX tile instructions: the CPU must implement them (CPUID
//! leaf 7: AMX-TILE and AMX-INT8 or AMX-BF16; leaf 0x1D: a tile palette of at least 16 rows of
//! 64 bytes), the OS must save the tile state (XCR0 bits 17 XTILECFG and 18 XTILEDATA), and
//! Linux must grant the process the tile data (`arch_prctl(ARCH_REQ_XCOMP_PERM,
//! XFEATURE_XTILEDATA)`, Linux 5.16 and later): without that permission the first tile
//! instruction faults.
//!
//! The decision is a function of those readings ([`decide`]), tested on recorded ones; the
//! readings and the permission request are this machine's ([`usable`]).

/// The tile data types of the TMUL instructions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TileType {
    /// `tdpbusd`: u8 × s8 products into int32 (AMX-INT8).
    Int8,
    /// `tdpbf16ps`: bf16 × bf16 products into fp32 (AMX-BF16).
    Bf16,
}

impl TileType {
    /// The CPUID flag (as /proc/cpuinfo names it) of the type's instructions.
    pub fn flag(self) -> &'static str {
        match self {
            TileType::Int8 => "amx_int8",
            TileType::Bf16 => "amx_bf16",
        }
    }
}

/// What the decision reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AmxReadings {
    /// CPUID feature names (`amx_tile`, `amx_int8`, `amx_bf16`, …).
    pub flags: Vec<String>,
    /// XCR0, where OSXSAVE is set.
    pub xcr0: Option<u64>,
    /// Tile palette 1 (CPUID leaf 0x1D, subleaf 1): rows and bytes per row of a tile.
    pub palette: Option<(u16, u16)>,
}

/// XCR0 bits 17 (XTILECFG) and 18 (XTILEDATA).
pub const XCR0_TILE: u64 = (1 << 17) | (1 << 18);
/// The tile shape the kernels configure: 16 rows of 64 bytes.
pub const TILE_ROWS: u16 = 16;
pub const TILE_ROW_BYTES: u16 = 64;

/// Whether the CPU and the OS allow tiles of `ty`, the permission asked only when they do
/// (`permit`: the request, Err(errno) when refused). Err: why not, in words.
pub fn decide(
    r: &AmxReadings,
    ty: TileType,
    permit: impl FnOnce() -> Result<(), i32>,
) -> Result<(), String> {
    let has = |f: &str| r.flags.iter().any(|x| x == f);
    if !has("amx_tile") {
        return Err("AMX (the CPU reports no AMX-TILE: Sapphire Rapids or later Xeon)".into());
    }
    if !has(ty.flag()) {
        return Err(format!(
            "AMX-{} (the CPU reports AMX-TILE without it)",
            if ty == TileType::Int8 { "INT8" } else { "BF16" }
        ));
    }
    match r.palette {
        Some((rows, bytes)) if rows >= TILE_ROWS && bytes >= TILE_ROW_BYTES => {}
        Some((rows, bytes)) => {
            return Err(format!(
                "AMX tiles of 16 rows × 64 bytes (tile palette 1 has {rows} rows × {bytes} bytes)"
            ));
        }
        None => return Err("AMX tiles (CPUID leaf 0x1D has no tile palette 1)".into()),
    }
    match r.xcr0 {
        Some(x) if x & XCR0_TILE == XCR0_TILE => {}
        Some(x) => {
            return Err(format!(
                "AMX tile state saved by the OS (XCR0 {x:#x} lacks bits 17-18: a kernel older than Linux 5.16, or a hypervisor that hides AMX)"
            ));
        }
        None => return Err("AMX tile state saved by the OS (OSXSAVE is off)".into()),
    }
    permit().map_err(|errno| {
        format!(
            "the AMX tile data permission (Linux refused arch_prctl ARCH_REQ_XCOMP_PERM: {}; Linux 5.16 or later grants it)",
            std::io::Error::from_raw_os_error(errno)
        )
    })
}

/// Whether this process may run tiles of `ty`; the permission is asked once per process.
pub fn usable(ty: TileType) -> Result<(), String> {
    #[cfg(target_arch = "x86_64")]
    {
        use std::sync::OnceLock;
        static READINGS: OnceLock<AmxReadings> = OnceLock::new();
        static PERMIT: OnceLock<Result<(), i32>> = OnceLock::new();
        let readings = READINGS.get_or_init(|| {
            let id = super::x86::identify();
            AmxReadings {
                flags: id.flags,
                xcr0: id.xcr0,
                palette: super::x86::tile_palette(),
            }
        });
        decide(readings, ty, || *PERMIT.get_or_init(request_tile_data))
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = ty;
        Err("Intel AMX (an x86 extension; this is not an x86 CPU)".into())
    }
}

/// Asks Linux for the tile data state for this process (and every thread it starts).
#[cfg(target_arch = "x86_64")]
fn request_tile_data() -> Result<(), i32> {
    // arch/x86/include/uapi/asm/prctl.h: ARCH_REQ_XCOMP_PERM 0x1023; XFEATURE_XTILEDATA 18.
    const ARCH_REQ_XCOMP_PERM: libc::c_long = 0x1023;
    const XFEATURE_XTILEDATA: libc::c_long = 18;
    // SAFETY: arch_prctl with ARCH_REQ_XCOMP_PERM only records a permission for the process;
    // it reads and writes no user memory.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_arch_prctl,
            ARCH_REQ_XCOMP_PERM,
            XFEATURE_XTILEDATA,
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error()
            .raw_os_error()
            .unwrap_or(libc::EINVAL))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flags(s: &str) -> Vec<String> {
        s.split_whitespace().map(str::to_string).collect()
    }

    /// Recorded readings. Sapphire Rapids (shared/hardware/sapphire-rapids-16c.md: a guest
    /// whose flags include amx_tile/amx_bf16/amx_int8) under Linux ≥ 5.16: XCR0 0x602e7 (x87,
    /// SSE, AVX, opmask, ZMM_Hi256, Hi16_ZMM, PKRU, XTILECFG, XTILEDATA) and palette 1 of
    /// 16 rows × 64 bytes. The development guest (a Sapphire Rapids whose hypervisor hides AMX):
    /// no amx flags, XCR0 0xe7 (read here). Zen 4: AVX-512 with VNNI and BF16, no AMX.
    const SPR: &str =
        "avx512f avx512bw avx512_vnni avx512_bf16 avx512_fp16 amx_tile amx_bf16 amx_int8";
    const SPR_GUEST: &str = "avx512f avx512bw avx512_vnni avx512_bf16 avx512_fp16 avx_vnni";
    const ZEN4: &str = "avx512f avx512bw avx512_vnni avx512_bf16";

    fn ok() -> Result<(), i32> {
        Ok(())
    }

    #[test]
    fn a_sapphire_rapids_under_a_recent_kernel_may_use_both_types() {
        let f = flags(SPR);
        let r = AmxReadings {
            flags: f,
            xcr0: Some(0x602e7),
            palette: Some((16, 64)),
        };
        for ty in [TileType::Int8, TileType::Bf16] {
            let mut asked = false;
            let got = decide(&r, ty, || {
                asked = true;
                Ok(())
            });
            assert_eq!(got, Ok(()));
            assert!(asked, "the permission is asked when the CPU and OS allow");
        }
    }

    #[test]
    fn every_missing_piece_is_named_and_the_permission_is_not_asked_for_nothing() {
        let spr = flags(SPR);
        let guest = flags(SPR_GUEST);
        let zen4 = flags(ZEN4);
        let no_bf16 = flags("avx512f amx_tile amx_int8");
        let at = |flags: &Vec<String>, xcr0, palette| AmxReadings {
            flags: flags.clone(),
            xcr0,
            palette,
        };
        let cases = [
            (at(&guest, Some(0xe7), None), TileType::Bf16, "no AMX-TILE"),
            (at(&zen4, Some(0xe7), None), TileType::Int8, "no AMX-TILE"),
            (
                at(&no_bf16, Some(0x602e7), Some((16, 64))),
                TileType::Bf16,
                "AMX-BF16",
            ),
            // An old kernel: the CPU has AMX, the OS does not save the tiles.
            (
                at(&spr, Some(0x2e7), Some((16, 64))),
                TileType::Int8,
                "lacks bits 17-18",
            ),
            (at(&spr, None, Some((16, 64))), TileType::Int8, "OSXSAVE"),
            (
                at(&spr, Some(0x602e7), None),
                TileType::Int8,
                "no tile palette",
            ),
            (
                at(&spr, Some(0x602e7), Some((8, 32))),
                TileType::Int8,
                "8 rows × 32 bytes",
            ),
        ];
        for (r, ty, says) in cases {
            let why = decide(&r, ty, || panic!("asked for a permission that cannot help"))
                .expect_err(says);
            assert!(why.contains(says), "{why:?} should say {says:?}");
        }
    }

    #[test]
    fn a_refused_permission_says_so_with_the_errno() {
        let f = flags(SPR);
        let r = AmxReadings {
            flags: f,
            xcr0: Some(0x602e7),
            palette: Some((16, 64)),
        };
        let why = decide(&r, TileType::Bf16, || Err(libc::EINVAL)).unwrap_err();
        assert!(why.contains("Linux refused"), "{why}");
        assert!(why.contains("Invalid argument"), "{why}");
        assert_eq!(decide(&r, TileType::Bf16, ok), Ok(()));
    }

    /// This machine: the decision agrees with its own CPUID (no AMX flag: refused without a
    /// syscall; AMX flags: the kernel's answer decides).
    #[test]
    fn this_machine_is_decided_from_its_own_readings() {
        let got = usable(TileType::Int8);
        #[cfg(target_arch = "x86_64")]
        {
            let id = super::super::x86::identify();
            if !id.flags.iter().any(|f| f == "amx_tile") {
                assert!(got.unwrap_err().contains("no AMX-TILE"));
            } else {
                eprintln!("AMX on this machine: {got:?}");
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        assert!(got.unwrap_err().contains("not an x86 CPU"));
    }
}
