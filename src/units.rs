//! Units: parsing of the sizes, durations and counts users type, and their human formatting.
//!
//! Decimal and binary prefixes are kept apart as fio keeps them: a size's bare prefix is binary
//! (`1K` = `1Ki` = `1KiB` = 1024 bytes) and one with `B` alone decimal (`1KB` = `1kB` = 1000
//! bytes); counts (`--total-ops 1G`) are decimal.

use crate::ids::{Subsystem, Unit};
use std::time::Duration;

/// Why a value typed by the user could not be read.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ParseError {
    #[error(
        "'{0}' is not a size; use a number with an optional suffix K, M, G, T or KiB, MiB, GiB, TiB (binary: 4K = 4KiB = 4096 bytes) or KB, MB, GB, TB (decimal: 4KB = 4000 bytes), e.g. 4K or 1MiB"
    )]
    Size(String),
    #[error("'{0}' is not a duration; use a number with a unit, e.g. 500ms, 2s or 1m")]
    Duration(String),
    #[error("'{0}' is not a whole number")]
    Count(String),
    #[error("'{0}' is out of range: {1}")]
    Range(String, String),
}

/// The largest size: what a u64 counts.
const SIZE_RANGE: &str = "the largest size is 18446744073709551615 bytes (16 EiB)";

/// Why a decimal number could not be scaled.
enum Scale {
    /// Not digits with at most one point.
    NotANumber,
    /// More than u128 holds.
    TooLarge,
}

/// `num × factor` computed exactly, where `num` is a decimal number as typed (digits with at
/// most one point: `12`, `1.5`, `.5`, `2.`): the whole part of the product and what is left,
/// as `remainder / denominator`. Only the first 24 digits after the point count; one beyond
/// them is a remainder of at least 1 (so that a size is never rounded into a whole number).
fn scaled(num: &str, factor: u128) -> Result<(u128, u128, u128), Scale> {
    let (int, frac) = num.split_once('.').unwrap_or((num, ""));
    let digits = |t: &str| t.bytes().all(|b| b.is_ascii_digit());
    if (int.is_empty() && frac.is_empty()) || !digits(int) || !digits(frac) {
        return Err(Scale::NotANumber);
    }
    let int = int.trim_start_matches('0');
    let whole = if int.is_empty() {
        0
    } else {
        int.parse::<u128>()
            .ok()
            .and_then(|i| i.checked_mul(factor))
            .ok_or(Scale::TooLarge)?
    };
    let frac = frac.trim_end_matches('0');
    const MAX_FRAC: usize = 24;
    let (kept, beyond) = if frac.len() > MAX_FRAC {
        (&frac[..MAX_FRAC], true)
    } else {
        (frac, false)
    };
    if kept.is_empty() {
        return Ok((whole, 0, 1));
    }
    // At most 10^24 × factor (≤ 60 × 10^9 or 1024^4): far below u128::MAX.
    let den = 10u128.pow(kept.len() as u32);
    let part = kept.parse::<u128>().map_err(|_| Scale::NotANumber)? * factor;
    let whole = whole.checked_add(part / den).ok_or(Scale::TooLarge)?;
    let rem = part % den;
    Ok((whole, if beyond { rem.max(1) } else { rem }, den))
}

/// Splits what the user typed into its number and its unit (spaces between them allowed).
fn number_and_unit(t: &str) -> (&str, &str) {
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    (num, unit.trim())
}

/// Parses a byte size, one grammar for every option (fio's, as the issue tracker settled it):
/// a bare prefix is binary — `4k` = `4K` = 4096, `1M` = 2^20, `1G`, `1T` — and so is one with
/// `i` (`4Ki`, `4KiB`); a prefix with `B` alone is decimal (`4kB` = `4KB` = 4000, `10MB` =
/// 10^7). `512` is bytes; `1.5M` is exact. A size that is not a whole number of bytes is
/// refused, and one beyond 2^64 − 1 bytes is out of range (never wrapped or saturated).
pub const SIZE_GRAMMAR: &str = "4k = 4K = 4KiB = 4096 bytes, 4kB = 4KB = 4000; M, G, T likewise";

pub fn parse_size(text: &str) -> Result<u64, ParseError> {
    parse_scaled(text, true)
}

