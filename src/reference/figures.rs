//! What a figure read from a reference tool's output may be: a number a tool can have printed
//! of what it measured (finite, not negative, at most 10¹⁸), and within what no machine
//! reaches in its record's unit. A figure beyond either is a broken or hostile tool (a remote
//! iperf3 server reports its side): its run fails and says why, and the point keeps its own.

use super::RefError;
use crate::results::ResultRecord;

/// The largest number taken from a tool's output, whatever it counts: 10¹⁸ (an exabyte, or
/// a thousand years of nanoseconds). No tool measures that much on one machine; a figure
/// beyond it (1e308, "inf") is a broken or hostile tool, and sums and products of a few of
/// those stay finite.
pub const MAX_TOOL_NUMBER: f64 = 1e18;

/// A number read from a tool's output, kept where a tool can have printed it of what it
/// measured: finite, not negative and at most [`MAX_TOOL_NUMBER`]; else None, and the parser
/// says which figure it could not read. Every parser reads its figures through this.
pub fn tool_number(x: f64) -> Option<f64> {
    (x.is_finite() && (0.0..=MAX_TOOL_NUMBER).contains(&x)).then_some(x)
}

/// [`tool_number`] for a count (bytes, operations) read as a whole number.
pub fn tool_count(n: u64) -> Option<u64> {
    (n as f64 <= MAX_TOOL_NUMBER).then_some(n)
}

/// The most a reference figure may be in its record's unit: what no single machine (for
/// HPL's flops, no cluster) reaches by far, as peakbench bounds its own figures. Network
/// goodput is the net benchmark's own bound ([`MAX_BITS_PER_S`](crate::workload::net::MAX_BITS_PER_S),
/// 10 Tbit/s); memory and disk at most 1 PB/s (a machine's memory moves a few TB/s); I/O and
/// transactions at most 10¹² a second; flops at most 10²¹ a second (a thousand times the
/// fastest supercomputer); times at most 10⁶ s (a tool's run is bounded to minutes); a
/// percentage at most 100.
fn figure_bound(unit: crate::results::Unit) -> f64 {
    use crate::results::Unit;
    let (base, factor) = unit.to_base().unwrap_or((unit, 1.0));
    let most = match base {
        Unit::BitsPerSec => crate::workload::net::MAX_BITS_PER_S,
        Unit::BytesPerSec => 1e15,
        Unit::Iops | Unit::TransPerSec => 1e12,
        Unit::OpsPerSec => 1e21,
        Unit::Seconds => 1e6,
        Unit::Percent => 100.0,
        _ => MAX_TOOL_NUMBER,
    };
    most / factor
}

/// Checks a tool's figure for `rec` before it is kept: finite, not negative and within its
/// unit's bound ([`figure_bound`]); else the tool's run is a failed reference run that says
/// why, and the point keeps its own figure.
pub(super) fn checked_figure(tool: &str, rec: &ResultRecord, value: f64) -> Result<f64, RefError> {
    let most = figure_bound(rec.unit);
    if value.is_finite() && (0.0..=most).contains(&value) {
        return Ok(value);
    }
    Err(RefError::Parse {
        tool: tool.into(),
        message: format!(
            "its figure for {} {} is {value:e} {}, not a number from 0 to {most:e}",
            rec.workload, rec.metric, rec.unit
        ),
    })
}
