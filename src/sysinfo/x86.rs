//! x86 identification and instruction-set features: CPUID for what the CPU implements, XCR0 for
//! what the operating system has enabled (an AVX-512 CPU whose kernel does not save the ZMM
//! state cannot run AVX-512 code).

use super::isa::Isa;
use raw_cpuid::{CpuId, Hypervisor};

/// What CPUID says about the processor.
pub struct X86Id {
    pub vendor: String,
    pub brand: Option<String>,
    pub family: u32,
    pub model: u32,
    pub stepping: u32,
    /// CPUID feature names relevant to the kernels, e.g. `avx2`, `fma`, `avx512f`.
    pub flags: Vec<String>,
    /// XCR0 (the OS-enabled state components), when OSXSAVE is set.
    pub xcr0: Option<u64>,
    /// ISAs both the CPU and the OS support, widest first.
    pub isas: Vec<Isa>,
    pub hypervisor: Option<String>,
    /// TSC frequency in Hz given by CPUID leaf 0x15 or the hypervisor's timing leaf.
    pub tsc_hz_cpuid: Option<u64>,
}

/// XCR0 bits: 1 SSE, 2 AVX (YMM upper halves), 5 opmask, 6 ZMM_Hi256, 7 Hi16_ZMM.
const XCR0_YMM: u64 = (1 << 1) | (1 << 2);
const XCR0_ZMM: u64 = XCR0_YMM | (1 << 5) | (1 << 6) | (1 << 7);

fn read_xcr0() -> u64 {
    #[target_feature(enable = "xsave")]
    unsafe fn xgetbv0() -> u64 {
        // SAFETY: only called when CPUID reports OSXSAVE, so XGETBV is enabled (CR4.OSXSAVE).
        unsafe { core::arch::x86_64::_xgetbv(0) }
    }
    // SAFETY: the caller checked OSXSAVE; the xsave target feature only gates XGETBV's encoding.
    unsafe { xgetbv0() }
}

pub fn identify() -> X86Id {
    let cpuid = CpuId::new();
    let vendor = cpuid
        .get_vendor_info()
        .map(|v| v.as_str().to_string())
        .unwrap_or_else(|| "unknown".to_string());
    let brand = cpuid
        .get_processor_brand_string()
        .map(|b| b.as_str().trim().to_string())
        .filter(|b| !b.is_empty());
    let fi = cpuid.get_feature_info();
    let (family, model, stepping) = fi
        .as_ref()
        .map(|f| {
            (
                f.family_id() as u32,
                f.model_id() as u32,
                f.stepping_id() as u32,
            )
        })
        .unwrap_or((0, 0, 0));
    let ext = cpuid.get_extended_feature_info();
    let mut flags = Vec::new();
    let mut add = |name: &str, on: bool| {
        if on {
            flags.push(name.to_string())
        }
    };
    let osxsave = fi.as_ref().is_some_and(|f| f.has_oxsave());
    if let Some(f) = &fi {
        add("sse2", f.has_sse2());
        add("avx", f.has_avx());
        add("fma", f.has_fma());
        add("f16c", f.has_f16c());
        add("osxsave", osxsave);
    }
    if let Some(e) = &ext {
        add("avx2", e.has_avx2());
        add("avx512f", e.has_avx512f());
        add("avx512bw", e.has_avx512bw());
        add("avx512vl", e.has_avx512vl());
        add("avx512_vnni", e.has_avx512vnni());
        add("avx512_bf16", e.has_avx512_bf16());
        add("avx512_fp16", e.has_avx512_fp16());
        add("avx_vnni", e.has_avx_vnni());
        add("amx_tile", e.has_amx_tile());
        add("amx_int8", e.has_amx_int8());
        add("amx_bf16", e.has_amx_bf16());
    }
    let xcr0 = osxsave.then(read_xcr0);
    let has = |name: &str| flags.iter().any(|f| f == name);
    let os = |mask: u64| xcr0.is_some_and(|x| x & mask == mask);
    let mut isas = Vec::new();
    if has("avx512f") && has("avx512bw") && os(XCR0_ZMM) {
        isas.push(Isa::Avx512);
    }
    if has("avx2") && has("fma") && os(XCR0_YMM) {
        isas.push(Isa::Avx2);
    }
    if has("sse2") {
        isas.push(Isa::Sse2);
    }
    isas.push(Isa::Scalar);

    let hv_info = cpuid.get_hypervisor_info();
    let hypervisor = hv_info.as_ref().map(|h| match h.identify() {
        Hypervisor::KVM => "KVM".to_string(),
        Hypervisor::VMware => "VMware".to_string(),
        Hypervisor::Xen => "Xen".to_string(),
        Hypervisor::HyperV => "Hyper-V".to_string(),
        Hypervisor::QEMU => "QEMU (TCG)".to_string(),
        Hypervisor::Bhyve => "bhyve".to_string(),
        Hypervisor::QNX => "QNX".to_string(),
        Hypervisor::ACRN => "ACRN".to_string(),
        Hypervisor::Unknown(..) => "unknown hypervisor".to_string(),
    });
    let tsc_hz_cpuid = cpuid
        .get_tsc_info()
        .and_then(|t| t.tsc_frequency())
        .filter(|hz| *hz > 0)
        .or_else(|| {
            hv_info
                .and_then(|h| h.tsc_frequency())
                .filter(|khz| *khz > 0)
                .map(|khz| khz as u64 * 1000)
        });
    X86Id {
        vendor,
        brand,
        family,
        model,
        stepping,
        flags,
        xcr0,
        isas,
        hypervisor,
        tsc_hz_cpuid,
    }
}

/// Tile palette 1 (CPUID leaf 0x1D, subleaf 1): rows and bytes per row of a tile, where the CPU
/// has the leaf.
pub fn tile_palette() -> Option<(u16, u16)> {
    use core::arch::x86_64::__cpuid_count;
    // CPUID is available on every x86_64 CPU; a leaf above the maximum is not read.
    let max = __cpuid_count(0, 0).eax;
    if max < 0x1D {
        return None;
    }
    let palette = __cpuid_count(0x1D, 1);
    let (row_bytes, rows) = (palette.ebx & 0xffff, palette.ecx & 0xffff);
    (rows > 0 && row_bytes > 0).then_some((rows as u16, row_bytes as u16))
}

/// Reads the time-stamp counter.
pub fn rdtsc() -> u64 {
    // SAFETY: RDTSC is available on every x86_64 CPU and has no memory effects.
    unsafe { core::arch::x86_64::_rdtsc() }
}