/// Parses a count of things other than bytes (`--total-ops 1G`): the prefixes are decimal
/// (`1G` = 10^9, as a count is said) unless written with `i` (`1Gi` = 2^30).
pub fn parse_si_count(text: &str) -> Result<u64, ParseError> {
    parse_scaled(text, false)
}

/// A number with an optional prefix (K, M, G, T in either case) and `i`/`B`; `bare_binary`:
/// whether a prefix with neither is binary.
fn parse_scaled(text: &str, bare_binary: bool) -> Result<u64, ParseError> {
    let err = || ParseError::Size(text.to_string());
    let (num, suffix) = number_and_unit(text.trim());
    let (body, has_b) = match suffix
        .strip_suffix('B')
        .or_else(|| suffix.strip_suffix('b'))
    {
        Some(b) => (b, true),
        None => (suffix, false),
    };
    let (body, has_i) = match body.strip_suffix('i') {
        Some(b) => (b, true),
        None => (body, false),
    };
    let power = match body.to_ascii_uppercase().as_str() {
        "" if !has_i => 0,
        "K" => 1,
        "M" => 2,
        "G" => 3,
        "T" => 4,
        _ => return Err(err()),
    };
    let binary = has_i || (!has_b && bare_binary);
    let base: u128 = if binary { 1024 } else { 1000 };
    match scaled(num, base.pow(power)) {
        Err(Scale::NotANumber) => Err(err()),
        Ok((_, rem, _)) if rem != 0 => Err(err()),
        Ok((bytes, _, _)) if bytes <= u128::from(u64::MAX) => Ok(bytes as u64),
        Ok(_) | Err(Scale::TooLarge) => Err(ParseError::Range(text.to_string(), SIZE_RANGE.into())),
    }
}

/// The longest duration [`parse_duration`] takes.
pub const MAX_DURATION: Duration = Duration::from_secs(86_400);

/// Parses a duration such as `500ms`, `2s`, `1.5s`, `1m`, `100us`, `50ns`; a bare number is
/// seconds. Computed exactly in nanoseconds (a finer fraction is rounded to the nearest); at
/// least 1 ns and at most 24 h ([`parse_duration_within`] for another bound).
pub fn parse_duration(text: &str) -> Result<Duration, ParseError> {
    parse_duration_within(text, MAX_DURATION, "24 h")
}

/// A duration as a command line gives it, exactly: in the largest unit it is a whole number of
/// ("2s", "1250ms", "40us", "7ns").
pub fn duration_arg(d: Duration) -> String {
    let ns = d.as_nanos();
    match ns {
        0 => "0s".into(),
        n if n % 1_000_000_000 == 0 => format!("{}s", n / 1_000_000_000),
        n if n % 1_000_000 == 0 => format!("{}ms", n / 1_000_000),
        n if n % 1_000 == 0 => format!("{}us", n / 1_000),
        n => format!("{n}ns"),
    }
}

/// [`parse_duration`] bounded by `max`, which `max_text` says in the error.
pub fn parse_duration_within(
    text: &str,
    max: Duration,
    max_text: &str,
) -> Result<Duration, ParseError> {
    let err = || ParseError::Duration(text.to_string());
    let range = |why: String| ParseError::Range(text.to_string(), why);
    let (num, unit) = number_and_unit(text.trim());
    let ns_per_unit: u128 = match unit {
        "" | "s" => 1_000_000_000,
        "ms" => 1_000_000,
        "us" | "µs" => 1_000,
        "ns" => 1,
        "m" | "min" => 60_000_000_000,
        "h" => 3_600_000_000_000,
        _ => return Err(err()),
    };
    let ns = match scaled(num, ns_per_unit) {
        Err(Scale::NotANumber) => return Err(err()),
        Err(Scale::TooLarge) => return Err(range(format!("at most {max_text}"))),
        Ok((whole, rem, den)) => whole + u128::from(rem >= den - rem),
    };
    if ns == 0 {
        return Err(range("at least 1ns".into()));
    }
    if ns > max.as_nanos() {
        return Err(range(format!("at most {max_text}")));
    }
    Ok(Duration::from_nanos(ns as u64))
}

