//! Units: parsing of the sizes, durations and counts users type, and their human formatting.
//!
//! Decimal and binary prefixes are kept apart: `1K` and `1KB` are 1000 bytes, `1Ki` and `1KiB`
//! are 1024 bytes, as fio and STREAM users expect to see them stated.

use std::time::Duration;

/// Why a value typed by the user could not be read.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ParseError {
    #[error(
        "'{0}' is not a size; use a number with an optional suffix K, M, G, T (decimal) or Ki, Mi, Gi, Ti (binary), e.g. 4K or 1MiB"
    )]
    Size(String),
    #[error("'{0}' is not a duration; use a number with a unit, e.g. 500ms, 2s or 1m")]
    Duration(String),
    #[error("'{0}' is not a whole number")]
    Count(String),
    #[error("'{0}' is out of range: {1}")]
    Range(String, String),
}

/// Parses a byte size such as `4K` (4000), `4KiB` (4096), `1G`, `512` (bytes).
pub fn parse_size(text: &str) -> Result<u64, ParseError> {
    let t = text.trim();
    let err = || ParseError::Size(text.to_string());
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, suffix) = t.split_at(split);
    let value: f64 = num.parse().map_err(|_| err())?;
    let suffix = suffix.trim();
    let (body, binary) = match suffix
        .strip_suffix('B')
        .or_else(|| suffix.strip_suffix('b'))
    {
        Some(b) => (b, false),
        None => (suffix, false),
    };
    let (body, binary) = match body.strip_suffix('i') {
        Some(b) => (b, true),
        None => (body, binary),
    };
    let power = match body.to_ascii_uppercase().as_str() {
        "" => 0,
        "K" => 1,
        "M" => 2,
        "G" => 3,
        "T" => 4,
        _ => return Err(err()),
    };
    if binary && power == 0 {
        return Err(err());
    }
    let base: f64 = if binary { 1024.0 } else { 1000.0 };
    let bytes = value * base.powi(power);
    if !bytes.is_finite() || bytes < 0.0 || bytes > u64::MAX as f64 || bytes.fract() != 0.0 {
        return Err(err());
    }
    Ok(bytes as u64)
}

/// Parses a size the way fio does: K, M, G, T are binary (4K = 4096), with or without `i`/`B`.
pub fn parse_size_binary(text: &str) -> Result<u64, ParseError> {
    let t = text.trim();
    let body = t.trim_end_matches(['B', 'b']);
    let body = body.strip_suffix('i').unwrap_or(body);
    let binary = match body.chars().last() {
        Some(c) if c.is_ascii_alphabetic() => format!("{body}i"),
        _ => body.to_string(),
    };
    parse_size(&binary).map_err(|_| ParseError::Size(text.to_string()))
}

/// Parses a duration such as `500ms`, `2s`, `1.5s`, `1m`, `100us`; a bare number is seconds.
pub fn parse_duration(text: &str) -> Result<Duration, ParseError> {
    let t = text.trim();
    let err = || ParseError::Duration(text.to_string());
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let value: f64 = num.parse().map_err(|_| err())?;
    let seconds = match unit.trim() {
        "" | "s" => value,
        "ms" => value / 1e3,
        "us" | "µs" => value / 1e6,
        "ns" => value / 1e9,
        "m" | "min" => value * 60.0,
        _ => return Err(err()),
    };
    if !seconds.is_finite() || seconds <= 0.0 || seconds > 86_400.0 {
        return Err(err());
    }
    Ok(Duration::from_secs_f64(seconds))
}

/// Parses a positive whole number bounded by `max`.
pub fn parse_count(text: &str, min: u64, max: u64) -> Result<u64, ParseError> {
    let n: u64 = text
        .trim()
        .parse()
        .map_err(|_| ParseError::Count(text.to_string()))?;
    if n < min || n > max {
        return Err(ParseError::Range(
            text.to_string(),
            format!("must be between {min} and {max}"),
        ));
    }
    Ok(n)
}

