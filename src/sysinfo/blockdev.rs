//! The block device under a file: name, logical block size (the O_DIRECT alignment), whether it
//! rotates, and the bandwidth its link allows (NVMe PCIe speed × width, SATA link speed), from
//! sysfs. A virtio or loop device has no link: that is said, not guessed.

use super::sysfs::read_trimmed;
use serde::Serialize;
use std::path::{Path, PathBuf};

/// What sysfs says about one block device.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BlockDevice {
    pub name: String,
    pub logical_block_bytes: Option<u32>,
    pub rotational: Option<bool>,
    pub model: Option<String>,
    /// The link's bandwidth in bytes per second, with how it was computed.
    pub link_bytes_per_sec: Option<f64>,
    pub link: String,
    /// CPUs that service the device's completion interrupts, busiest first (/proc/interrupts).
    pub irq_cpus: Vec<usize>,
}

/// The interrupt-name prefix of a disk's queues: `virtio1-req` for a virtio disk under
/// .../virtio1/block/vda, `nvme0q` for nvme0n1.
fn irq_prefix(disk: &Path) -> Option<String> {
    let name = disk.file_name()?.to_string_lossy().into_owned();
    if let Some(rest) = name.strip_prefix("nvme") {
        let ctrl: String = rest.chars().take_while(|c| c.is_ascii_digit()).collect();
        return Some(format!("nvme{ctrl}q"));
    }
    disk.components()
        .filter_map(|c| c.as_os_str().to_str())
        .find(|c| c.starts_with("virtio") && c[6..].parse::<u32>().is_ok())
        .map(|v| format!("{v}-req"))
}

/// CPUs by interrupt count for the IRQs whose name starts with `prefix`, in a /proc/interrupts
/// text; CPUs that serviced none are left out.
pub fn irq_cpus(interrupts: &str, prefix: &str) -> Vec<usize> {
    let mut lines = interrupts.lines();
    let cpus = lines.next().map_or(0, |h| h.split_whitespace().count());
    let mut counts = vec![0u64; cpus];
    for line in lines {
        let fields: Vec<&str> = line.split_whitespace().collect();
        if fields.last().is_some_and(|n| n.starts_with(prefix)) {
            for (cpu, f) in fields.iter().skip(1).take(cpus).enumerate() {
                counts[cpu] += f.parse::<u64>().unwrap_or(0);
            }
        }
    }
    let mut order: Vec<usize> = (0..cpus).filter(|c| counts[*c] > 0).collect();
    order.sort_by_key(|c| std::cmp::Reverse(counts[*c]));
    order
}

/// The sysfs directory of device `major:minor`, and of its parent disk for a partition.
fn sysfs_dirs(major: u32, minor: u32) -> Option<(PathBuf, PathBuf)> {
    let dir = std::fs::canonicalize(format!("/sys/dev/block/{major}:{minor}")).ok()?;
    let disk = if dir.join("partition").exists() {
        dir.parent()?.to_path_buf()
    } else {
        dir.clone()
    };
    Some((dir, disk))
}

/// PCIe bandwidth per lane in bytes/s from "8.0 GT/s PCIe": 8b/10b below 8 GT/s, 128b/130b from
/// 8 GT/s (PCIe 3.0–5.0; 6.0's FLIT mode is counted as 242/256).
pub fn pcie_lane_bytes_per_sec(speed: &str) -> Option<f64> {
    let gts: f64 = speed.split_whitespace().next()?.parse().ok()?;
    let encoding = match gts {
        g if g < 8.0 => 8.0 / 10.0,
        g if g < 64.0 => 128.0 / 130.0,
        _ => 242.0 / 256.0,
    };
    Some(gts * 1e9 * encoding / 8.0)
}

/// SATA link bandwidth in bytes/s from "6.0 Gbps" (8b/10b encoding).
pub fn sata_bytes_per_sec(speed: &str) -> Option<f64> {
    let gbps: f64 = speed.split_whitespace().next()?.parse().ok()?;
    Some(gbps * 1e9 * 8.0 / 10.0 / 8.0)
}