/// Parses a positive whole number bounded by `max`; digits beyond u64 are out of range, too.
pub fn parse_count(text: &str, min: u64, max: u64) -> Result<u64, ParseError> {
    let range = || ParseError::Range(text.to_string(), format!("must be between {min} and {max}"));
    let t = text.trim();
    let n: u64 = match t.parse() {
        Ok(n) => n,
        Err(_) if !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()) => return Err(range()),
        Err(_) => return Err(ParseError::Count(text.to_string())),
    };
    if n < min || n > max {
        return Err(range());
    }
    Ok(n)
}

/// Formats a byte count with binary prefixes, e.g. `32 KiB`, as sysfs reports caches.
pub fn format_bytes_binary(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    // Whole units counted in integers: a float would round a count above 2^53 to a
    // multiple of 1024 and print a figure that is not the count.
    let mut value = bytes;
    let mut unit = 0;
    while value >= 1024 && unit < UNITS.len() - 1 && value.is_multiple_of(1024) {
        value /= 1024;
        unit += 1;
    }
    if unit == 0 && bytes >= 4 << 10 {
        // Not an exact multiple: show one decimal in the largest fitting unit ("724.1 KiB",
        // not "741440 B"); below 4 KiB the exact count, e.g. a 1400-byte datagram.
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

/// A rate in bit/s as it was most likely typed (decimal prefixes, as iperf3's -b): `200 Mbit/s`,
/// `1.5 Gbit/s`; 0 is "unlimited" (as fast as the sender can).
pub fn format_bit_rate(bps: u64) -> String {
    if bps == 0 {
        return "unlimited".into();
    }
    let (value, unit) = [(1e9, "Gbit/s"), (1e6, "Mbit/s"), (1e3, "kbit/s")]
        .into_iter()
        // The unit of the value as printed: 999 999 999 is "1 Gbit/s", not "1000 Mbit/s".
        .find(|(size, _)| (bps as f64 / size * 1000.0).round() >= 1000.0)
        .map_or((bps as f64, "bit/s"), |(size, unit)| {
            (bps as f64 / size, unit)
        });
    let text = format!("{value:.3}");
    format!(
        "{} {unit}",
        text.trim_end_matches('0').trim_end_matches('.')
    )
}

/// How figures are shown: the choices of `--mib` and `--gbit`. They change only what exporters
/// print, never what is stored.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Display {
    /// Disk throughput in MiB/s (else MB/s).
    pub mib: bool,
    /// Network goodput in Gbit/s (else Mbit/s).
    pub gbit: bool,
    /// The unit each subsystem's times are shown in (by [`Subsystem::index`]), where fitted to
    /// the figures ([`Display::fitted`]); else ns for CPU and memory, µs for disk and network.
    pub time: [Option<Unit>; 4],
}

/// The unit a time of `seconds` reads best in: the one that puts it in 1..1000 (ns below
/// 1 µs, s from 1 s).
pub fn time_unit_for(seconds: f64) -> Unit {
    let s = seconds.abs();
    if !s.is_finite() || s < 1e-6 {
        Unit::Nanos
    } else if s < 1e-3 {
        Unit::Micros
    } else if s < 1.0 {
        Unit::Millis
    } else {
        Unit::Seconds
    }
}

/// A change of unit: the unit a value gets and how it converts.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Conversion {
    pub unit: Unit,
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

    /// From `unit` to its base unit ([`Unit::to_base`]).
    pub fn to_base(unit: Unit) -> Option<Conversion> {
        unit.to_base().map(|(unit, factor)| Conversion {
            unit,
            factor,
            divide: false,
        })
    }
}

impl Display {
    /// This display with each subsystem's times in the unit that suits the median of the
    /// `figures` (subsystem, stored unit, mean) that count time in seconds: a disk at 13 ms
    /// reads "13.2 ms", not "13167 µs". A subsystem fitted already keeps its unit, so that
    /// runs shown side by side can share one.
    pub fn fitted(mut self, figures: impl IntoIterator<Item = (Subsystem, Unit, f64)>) -> Display {
        let mut times: [Vec<f64>; 4] = Default::default();
        for (subsystem, unit, mean) in figures {
            if unit == Unit::Seconds && mean.is_finite() {
                times[subsystem.index()].push(mean.abs());
            }
        }
        for (slot, mut t) in self.time.iter_mut().zip(times) {
            if slot.is_none() && !t.is_empty() {
                t.sort_by(f64::total_cmp);
                *slot = Some(time_unit_for(t[t.len() / 2]));
            }
        }
        self
    }