/// Formats a byte count with binary prefixes, e.g. `32 KiB`, as sysfs reports caches.
pub fn format_bytes_binary(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut value = bytes as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit < UNITS.len() - 1 && (value / 1024.0).fract() == 0.0 {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 && bytes >= 1 << 20 {
        // Not an exact multiple: show one decimal in the largest fitting unit (below 1 MiB,
        // the exact count, e.g. a 1400-byte datagram).
        let mut v = bytes as f64;
        let mut u = 0;
        while v >= 1024.0 && u < UNITS.len() - 1 {
            v /= 1024.0;
            u += 1;
        }
        return format!("{v:.1} {}", UNITS[u]);
    }
    format!("{value} {}", UNITS[unit])
}

/// Formats a byte count the way it was most likely typed: decimal when it is a whole number of
/// KB/MB/GB (`1 KB`, `10 MB`), binary when a whole number of KiB/MiB/GiB (`4 KiB`), else binary
/// with one decimal.
pub fn format_size(bytes: u64) -> String {
    for (unit, size) in [("GB", 1_000_000_000u64), ("MB", 1_000_000), ("KB", 1000)] {
        if bytes >= size && bytes.is_multiple_of(size) {
            return format!("{} {unit}", bytes / size);
        }
    }
    format_bytes_binary(bytes)
}

/// The units records are stored in: SI base units without a prefix, so that a figure means the
/// same whatever display options the run was made with.
pub mod base {
    /// Operations (FLOP, integer operations) per second.
    pub const OPS: &str = "op/s";
    /// Bytes per second.
    pub const BYTES: &str = "B/s";
    /// Bits per second (network goodput).
    pub const BITS: &str = "bit/s";
    /// Seconds (latency, jitter).
    pub const SECONDS: &str = "s";
}

/// The base unit of a prefixed unit and the factor from one to the other (value in base =
/// value × factor); `None` for units that are already base units ("IOPS", "trans/s", "%").
/// Benchmarks state their figures in the unit natural to them; records convert with this.
pub fn to_base(unit: &str) -> Option<(&'static str, f64)> {
    Some(match unit {
        "GOPS" => (base::OPS, 1e9),
        "GB/s" => (base::BYTES, 1e9),
        "MB/s" => (base::BYTES, 1e6),
        "MiB/s" => (base::BYTES, 1_048_576.0),
        "GiB/s" => (base::BYTES, 1_073_741_824.0),
        "Mbit/s" => (base::BITS, 1e6),
        "Gbit/s" => (base::BITS, 1e9),
        "ns" => (base::SECONDS, 1e-9),
        "us" => (base::SECONDS, 1e-6),
        "ms" => (base::SECONDS, 1e-3),
        _ => return None,
    })
}

/// How figures are shown: the choices of `--mib` and `--gbit`. They change only what exporters
/// print, never what is stored.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Display {
    /// Disk throughput in MiB/s (else MB/s).
    pub mib: bool,
    /// Network goodput in Gbit/s (else Mbit/s).
    pub gbit: bool,
}

/// A change of unit: the unit a value gets and how it converts.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Conversion {
    pub unit: &'static str,
    factor: f64,
    divide: bool,
}

impl Conversion {
    /// The value in the new unit. Factors below one are applied as divisions by their exact
    /// inverse (10⁹ rather than 10⁻⁹, which binary cannot hold); a value converted for display
    /// is rounded to 15 significant digits, so that what was stored as 30 ns prints as 30, not
    /// 30.000000000000004.
    pub fn apply(&self, value: f64) -> f64 {
        let (big, up) = if self.factor >= 1.0 {
            (self.factor, !self.divide)
        } else {
            ((1.0 / self.factor).round(), self.divide)
        };
        let v = if up { value * big } else { value / big };
        if self.divide && v.is_finite() && v != 0.0 {
            format!("{v:.14e}").parse().unwrap_or(v)
        } else {
            v
        }
    }

