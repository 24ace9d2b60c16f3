use super::*;
use crate::sysinfo::Fact;
use crate::sysinfo::smbios::MemoryDevice;

#[test]
fn dimms_give_channels_times_rate() {
    let dimm = |r| MemoryDevice {
        locator: "A".into(),
        size_bytes: 1 << 34,
        data_width_bits: 64,
        speed_mts: Some(4800),
        configured_mts: r,
    };
    let devs = Fact::known(vec![dimm(Some(4400)); 12], Source::Detected);
    let p = mem_peak(&devs, &Default::default()).unwrap();
    assert!((p.value - 12.0 * 4400.0 * 8.0 / 1000.0).abs() < 1e-9);
    assert_eq!(p.inputs["dimms"].value, 12.0);
}

#[test]
fn unknown_without_smbios_unless_user_says() {
    let none: Fact<Vec<MemoryDevice>> = Fact::unknown("no SMBIOS table");
    let err = mem_peak(&none, &Default::default()).unwrap_err();
    assert!(
        err.contains("no SMBIOS table") && err.contains("--mem-peak-gbs"),
        "{err}"
    );
    let user = MemPeakOverrides {
        channels: Some(2),
        mts: Some(4800.0),
        gbs: None,
        ..Default::default()
    };
    assert_eq!(mem_peak(&none, &user).unwrap().value, 76.8);
    let user = MemPeakOverrides {
        gbs: Some(50.0),
        ..Default::default()
    };
    assert_eq!(mem_peak(&none, &user).unwrap().value, 50.0);
}

#[test]
fn tcp_and_udp_shares_at_mtu_1500() {
    let p = goodput(
        (10_000.0, Source::User),
        1500,
        true,
        false,
        131072,
        Unit::MbitPerSec,
        1e6,
    );
    assert!((p.value - 10_000.0 * 1448.0 / 1538.0).abs() < 1e-6);
    // 1400 B fits one packet: 1400 / (1408 + 58).
    let u = goodput(
        (1000.0, Source::User),
        1500,
        false,
        false,
        1400,
        Unit::MbitPerSec,
        1e6,
    );
    assert!(
        (u.value - 1000.0 * 1400.0 / 1466.0).abs() < 1e-9,
        "{}",
        u.value
    );
    // 8000 B: 8008 bytes in ceil(8008 / 1480) = 6 fragments.
    let f = goodput(
        (1000.0, Source::User),
        1500,
        false,
        false,
        8000,
        Unit::GbitPerSec,
        1e9,
    );
    assert!((f.value - 8000.0 / (8008.0 + 6.0 * 58.0)).abs() < 1e-9);
    assert!(f.formula.contains("6 ×"));
}

#[test]
fn disk_peaks_mix_the_rated_figures_and_bound_them_by_the_link() {
    let rated = DiskPeaks {
        read_mbps: Some(3000.0),
        write_mbps: Some(1000.0),
        read_iops: Some(500_000.0),
        write_iops: None,
        ..Default::default()
    };
    // 70 % of the bytes read: 1 / (0.7 / 3000 + 0.3 / 1000).
    let p = disk_throughput(&rated, 0.7, None, "x").unwrap();
    assert!((p.value - 1.0 / (0.7 / 3000.0 + 0.3 / 1000.0)).abs() < 1e-9);
    let bound = disk_throughput(&rated, 1.0, Some((2000.0, "PCIe".into())), "x").unwrap();
    assert_eq!(
        (bound.value, bound.formula.as_str()),
        (2000.0, "min(rated, link)")
    );
    let unknown = disk_throughput(&DiskPeaks::default(), 1.0, None, "vda has no link").unwrap_err();
    assert!(unknown.contains("vda has no link") && unknown.contains("--disk-peak-read-mbps"));
    // 4 KiB reads: the rated IOPS (500k) are below 3000 MB/s ÷ 4 KiB (732k).
    let iops = disk_iops(&rated, 1.0, 4096, None, true, 1).unwrap();
    assert_eq!(iops.value, 500_000.0);
    assert_eq!(iops.formula, "min(rated, bandwidth / block)");
    // 1 MiB reads: the bandwidth bounds them, 3000 MB/s ÷ 1 MiB.
    let big = disk_iops(&rated, 1.0, 1 << 20, None, true, 1).unwrap();
    assert!((big.value - 3e9 / (1 << 20) as f64).abs() < 1e-6, "{big:?}");
    // Writes with no rated write IOPS: the rated write bandwidth alone (1000 MB/s).
    let w = disk_iops(&rated, 0.0, 4096, None, true, 1).unwrap();
    assert!((w.value - 1e9 / 4096.0).abs() < 1e-6);
    // Nothing known: unknown, saying what to give.
    let none = disk_iops(&DiskPeaks::default(), 0.5, 4096, None, true, 1).unwrap_err();
    assert!(none.contains("--rpm and --seek-ms"), "{none}");
    // The link alone bounds it too.
    let link = disk_iops(
        &DiskPeaks::default(),
        1.0,
        4096,
        Some((400.0, "SATA".into())),
        false,
        1,
    )
    .unwrap();
    assert!((link.value - 400e6 / 4096.0).abs() < 1e-6);
}

