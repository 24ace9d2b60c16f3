//! SMBIOS memory devices (type 17) read from the raw table the kernel exports at
//! /sys/firmware/dmi/tables/DMI (no dmidecode needed). Offsets follow DMTF DSP0134 (SMBIOS 3.x),
//! §7.18 "Memory Device (Type 17)".

use serde::{Deserialize, Serialize};

/// One populated memory device (DIMM).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MemoryDevice {
    pub locator: String,
    pub size_bytes: u64,
    /// Data width in bits (64 for a DDR4/DDR5 DIMM, ECC bits excluded).
    pub data_width_bits: u32,
    /// Maximum rated speed, MT/s.
    pub speed_mts: Option<u32>,
    /// Speed the memory controller runs it at, MT/s (SMBIOS 2.7+).
    pub configured_mts: Option<u32>,
}

impl MemoryDevice {
    /// The transfer rate it runs at: the configured speed when given, else the rated one.
    pub fn rate_mts(&self) -> Option<u32> {
        self.configured_mts.or(self.speed_mts)
    }
}

pub const DMI_TABLE: &str = "/sys/firmware/dmi/tables/DMI";

fn word(b: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_le_bytes([*b.get(at)?, *b.get(at + 1)?]))
}

fn dword(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes([
        *b.get(at)?,
        *b.get(at + 1)?,
        *b.get(at + 2)?,
        *b.get(at + 3)?,
    ]))
}

/// Parses the type 17 structures of a raw SMBIOS table; empty slots are left out.
pub fn memory_devices(table: &[u8]) -> Vec<MemoryDevice> {
    let mut out = Vec::new();
    let mut at = 0;
    while at + 4 <= table.len() {
        let (kind, len) = (table[at], table[at + 1] as usize);
        if len < 4 || at + len > table.len() {
            break;
        }
        let formatted = &table[at..at + len];
        // Strings follow the formatted area, each NUL-terminated, the set ending in a double NUL.
        let mut end = at + len;
        while end + 1 < table.len() && !(table[end] == 0 && table[end + 1] == 0) {
            end += 1;
        }
        let strings: Vec<&[u8]> = table[at + len..end.min(table.len())]
            .split(|b| *b == 0)
            .collect();
        let string = |index: u8| -> String {
            match index {
                0 => String::new(),
                i => strings
                    .get(i as usize - 1)
                    .map(|s| String::from_utf8_lossy(s).trim().to_string())
                    .unwrap_or_default(),
            }
        };
        if kind == 17 {
            let size = word(formatted, 0x0C).unwrap_or(0);
            let size_bytes = match size {
                0 | 0xFFFF => 0,
                0x7FFF => dword(formatted, 0x1C).map_or(0, |mb| (mb & 0x7FFF_FFFF) as u64) << 20,
                s if s & 0x8000 != 0 => ((s & 0x7FFF) as u64) << 10,
                s => (s as u64) << 20,
            };
            let speed = |off: usize| {
                word(formatted, off)
                    .filter(|s| *s != 0 && *s != 0xFFFF)
                    .map(u32::from)
            };
            if size_bytes > 0 {
                out.push(MemoryDevice {
                    locator: formatted.get(0x10).map(|i| string(*i)).unwrap_or_default(),
                    size_bytes,
                    data_width_bits: word(formatted, 0x0A)
                        .filter(|w| *w != 0 && *w != 0xFFFF)
                        .map_or(64, u32::from),
                    speed_mts: speed(0x15),
                    configured_mts: speed(0x20),
                });
            }
        }
        if kind == 127 {
            break;
        }
        at = end + 2;
    }
    out
}

#[cfg(test)]
pub mod tests {
    use super::*;

    /// A type 17 structure as firmware writes it (SMBIOS 3.2 layout, 0x28 bytes formatted).
    /// A type 17 structure; sizes of 32 GiB and more go to the extended size field.
    pub fn type17(size_mb: u32, speed: u16, configured: u16, locator: &str) -> Vec<u8> {
        let mut s = vec![0u8; 0x28];
        s[0] = 17;
        s[1] = 0x28;
        s[0x08..0x0A].copy_from_slice(&72u16.to_le_bytes());
        s[0x0A..0x0C].copy_from_slice(&64u16.to_le_bytes());
        if size_mb >= 0x7FFF {
            s[0x0C..0x0E].copy_from_slice(&0x7FFFu16.to_le_bytes());
            s[0x1C..0x20].copy_from_slice(&size_mb.to_le_bytes());
        } else {
            s[0x0C..0x0E].copy_from_slice(&(size_mb as u16).to_le_bytes());
        }
        s[0x10] = 1;
        s[0x12] = 0x22; // DDR5
        s[0x15..0x17].copy_from_slice(&speed.to_le_bytes());
        s[0x20..0x22].copy_from_slice(&configured.to_le_bytes());
        s.extend_from_slice(locator.as_bytes());
        s.extend_from_slice(&[0, 0]);
        s
    }

    #[test]
    fn parses_populated_dimms_and_skips_empty_slots() {
        let mut table = Vec::new();
        table.extend(type17(16384, 4800, 4400, "DIMM_A1"));
        table.extend(type17(0, 0, 0, "DIMM_A2")); // empty slot
        table.extend(type17(65536, 4800, 0, "DIMM_B1")); // 64 GiB: extended size
        table.extend([127, 4, 0, 0, 0, 0]);
        let devs = memory_devices(&table);
        assert_eq!(devs.len(), 2);
        assert_eq!(devs[0].locator, "DIMM_A1");
        assert_eq!(devs[0].size_bytes, 16 << 30);
        assert_eq!(devs[0].rate_mts(), Some(4400));
        assert_eq!(devs[0].data_width_bits, 64);
        assert_eq!(devs[1].locator, "DIMM_B1");
        assert_eq!(devs[1].size_bytes, 64 << 30);
        assert_eq!(
            devs[1].rate_mts(),
            Some(4800),
            "no configured speed: the rated one"
        );
    }

    #[test]
    fn survives_garbage() {
        assert!(memory_devices(&[]).is_empty());
        assert!(memory_devices(&[17, 200, 0]).is_empty());
        assert!(memory_devices(&[17, 0x28]).is_empty());
        let mut t = type17(1024, 3200, 0, "X");
        t.truncate(30);
        assert!(memory_devices(&t).is_empty());
    }
}