    /// From `unit` to its base unit ([`to_base`]).
    pub fn to_base(unit: &str) -> Option<Conversion> {
        to_base(unit).map(|(unit, factor)| Conversion {
            unit,
            factor,
            divide: false,
        })
    }
}

impl Display {
    /// From the base unit a figure of `subsystem` is stored in to the unit it is shown in.
    pub fn conversion(&self, subsystem: &str, base_unit: &str) -> Option<Conversion> {
        self.unit(subsystem, base_unit)
            .map(|(unit, factor)| Conversion {
                unit,
                factor,
                divide: true,
            })
    }

    /// The unit a figure of `subsystem` stored in `base_unit` is shown in, and the factor
    /// (shown = stored / factor); `None` for a unit shown as stored.
    pub fn unit(&self, subsystem: &str, base_unit: &str) -> Option<(&'static str, f64)> {
        let shown = match (base_unit, subsystem) {
            (base::OPS, _) => "GOPS",
            (base::BYTES, "disk") if self.mib => "MiB/s",
            (base::BYTES, "disk") => "MB/s",
            (base::BYTES, _) => "GB/s",
            (base::BITS, _) if self.gbit => "Gbit/s",
            (base::BITS, _) => "Mbit/s",
            (base::SECONDS, "cpu" | "mem") => "ns",
            (base::SECONDS, _) => "us",
            _ => return None,
        };
        to_base(shown).map(|(_, factor)| (shown, factor))
    }
}

/// Formats an estimated time: "42 s", "3 min 05 s", "1 h 20 min".
pub fn format_duration(d: Duration) -> String {
    let s = d.as_secs();
    if s >= 3600 {
        format!("{} h {:02} min", s / 3600, (s % 3600) / 60)
    } else if s >= 60 {
        format!("{} min {:02} s", s / 60, s % 60)
    } else {
        format!("{s} s")
    }
}