    /// From the base unit a figure of `subsystem` is stored in to the unit it is shown in.
    pub fn conversion(&self, subsystem: Subsystem, base_unit: Unit) -> Option<Conversion> {
        self.unit(subsystem, base_unit)
            .map(|(unit, factor)| Conversion {
                unit,
                factor,
                divide: true,
            })
    }

    /// The unit a figure of `subsystem` stored in `base_unit` is shown in, and the factor
    /// (shown = stored / factor); `None` for a unit shown as stored.
    pub fn unit(&self, subsystem: Subsystem, base_unit: Unit) -> Option<(Unit, f64)> {
        let shown = match (base_unit, subsystem) {
            (Unit::OpsPerSec, _) => Unit::Gops,
            (Unit::BytesPerSec, Subsystem::Disk) if self.mib => Unit::MiBPerSec,
            (Unit::BytesPerSec, Subsystem::Disk) => Unit::MBPerSec,
            (Unit::BytesPerSec, _) => Unit::GBPerSec,
            (Unit::BitsPerSec, _) if self.gbit => Unit::GbitPerSec,
            (Unit::BitsPerSec, _) => Unit::MbitPerSec,
            (Unit::Seconds, _) if self.time[subsystem.index()].is_some() => {
                self.time[subsystem.index()]?
            }
            (Unit::Seconds, Subsystem::Cpu | Subsystem::Mem) => Unit::Nanos,
            (Unit::Seconds, _) => Unit::Micros,
            _ => return None,
        };
        shown.to_base().map(|(_, factor)| (shown, factor))
    }
}

/// Formats an estimated time: "42 s", "3 min 05 s", "1 h 20 min"; under a second to the
/// millisecond ("0.25 s"), never "0 s" but for nothing at all.
pub fn format_duration(d: Duration) -> String {
    let s = d.as_secs();
    if s >= 3600 {
        format!("{} h {:02} min", s / 3600, (s % 3600) / 60)
    } else if s >= 60 {
        format!("{} min {:02} s", s / 60, s % 60)
    } else if s >= 1 || d.is_zero() {
        format!("{s} s")
    } else {
        // A fraction of a second (a probe, a tool's longest run at a small budget) is not "0 s":
        // two decimals, three under a tenth, without trailing zeros.
        let secs = d.as_secs_f64();
        let ms = if secs >= 0.1 {
            format!("{secs:.2}")
        } else {
            format!("{secs:.3}")
        };
        let ms = ms.trim_end_matches('0').trim_end_matches('.');
        format!("{} s", if ms == "0" { "0.001" } else { ms })
    }
}

/// An estimated time from seconds computed in floating point, saturating instead of panicking:
/// beyond what a `Duration` holds, infinite or NaN (a sum of infinities) is `Duration::MAX`
/// (an estimate too long to fit any budget), below zero is zero.
pub fn estimate_secs(s: f64) -> Duration {
    match Duration::try_from_secs_f64(s) {
        Ok(d) => d,
        Err(_) if s < 0.0 => Duration::ZERO,
        Err(_) => Duration::MAX,
    }
}