fn link(disk: &Path) -> (Option<f64>, String) {
    let name = disk
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    if name.starts_with("nvme") {
        // /sys/block/nvme0n1/device is the controller; its device is the PCI function.
        let pci = disk.join("device/device");
        let speed = read_trimmed(pci.join("current_link_speed"));
        let width =
            read_trimmed(pci.join("current_link_width")).and_then(|w| w.parse::<f64>().ok());
        if let (Some(s), Some(w)) = (speed, width)
            && let Some(lane) = pcie_lane_bytes_per_sec(&s)
        {
            return (Some(lane * w), format!("PCIe {s} × {w} lanes"));
        }
        return (None, "NVMe link speed not in sysfs".into());
    }
    // SATA: the device path runs through ataN; its link is /sys/class/ata_link/linkN.
    if let Some(ata) = disk
        .components()
        .filter_map(|c| c.as_os_str().to_str())
        .find(|c| c.starts_with("ata") && c[3..].parse::<u32>().is_ok())
    {
        let spd = read_trimmed(format!("/sys/class/ata_link/link{}/sata_spd", &ata[3..]));
        if let Some(s) = spd
            .as_deref()
            .and_then(|s| sata_bytes_per_sec(s).map(|b| (b, s.to_string())))
        {
            return (Some(s.0), format!("SATA {}", s.1));
        }
        return (None, "SATA link speed not in sysfs".into());
    }
    let path = disk.to_string_lossy();
    let why = if path.contains("virtio") {
        "a virtio disk has no physical link to bound it"
    } else if path.contains("/virtual/") {
        "a virtual device (loop, zram, device-mapper) has no link"
    } else {
        "no NVMe or SATA link found in sysfs"
    };
    (None, why.into())
}

/// Describes device `major:minor`.
pub fn describe(major: u32, minor: u32) -> Option<BlockDevice> {
    let (dir, disk) = sysfs_dirs(major, minor)?;
    let queue = disk.join("queue");
    let (link_bytes_per_sec, link) = link(&disk);
    Some(BlockDevice {
        name: dir.file_name()?.to_string_lossy().into_owned(),
        logical_block_bytes: read_trimmed(queue.join("logical_block_size"))
            .and_then(|s| s.parse().ok()),
        rotational: read_trimmed(queue.join("rotational")).map(|s| s == "1"),
        model: read_trimmed(disk.join("device/model")),
        link_bytes_per_sec,
        link,
        irq_cpus: irq_prefix(&disk)
            .map(|p| {
                irq_cpus(
                    &std::fs::read_to_string("/proc/interrupts").unwrap_or_default(),
                    &p,
                )
            })
            .unwrap_or_default(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn link_rates() {
        // PCIe 4.0 x4: 16 GT/s × 128/130 / 8 × 4 ≈ 7.88 GB/s.
        let x4 = pcie_lane_bytes_per_sec("16.0 GT/s PCIe").unwrap() * 4.0;
        assert!((x4 / 1e9 - 7.877).abs() < 0.01, "{x4}");
        // PCIe 2.0 x1: 5 GT/s × 8/10 / 8 = 500 MB/s.
        assert_eq!(pcie_lane_bytes_per_sec("5.0 GT/s PCIe"), Some(500e6));
        // SATA 3: 6 Gbit/s × 8/10 / 8 = 600 MB/s.
        assert_eq!(sata_bytes_per_sec("6.0 Gbps"), Some(600e6));
        assert_eq!(sata_bytes_per_sec("<unknown>"), None);
    }

    #[test]
    fn interrupts_pick_the_busy_cpu() {
        let text = "           CPU0       CPU1\n 35:  0  1  PCI-MSIX  virtio1-config\n 36:  0  794864  PCI-MSIX-0000:00:02.0   1-edge      virtio1-req.0\n 39:  2697  0  PCI-MSIX  virtio2-output.0\n";
        assert_eq!(irq_cpus(text, "virtio1-req"), vec![1]);
        assert_eq!(irq_cpus(text, "nvme0q"), Vec::<usize>::new());
        assert_eq!(
            irq_prefix(Path::new(
                "/sys/devices/pci0000:00/0000:00:02.0/virtio1/block/vda"
            ))
            .as_deref(),
            Some("virtio1-req")
        );
        assert_eq!(
            irq_prefix(Path::new(
                "/sys/devices/pci0000:00/0000:00:04.0/nvme/nvme0/nvme0n1"
            ))
            .as_deref(),
            Some("nvme0q")
        );
    }

    #[test]
    fn describes_the_root_disk_when_there_is_one() {
        use std::os::unix::fs::MetadataExt;
        let dev = std::fs::metadata("/").unwrap().dev();
        let (major, minor) = (libc::major(dev), libc::minor(dev));
        match describe(major, minor) {
            Some(d) => {
                assert!(!d.name.is_empty());
                assert!(
                    d.logical_block_bytes
                        .is_none_or(|b| b >= 512 && b.is_power_of_two())
                );
                assert!(d.link_bytes_per_sec.is_some() || !d.link.is_empty());
            }
            None => eprintln!("skipped: / is not on a block device ({major}:{minor})"),
        }
    }
}