/// Formats a value with a fixed number of significant digits suited to tables.
pub fn format_sig(value: f64) -> String {
    let a = value.abs();
    if a == 0.0 {
        "0".to_string()
    } else if a >= 1000.0 {
        format!("{value:.0}")
    } else if a >= 100.0 {
        format!("{value:.1}")
    } else if a >= 1.0 {
        format!("{value:.2}")
    } else {
        format!("{value:.3}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_decimal_and_binary() {
        assert_eq!(parse_size("512"), Ok(512));
        assert_eq!(parse_size("4K"), Ok(4000));
        assert_eq!(parse_size("4KB"), Ok(4000));
        assert_eq!(parse_size("4Ki"), Ok(4096));
        assert_eq!(parse_size("4KiB"), Ok(4096));
        assert_eq!(parse_size("1G"), Ok(1_000_000_000));
        assert_eq!(parse_size("1.5M"), Ok(1_500_000));
        assert!(parse_size("abc").is_err());
        assert!(parse_size("4X").is_err());
        assert!(parse_size("").is_err());
        assert!(parse_size("0.5").is_err());
    }

    #[test]
    fn fio_sizes_are_binary() {
        assert_eq!(parse_size_binary("4K"), Ok(4096));
        assert_eq!(parse_size_binary("4k"), Ok(4096));
        assert_eq!(parse_size_binary("4KiB"), Ok(4096));
        assert_eq!(parse_size_binary("16M"), Ok(16 << 20));
        assert_eq!(parse_size_binary("1G"), Ok(1 << 30));
        assert_eq!(parse_size_binary("512"), Ok(512));
        assert!(parse_size_binary("4X").is_err());
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_duration("2s"), Ok(Duration::from_secs(2)));
        assert_eq!(parse_duration("2"), Ok(Duration::from_secs(2)));
        assert_eq!(parse_duration("1m"), Ok(Duration::from_secs(60)));
        assert!(parse_duration("0s").is_err());
        assert!(parse_duration("fast").is_err());
    }

    #[test]
    fn counts_bounded() {
        assert_eq!(parse_count("3", 1, 10), Ok(3));
        assert!(matches!(
            parse_count("0", 1, 10),
            Err(ParseError::Range(..))
        ));
        assert!(matches!(parse_count("x", 1, 10), Err(ParseError::Count(_))));
    }

    #[test]
    fn binary_formatting() {
        assert_eq!(format_bytes_binary(32 * 1024), "32 KiB");
        assert_eq!(format_bytes_binary(32 * 1024 * 1024), "32 MiB");
        assert_eq!(format_bytes_binary(100), "100 B");
        assert_eq!(format_bytes_binary(1536), "1536 B");
        assert_eq!(format_bytes_binary(1400), "1400 B");
        assert_eq!(format_bytes_binary(1_500_000), "1.4 MiB");
    }

    #[test]
    fn sizes_as_typed() {
        assert_eq!(format_size(1000), "1 KB");
        assert_eq!(format_size(10_000_000), "10 MB");
        assert_eq!(format_size(4096), "4 KiB");
        assert_eq!(format_size(1 << 30), "1 GiB");
        assert_eq!(format_size(64), "64 B");
    }

    #[test]
    fn significant_digits() {
        assert_eq!(format_sig(16.0), "16.00");
        assert_eq!(format_sig(57.644), "57.64");
        assert_eq!(format_sig(116.33), "116.3");
        assert_eq!(format_sig(1234.4), "1234");
        assert_eq!(format_sig(0.1874), "0.187");
        assert_eq!(format_sig(f64::NAN), "NaN");
    }
    #[test]
    fn stored_units_are_base_units_and_display_converts_back() {
        assert_eq!(to_base("Gbit/s"), Some((base::BITS, 1e9)));
        assert_eq!(to_base("us"), Some((base::SECONDS, 1e-6)));
        assert_eq!(to_base("IOPS"), None);
        let plain = Display::default();
        let both = Display {
            mib: true,
            gbit: true,
        };
        assert_eq!(plain.unit("net", base::BITS), Some(("Mbit/s", 1e6)));
        assert_eq!(both.unit("net", base::BITS), Some(("Gbit/s", 1e9)));
        assert_eq!(plain.unit("disk", base::BYTES), Some(("MB/s", 1e6)));
        assert_eq!(both.unit("disk", base::BYTES), Some(("MiB/s", 1_048_576.0)));
        assert_eq!(both.unit("mem", base::BYTES), Some(("GB/s", 1e9)));
        assert_eq!(plain.unit("cpu", base::OPS), Some(("GOPS", 1e9)));
        assert_eq!(plain.unit("mem", base::SECONDS), Some(("ns", 1e-9)));
        assert_eq!(plain.unit("disk", base::SECONDS), Some(("us", 1e-6)));
        assert_eq!(plain.unit("disk", "IOPS"), None);
        // Stored and shown again: the number the benchmark stated.
        for (unit, v) in [("ns", 30.0), ("us", 0.1), ("GB/s", 41.3), ("MiB/s", 7.7)] {
            let stored = Conversion::to_base(unit).unwrap().apply(v);
            let sub = if matches!(unit, "us" | "MiB/s") {
                "disk"
            } else {
                "mem"
            };
            let d = if unit == "MiB/s" { both } else { plain };
            let shown = d.conversion(sub, to_base(unit).unwrap().0).unwrap();
            assert_eq!((shown.unit, shown.apply(stored)), (unit, v));
        }
        // Every unit shown converts to the base it is shown for.
        for d in [plain, both] {
            for sub in ["cpu", "mem", "disk", "net"] {
                for b in [base::OPS, base::BYTES, base::BITS, base::SECONDS] {
                    let (shown, f) = d.unit(sub, b).unwrap();
                    assert_eq!(to_base(shown), Some((b, f)));
                }
            }
        }
    }
}
