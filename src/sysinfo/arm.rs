//! aarch64 identification: MIDR fields from /proc/cpuinfo and features from HWCAP.

use super::isa::Isa;
use super::sysfs::proc_field;

pub struct ArmId {
    pub implementer: Option<u32>,
    pub part: Option<u32>,
    pub flags: Vec<String>,
    pub isas: Vec<Isa>,
}

fn hex(text: Option<String>) -> Option<u32> {
    let t = text?;
    u32::from_str_radix(t.trim_start_matches("0x"), 16).ok()
}

pub fn identify(cpuinfo: &str) -> ArmId {
    // HWCAP bits (arch/arm64/include/uapi/asm/hwcap.h): 0 FP, 1 ASIMD, 9 FPHP, 10 ASIMDHP
    // (fp16 arithmetic), 20 ASIMDDP (sdot), 22 SVE; HWCAP2 bit 14 BF16.
    // SAFETY: getauxval reads the process's auxiliary vector and has no preconditions.
    let hwcap = unsafe { libc::getauxval(libc::AT_HWCAP) };
    let mut flags = Vec::new();
    let mut isas = Vec::new();
    if hwcap & 1 != 0 {
        flags.push("fp".to_string());
    }
    // SAFETY: as above.
    let hwcap2 = unsafe { libc::getauxval(libc::AT_HWCAP2) };
    for (bit, name) in [(9, "fphp"), (10, "asimdhp"), (20, "asimddp")] {
        if hwcap & (1 << bit) != 0 {
            flags.push(name.to_string());
        }
    }
    if hwcap2 & (1 << 14) != 0 {
        flags.push("bf16".to_string());
    }
    if hwcap & (1 << 22) != 0 {
        flags.push("sve".to_string());
        isas.push(Isa::Sve);
    }
    if hwcap & 2 != 0 {
        flags.push("asimd".to_string());
        isas.push(Isa::Neon);
    }
    isas.push(Isa::Scalar);
    ArmId {
        implementer: hex(proc_field(cpuinfo, "CPU implementer")),
        part: hex(proc_field(cpuinfo, "CPU part")),
        flags,
        isas,
    }
}