/// A rotating disk: random I/O waits for a seek and half a rotation (7200 rpm, 8.5 ms:
/// 12.67 ms, 79 IOPS); sequential I/O neither seeks nor waits. A rated access latency
/// takes the place of the model; the transfer adds to it where the bandwidth is known.
#[test]
fn a_rotating_disk_and_a_rated_access_latency() {
    let hdd = DiskPeaks {
        rpm: Some(7200.0),
        seek_ms: Some(8.5),
        ..Default::default()
    };
    let iops = disk_iops(&hdd, 1.0, 4096, None, true, 1).unwrap();
    assert!(
        (iops.value - 1e3 / (8.5 + 60e3 / 7200.0 / 2.0)).abs() < 1e-9,
        "{iops:?}"
    );
    assert!(
        disk_iops(&hdd, 1.0, 4096, None, false, 1).is_err(),
        "sequential: no model"
    );
    let lat = disk_latency(&hdd, 1.0, 4096, None, true).unwrap();
    assert!(
        (lat.value - (8500.0 + 60e6 / 7200.0 / 2.0)).abs() < 1e-6,
        "{lat:?}"
    );
    assert!(lat.formula.contains("not counted"));
    let seq = disk_latency(&hdd, 1.0, 1 << 20, Some((200.0, "SATA".into())), false).unwrap();
    // No access time, the transfer of 1 MiB at 200 MB/s.
    assert!(
        (seq.value - (1 << 20) as f64 / 200.0).abs() < 1e-6,
        "{seq:?}"
    );
    let ssd = DiskPeaks {
        latency_us: Some(80.0),
        ..Default::default()
    };
    assert_eq!(
        disk_latency(&ssd, 1.0, 4096, None, true).unwrap().value,
        80.0
    );
    assert_eq!(
        disk_iops(&ssd, 1.0, 4096, None, true, 1).unwrap().value,
        12_500.0
    );
    // n I/Os in flight: n / access (Little's law), under the rated IOPS and bandwidth.
    let queued = DiskPeaks {
        read_iops: Some(93_000.0),
        latency_us: Some(500.0),
        ..Default::default()
    };
    let qd32 = disk_iops(&queued, 1.0, 1024, None, true, 32).unwrap();
    assert_eq!(qd32.value, 64_000.0);
    assert_eq!(
        qd32.formula,
        "min(rated, n / access), n = threads × queue depth (Little's law)"
    );
    assert_eq!(qd32.inputs["n"].value, 32.0);
    assert_eq!(
        disk_iops(&queued, 1.0, 1024, None, true, 1).unwrap().value,
        2000.0
    );
    assert_eq!(
        disk_iops(&queued, 1.0, 1024, None, true, 64).unwrap().value,
        93_000.0
    );
    // A rotating disk at QD 32: 32 / (seek + ½ rotation), with why a queue can beat it.
    let hdd32 = disk_iops(&hdd, 1.0, 4096, None, true, 32).unwrap();
    assert!((hdd32.value - 32e3 / (8.5 + 60e3 / 7200.0 / 2.0)).abs() < 1e-9);
    assert!(hdd32.formula.contains("NCQ/TCQ") && hdd32.formula.contains("reorders"));
    assert!(
        disk_latency(&DiskPeaks::default(), 1.0, 4096, None, true)
            .unwrap_err()
            .contains("--disk-latency-us")
    );
}

/// Memory's floors: a cache level's cycles ÷ the clock (Zen 4: L1 4, L2 14 cycles), none
/// for a last level the table cannot vouch for, memory's from the user only.
#[test]
fn memory_latency_floors() {
    let zen4 = super::super::uarch::lookup("zen4").unwrap();
    let l1 = cache_latency(1, Some(zen4), Ok(4.0)).unwrap();
    assert_eq!((l1.value, l1.unit.name()), (1.0, "ns"));
    assert_eq!(cache_latency(2, Some(zen4), Ok(3.5)).unwrap().value, 4.0);
    assert!(
        cache_latency(3, Some(zen4), Ok(3.5))
            .unwrap_err()
            .contains("L3")
    );
    assert!(cache_latency(1, None, Ok(3.5)).is_err());
    assert!(
        cache_latency(1, Some(zen4), Err("probes disagree".into()))
            .unwrap_err()
            .starts_with(CLOCK_UNKNOWN)
    );
    assert!(
        memory_latency(&MemPeakOverrides::default())
            .unwrap_err()
            .contains("--mem-latency-ns")
    );
    let rated = |latency_ns, cl| MemPeakOverrides {
        latency_ns,
        cl,
        mts: Some(2133.0),
        ..Default::default()
    };
    assert_eq!(
        memory_latency(&rated(Some(80.0), None)).unwrap().value,
        80.0
    );
    // The reports' DDR4-2133 CL15: 15 × 2000 / 2133 = 14.06 ns.
    let cas = memory_latency(&rated(None, Some(15.0))).unwrap();
    assert!((cas.value - 14.065).abs() < 1e-3, "{cas:?}");
    assert_eq!(cas.formula, "CL × 2000 / transfer_rate");
}

/// A round trip's floor: the message's frames serialised both ways and the propagation
/// twice (a 1-byte TCP ping over 10 Gbit/s, MTU 1500: 1 + 20 + 32 + 38 = 91 bytes, 72.8 ns
/// each way); unknown without the propagation.
#[test]
fn round_trip_floor() {
    let link = (10_000.0, Source::User);
    let p = round_trip(link, 1500, true, false, 1, Some(5.0)).unwrap();
    assert!(
        (p.value - 2.0 * (91.0 * 8.0 / 1e10 * 1e6 + 5.0)).abs() < 1e-9,
        "{p:?}"
    );
    // A 3000-byte TCP message: three segments of at most 1448 bytes.
    let big = round_trip(link, 1500, true, false, 3000, Some(0.0)).unwrap();
    assert_eq!(big.inputs["wire_bytes"].value, 3000.0 + 3.0 * 90.0);
    assert!(round_trip(link, 1500, false, false, 64, None).is_err());
}
