//! How many 512-bit FMA units a Skylake-SP/Cascade Lake core has. Xeon Platinum and Gold 6xxx
//! have two, Silver, Bronze and most Gold 5xxx one; CPUID does not say, and a hypervisor may
//! mask the brand string that does. So it is measured: the rate of independent `vfmadd213pd zmm`
//! (throughput) divided by the rate of a dependent chain of the same instruction (one per
//! latency) gives FMAs per cycle without knowing the clock — both run at the same AVX-512
//! frequency licence, sampled in turn.

/// The units a measured `per_cycle` shows: 1 near 1, 2 near 2, otherwise unknown with why.
pub fn decide(per_cycle: f64) -> Result<u32, String> {
    if (0.85..=1.2).contains(&per_cycle) {
        Ok(1)
    } else if (1.7..=2.2).contains(&per_cycle) {
        Ok(2)
    } else {
        Err(format!(
            "{per_cycle:.2} zmm FMAs per cycle measured, neither about 1 nor about 2"
        ))
    }
}

/// 512-bit FMA instructions per cycle on the calling thread, with `fma_latency` the chain's
/// latency in cycles; `None` without AVX-512 or on another architecture.
pub fn measure(fma_latency: f64) -> Option<f64> {
    #[cfg(target_arch = "x86_64")]
    {
        if !std::is_x86_feature_detected!("avx512f") {
            return None;
        }
        let chain = super::clock::chain(super::clock::Probe::Fma { width_bits: 512 })?;
        let best = |run: &dyn Fn(u64), iters: u64| {
            (0..10)
                .map(|_| {
                    let t = std::time::Instant::now();
                    run(iters);
                    iters as f64 / t.elapsed().as_secs_f64()
                })
                .fold(0.0, f64::max)
        };
        // SAFETY: AVX-512F was detected just above.
        let throughput = |n: u64| unsafe { throughput_zmm(n) };
        // Warm the AVX-512 unit up (its upper half is powered on demand), then sample in turn.
        throughput(2_000_000);
        let mut per_cycle: f64 = 0.0;
        for _ in 0..3 {
            let t = best(&throughput, 200_000) * THROUGHPUT_FMAS as f64;
            let c = best(&|n| chain(n), 3_000) * super::clock::CHAIN_LENGTH as f64;
            per_cycle = per_cycle.max(t / (c * fma_latency));
        }
        Some(per_cycle)
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = fma_latency;
        None
    }
}

/// Independent FMAs per loop pass of [`throughput_zmm`].
#[cfg(target_arch = "x86_64")]
const THROUGHPUT_FMAS: u64 = 12;

/// Twelve independent zmm FMA chains (latency 4 × 2 ports needs 8 in flight).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn throughput_zmm(iterations: u64) {
    // SAFETY: register-only arithmetic and a counted loop; the vector registers it writes are
    // caller-saved and declared by clobber_abi("C").
    unsafe {
        core::arch::asm!(
            "vmovq xmm12, rsi",
            "vmovq xmm13, rdx",
            "vbroadcastsd zmm12, xmm12",
            "vbroadcastsd zmm13, xmm13",
            "vmovapd zmm0, zmm13", "vmovapd zmm1, zmm13", "vmovapd zmm2, zmm13",
            "vmovapd zmm3, zmm13", "vmovapd zmm4, zmm13", "vmovapd zmm5, zmm13",
            "vmovapd zmm6, zmm13", "vmovapd zmm7, zmm13", "vmovapd zmm8, zmm13",
            "vmovapd zmm9, zmm13", "vmovapd zmm10, zmm13", "vmovapd zmm11, zmm13",
            "2:",
            "vfmadd213pd zmm0, zmm12, zmm13", "vfmadd213pd zmm1, zmm12, zmm13",
            "vfmadd213pd zmm2, zmm12, zmm13", "vfmadd213pd zmm3, zmm12, zmm13",
            "vfmadd213pd zmm4, zmm12, zmm13", "vfmadd213pd zmm5, zmm12, zmm13",
            "vfmadd213pd zmm6, zmm12, zmm13", "vfmadd213pd zmm7, zmm12, zmm13",
            "vfmadd213pd zmm8, zmm12, zmm13", "vfmadd213pd zmm9, zmm12, zmm13",
            "vfmadd213pd zmm10, zmm12, zmm13", "vfmadd213pd zmm11, zmm12, zmm13",
            "dec rdi",
            "jnz 2b",
            "vzeroupper",
            in("rsi") (1.0f64 - 1e-6).to_bits(),
            in("rdx") 1e-6f64.to_bits(),
            inout("rdi") iterations.max(1) => _,
            clobber_abi("C"),
            options(nomem, nostack),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_or_two_units_or_unknown() {
        assert_eq!(decide(0.98), Ok(1));
        assert_eq!(decide(1.93), Ok(2));
        assert!(decide(1.45).unwrap_err().contains("1.45"));
        assert!(decide(0.3).is_err());
    }

    /// On an AVX-512 machine the measurement gives a figure near a whole number of units (this
    /// VM's Zen 4 runs one 512-bit FMA per cycle, its Zen 5 two); the assertion is loose, since
    /// the machine is shared.
    #[test]
    fn measures_this_machine() {
        match measure(4.0) {
            Some(per_cycle) => {
                eprintln!("zmm FMAs per cycle here: {per_cycle:.3}");
                assert!((0.5..3.0).contains(&per_cycle), "{per_cycle}");
            }
            None => eprintln!("SKIPPED: no AVX-512 here"),
        }
    }
}