/// The sum of estimated times, saturating at `Duration::MAX` (`Iterator::sum` panics on
/// overflow).
pub fn sum_estimates(times: impl IntoIterator<Item = Duration>) -> Duration {
    times
        .into_iter()
        .fold(Duration::ZERO, Duration::saturating_add)
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

    /// Finding 5: an estimate beyond a `Duration`, infinite or NaN saturates; never a panic.
    #[test]
    fn estimates_saturate() {
        assert_eq!(estimate_secs(1.5), Duration::from_millis(1500));
        assert_eq!(estimate_secs(1e300), Duration::MAX);
        assert_eq!(estimate_secs(f64::INFINITY), Duration::MAX);
        assert_eq!(estimate_secs(f64::NAN), Duration::MAX);
        assert_eq!(estimate_secs(-1.0), Duration::ZERO);
        assert_eq!(estimate_secs(f64::NEG_INFINITY), Duration::ZERO);
        assert_eq!(
            sum_estimates([Duration::MAX, Duration::MAX, Duration::from_secs(1)]),
            Duration::MAX
        );
        assert_eq!(
            sum_estimates([Duration::from_secs(2), Duration::from_secs(3)]),
            Duration::from_secs(5)
        );
        assert_eq!(format_duration(Duration::MAX), "5124095576030431 h 00 min");
        assert_eq!(format_duration(Duration::from_millis(250)), "0.25 s");
        assert_eq!(format_duration(Duration::from_micros(4200)), "0.004 s");
        assert_eq!(format_duration(Duration::from_micros(100)), "0.001 s");
        assert_eq!(format_duration(Duration::from_micros(999_600)), "1 s");
        assert_eq!(format_duration(Duration::from_millis(504)), "0.5 s");
        assert_eq!(format_duration(Duration::ZERO), "0 s");
        assert_eq!(format_duration(Duration::from_millis(1999)), "1 s");
    }

    #[test]
    fn bit_rates_read_as_typed() {
        assert_eq!(format_bit_rate(0), "unlimited");
        assert_eq!(format_bit_rate(200_000_000), "200 Mbit/s");
        assert_eq!(format_bit_rate(1_500_000_000), "1.5 Gbit/s");
        assert_eq!(format_bit_rate(1000), "1 kbit/s");
        assert_eq!(format_bit_rate(999), "999 bit/s");
        assert_eq!(format_bit_rate(999_999_999), "1 Gbit/s");
        assert_eq!(format_bit_rate(u64::MAX), "18446744073.71 Gbit/s");
    }

    /// One grammar: a bare prefix and one with i are binary, one with B alone decimal.
    #[test]
    fn sizes_bare_and_i_binary_b_decimal() {
        assert_eq!(parse_size("512"), Ok(512));
        assert_eq!(parse_size("512B"), Ok(512));
        for t in ["4k", "4K", "4Ki", "4KiB", "4kiB", "4 K"] {
            assert_eq!(parse_size(t), Ok(4096), "{t}");
        }
        for t in ["4kB", "4KB", "4 kB"] {
            assert_eq!(parse_size(t), Ok(4000), "{t}");
        }
        assert_eq!(parse_size("16M"), Ok(16 << 20));
        assert_eq!(parse_size("10MB"), Ok(10_000_000));
        assert_eq!(parse_size("1G"), Ok(1 << 30));
        assert_eq!(parse_size("1GB"), Ok(1_000_000_000));
        assert_eq!(parse_size("1.5M"), Ok(1_572_864));
        assert!(parse_size("abc").is_err());
        assert!(parse_size("4X").is_err());
        assert!(parse_size("").is_err());
        assert!(parse_size("0.5").is_err());
        assert!(parse_size("4i").is_err());
        // Counts of things other than bytes are said in decimal.
        assert_eq!(parse_si_count("1G"), Ok(1_000_000_000));
        assert_eq!(parse_si_count("2Ki"), Ok(2048));
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

    /// The message says what the grammar is: a bare prefix of a size is binary.
    #[test]
    fn a_bad_size_says_k_is_binary() {
        let e = parse_size("4X").unwrap_err().to_string();
        assert!(e.contains("binary: 4K = 4KiB = 4096 bytes"), "{e}");
        assert!(e.contains("decimal: 4KB = 4000 bytes"), "{e}");
        assert_eq!(parse_size("4K"), Ok(4096));
        assert_eq!(parse_size("4KB"), Ok(4000));
    }

    #[test]
    fn binary_formatting() {
        assert_eq!(format_bytes_binary(32 * 1024), "32 KiB");
        assert_eq!(format_bytes_binary(32 * 1024 * 1024), "32 MiB");
        assert_eq!(format_bytes_binary(100), "100 B");
        assert_eq!(format_bytes_binary(1536), "1536 B");
        assert_eq!(format_bytes_binary(1400), "1400 B");
        assert_eq!(format_bytes_binary(1_500_000), "1.4 MiB");
        // A staircase point between powers of two reads as a size, not a count of bytes.
        assert_eq!(format_bytes_binary(741_440), "724.1 KiB");
        assert_eq!(format_bytes_binary(5760), "5.6 KiB");
        assert_eq!(format_bytes_binary(4095), "4095 B");
        // Above 2^53 a float rounds to a multiple of 1024: the count is shown as it is.
        assert_eq!(format_bytes_binary(27_901_997_800_715_262), "25376.7 TiB");
        assert_eq!(
            format_bytes_binary(u64::MAX - 1023),
            "18014398509481983 KiB"
        );
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
        use Subsystem::*;
        use Unit::*;
        let plain = Display::default();
        let both = Display {
            mib: true,
            gbit: true,
            ..Default::default()
        };
        assert_eq!(plain.unit(Net, BitsPerSec), Some((MbitPerSec, 1e6)));
        assert_eq!(both.unit(Net, BitsPerSec), Some((GbitPerSec, 1e9)));
        assert_eq!(plain.unit(Disk, BytesPerSec), Some((MBPerSec, 1e6)));
        assert_eq!(both.unit(Disk, BytesPerSec), Some((MiBPerSec, 1_048_576.0)));
        assert_eq!(both.unit(Mem, BytesPerSec), Some((GBPerSec, 1e9)));
        assert_eq!(plain.unit(Cpu, OpsPerSec), Some((Gops, 1e9)));
        assert_eq!(plain.unit(Mem, Seconds), Some((Nanos, 1e-9)));
        assert_eq!(plain.unit(Disk, Seconds), Some((Micros, 1e-6)));
        assert_eq!(plain.unit(Disk, Iops), None);
        // Stored and shown again: the number the benchmark stated.
        for (unit, v) in [
            (Nanos, 30.0),
            (Micros, 0.1),
            (GBPerSec, 41.3),
            (MiBPerSec, 7.7),
        ] {
            let stored = Conversion::to_base(unit).unwrap().apply(v);
            let sub = if matches!(unit, Micros | MiBPerSec) {
                Disk
            } else {
                Mem
            };
            let d = if unit == MiBPerSec { both } else { plain };
            let shown = d.conversion(sub, unit.to_base().unwrap().0).unwrap();
            assert_eq!((shown.unit, shown.apply(stored)), (unit, v));
        }
        // Every unit shown converts to the base it is shown for.
        for d in [plain, both] {
            for sub in Subsystem::ALL {
                for b in [OpsPerSec, BytesPerSec, BitsPerSec, Seconds] {
                    let (shown, f) = d.unit(sub, b).unwrap();
                    assert_eq!(shown.to_base(), Some((b, f)));
                }
            }
        }
    }

    /// Times in the unit of the figure: a disk at 13 ms reads 13.2 ms, a loopback round trip
    /// 52 µs, a load 80 ns; the median decides for a subsystem, and a unit set is kept.
    #[test]
    fn times_take_the_unit_that_suits_them() {
        use Subsystem::*;
        use Unit::*;
        assert_eq!(time_unit_for(80e-9), Nanos);
        assert_eq!(time_unit_for(52e-6), Micros);
        assert_eq!(time_unit_for(13.167e-3), Millis);
        assert_eq!(time_unit_for(2.5), Seconds);
        assert_eq!(time_unit_for(f64::NAN), Nanos);
        let d = Display::default().fitted([
            (Disk, Seconds, 13.167e-3),
            (Disk, Seconds, 9e-3),
            (Disk, Seconds, 40e-6),
            (Disk, Iops, 75.0),
            (Net, Seconds, 52e-6),
        ]);
        let c = d.conversion(Disk, Seconds).unwrap();
        assert_eq!((c.unit, c.apply(13.167e-3)), (Millis, 13.167));
        assert_eq!(d.unit(Net, Seconds), Some((Micros, 1e-6)));
        // Unfitted subsystems keep the fixed units; seconds are shown as stored.
        assert_eq!(d.unit(Mem, Seconds), Some((Nanos, 1e-9)));
        let slow = Display::default().fitted([(Cpu, Seconds, 2.5)]);
        assert_eq!(slow.conversion(Cpu, Seconds), None);
        // A unit fitted already stays (runs shown side by side share it).
        assert_eq!(
            d.fitted([(Disk, Seconds, 5e-9)])
                .unit(Disk, Seconds)
                .unwrap()
                .0,
            Millis
        );
    }

    /// The sizes and durations named in issue 16: beyond 2^64 − 1 bytes is out of range (never
    /// wrapped or saturated to u64::MAX), the largest size is exact, and the message is one line.
    #[test]
    fn overflow_is_out_of_range() {
        for text in [
            "99999999999999999999G",
            "18446744073709551615K",
            "18446744073709551616",
            "18446744073709551616.0",
            "17179869184Gi",
            "340282366920938463463374607431768211456T",
        ] {
            let e = parse_size(text).unwrap_err();
            assert!(matches!(e, ParseError::Range(..)), "{text}: {e}");
            assert_eq!(
                e.to_string(),
                format!("'{text}' is out of range: {SIZE_RANGE}")
            );
        }
        assert_eq!(parse_size("18446744073709551615"), Ok(u64::MAX));
        assert_eq!(parse_size("16777215.999999999Ti").ok(), None);
        assert_eq!(parse_size("16777215T"), Ok(16_777_215 << 40));
        assert!(matches!(
            parse_size("16777216T"),
            Err(ParseError::Range(..))
        ));
        assert!(matches!(
            parse_duration("99999999999999999999s"),
            Err(ParseError::Range(..))
        ));
        assert!(matches!(
            parse_duration("0.4ns"),
            Err(ParseError::Range(..))
        ));
        assert_eq!(parse_duration("0.5ns"), Ok(Duration::from_nanos(1)));
        assert!(matches!(
            parse_count("99999999999999999999", 1, 10),
            Err(ParseError::Range(..))
        ));
    }

    mod props {
        use super::*;
        use proptest::prelude::*;

        /// Text near the grammars: digits, points and spaces, with every unit and some that
        /// are none.
        fn near_grammar() -> impl Strategy<Value = String> {
            let units = vec![
                "", "K", "KB", "Ki", "KiB", "k", "kib", "M", "Mi", "MB", "G", "Gi", "GiB", "T",
                "Ti", "B", "b", "i", "iB", "P", "ms", "us", "µs", "ns", "s", "m", "min", "h", "e3",
                "-", "x", "..", "KiKi", "sB",
            ];
            (
                "[ ]?[0-9]{0,30}(\\.[0-9]{0,30})?[ ]?",
                proptest::sample::select(units),
            )
                .prop_map(|(n, u)| format!("{n}{u}"))
        }

        /// The decimal (KB…TB) and binary (K…T, Ki…Ti) suffixes with their factors.
        const SUFFIXES: [(&str, u128); 12] = [
            ("", 1),
            ("KB", 1000),
            ("MB", 1_000_000),
            ("GB", 1_000_000_000),
            ("TB", 1_000_000_000_000),
            ("K", 1 << 10),
            ("m", 1 << 20),
            ("KiB", 1 << 10),
            ("Mi", 1 << 20),
            ("GiB", 1 << 30),
            ("Ti", 1 << 40),
            ("B", 1),
        ];

        /// Byte counts that are whole numbers of some unit, and any.
        fn byte_counts() -> impl Strategy<Value = u64> {
            let units = [
                1u64,
                1000,
                1024,
                1_000_000,
                1 << 20,
                1_000_000_000,
                1 << 30,
                1 << 40,
            ];
            prop_oneof![
                any::<u64>(),
                (any::<u32>(), proptest::sample::select(units.to_vec()))
                    .prop_map(|(k, u)| u64::from(k).saturating_mul(u)),
            ]
        }

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(256))]

            #[test]
            fn arbitrary_text_never_panics(s in any::<String>()) {
                let _ = parse_size(&s);
                let _ = parse_si_count(&s);
                let _ = parse_duration(&s);
                let _ = parse_count(&s, 0, u64::MAX);
            }

            /// Near the grammar nothing panics either, and every error is one line that
            /// quotes what was typed.
            #[test]
            fn errors_quote_the_input_on_one_line(s in near_grammar()) {
                let errors = [
                    parse_size(&s).err(),
                    parse_si_count(&s).err(),
                    parse_duration(&s).err(),
                    parse_count(&s, 1, 100).err(),
                ];
                for e in errors.into_iter().flatten() {
                    let m = e.to_string();
                    prop_assert!(m.starts_with(&format!("'{s}' ")) && !m.contains('\n'), "{m}");
                }
            }

            /// A number with a suffix is exactly that many bytes, or out of range beyond
            /// 2^64 − 1: never rounded through a float, wrapped or saturated.
            #[test]
            fn sizes_are_exact_or_out_of_range(
                v in prop_oneof![any::<u64>().prop_map(u128::from), any::<u128>()],
                tenths in 0u128..10,
                unit in 0..SUFFIXES.len(),
            ) {
                let (suffix, factor) = SUFFIXES[unit];
                let exact = v.checked_mul(factor);
                let text = format!("{v}{suffix}");
                match exact {
                    Some(b) if b <= u128::from(u64::MAX) => {
                        prop_assert_eq!(parse_size(&text), Ok(b as u64));
                    }
                    _ => prop_assert!(matches!(parse_size(&text), Err(ParseError::Range(..)))),
                }
                // With a fraction: exact when it makes whole bytes, refused when it does not.
                let text = format!("{v}.{tenths}{suffix}");
                let tenth = tenths * factor;
                match exact.and_then(|b| b.checked_add(tenth / 10)) {
                    Some(b) if tenth % 10 != 0 => {
                        prop_assert!(parse_size(&text).is_err(), "{}: {}", text, b);
                    }
                    Some(b) if b <= u128::from(u64::MAX) => {
                        prop_assert_eq!(parse_size(&text), Ok(b as u64));
                    }
                    _ => prop_assert!(matches!(parse_size(&text), Err(ParseError::Range(..)))),
                }
            }

            /// A bare prefix (either case) and one with i, with or without B, are binary.
            #[test]
            fn binary_sizes_are_exact_or_out_of_range(v in any::<u64>(), p in 0u32..5, form in 0..4) {
                let prefix = ["", "K", "M", "G", "T"][p as usize];
                let suffix = match (p, form) {
                    (0, _) => String::new(),
                    (_, 0) => prefix.to_string(),
                    (_, 1) => prefix.to_lowercase(),
                    (_, 2) => format!("{prefix}i"),
                    _ => format!("{}iB", prefix.to_lowercase()),
                };
                let text = format!("{v}{suffix}");
                match v.checked_mul(1 << (10 * p)) {
                    Some(b) => prop_assert_eq!(parse_size(&text), Ok(b)),
                    None => prop_assert!(matches!(
                        parse_size(&text),
                        Err(ParseError::Range(..))
                    )),
                }
            }

            /// What peakbench prints as a size reads back as the same number of bytes when it
            /// is exact (no decimal point): decimal units by `parse_size`, binary units by both.
            #[test]
            fn formatted_sizes_round_trip(b in byte_counts()) {
                let decimal = format_size(b);
                if !decimal.contains('.') {
                    prop_assert_eq!(parse_size(&decimal), Ok(b), "{}", decimal);
                }
                let binary = format_bytes_binary(b);
                if !binary.contains('.') {
                    prop_assert_eq!(parse_size(&binary), Ok(b), "{}", binary);
                }
            }

            /// A duration as Rust prints it (`1.000000001s`, `250ms`, `100µs`, `50ns`) or as a
            /// whole number of any unit reads back to the nanosecond; beyond 24 h it is out of
            /// range.
            #[test]
            fn durations_round_trip_to_the_nanosecond(
                ns in prop_oneof![1u64..=1_000_000, 1u64..=MAX_DURATION.as_nanos() as u64],
                n in 1u64..=u64::MAX,
                unit in 0usize..5,
            ) {
                let d = Duration::from_nanos(ns);
                prop_assert_eq!(parse_duration(&format!("{d:?}")), Ok(d), "{:?}", d);
                let (name, per) = [("ns", 1u128), ("us", 1_000), ("ms", 1_000_000), ("s", 1_000_000_000), ("min", 60_000_000_000)][unit];
                let text = format!("{n}{name}");
                let total = u128::from(n) * per;
                if total <= MAX_DURATION.as_nanos() {
                    prop_assert_eq!(parse_duration(&text), Ok(Duration::from_nanos(total as u64)));
                } else {
                    prop_assert!(matches!(parse_duration(&text), Err(ParseError::Range(..))), "{}", text);
                }
            }

            /// Digits beyond what any counter holds are out of range, for every grammar.
            #[test]
            fn huge_numbers_are_out_of_range(digits in "[1-9][0-9]{20,60}", unit in 0..SUFFIXES.len()) {
                let text = format!("{digits}{}", SUFFIXES[unit].0);
                prop_assert!(matches!(parse_size(&text), Err(ParseError::Range(..))));
                prop_assert!(matches!(parse_si_count(&text), Err(ParseError::Range(..))));
                let ms = format!("{digits}ms");
                prop_assert!(matches!(parse_duration(&ms), Err(ParseError::Range(..))));
                prop_assert!(matches!(parse_count(&digits, 1, u64::MAX), Err(ParseError::Range(..))));
            }
        }
    }
}
