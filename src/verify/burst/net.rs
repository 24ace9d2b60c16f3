//! The network's burst: a token bucket with a large bucket and a peak rate on the server's end of the namespace pair (tc tbf `rate R burst B peakrate P`): a TCP
//! stream to the client (`--reverse`, so that the receiver's side has the intervals) passes at
//! P until the bucket is spent, about B bytes beyond R, then at R. The point's
//! phases ([`crate::results::phases`]) must find it: the volume beyond the rate it settled to
//! against the bucket (±5 %), and that rate against R (±3 %), each in goodput (the payload's
//! share of each packet tbf counts).

use crate::app::setting::{Benchmark, Setting};
use crate::results::params::Proto;
use crate::results::params::Side;
use crate::results::phases::burst;
use crate::results::verify::Check;
use crate::results::{Metric, ResultRecord, Subsystem, Unit};
use crate::verify::checks::{
    Checks, Group, Judge, failed_all, interrupted, judged, ratio_read, skipped, twice_all,
    with_reason,
};
use crate::verify::net::{in_pair, payload_of, throughput};
use crate::verify::sandbox::NetPair;
use std::os::fd::OwnedFd;
use std::time::Duration;

/// The rate the bucket fills at, and the peak it is emptied at.
const RATE_BPS: u64 = 200_000_000;
const PEAK_BPS: u64 = 1_000_000_000;
/// The bucket: 1.8 s at the peak beyond the rate, shorter than `--sustain`'s steady window
/// (2.5 s: a burst longer than it passes for a steady state) and a phase of 3 intervals and more.
const BUCKET_BYTES: u64 = 180_000_000;
/// The stream's longest time (`--sustain`): the burst and 7 s after it; its intervals are a
/// twentieth of it, 500 ms, its steady window 2.5 s.
const SUSTAIN: Duration = Duration::from_secs(10);

/// The three checks, none run yet.
fn bases() -> [Check; 3] {
    let imposed = format!(
        "tbf {} Mbit/s, bucket {} MB at {} Mbit/s",
        RATE_BPS / 1_000_000,
        BUCKET_BYTES / 1_000_000,
        PEAK_BPS / 1_000_000
    );
    [
        skipped(
            "burst volume",
            Group::Burst,
            &imposed,
            (Subsystem::Net, Unit::Bytes),
            "",
        ),
        skipped(
            "burst baseline",
            Group::Burst,
            &imposed,
            (Subsystem::Net, Unit::BitsPerSec),
            "",
        ),
        skipped(
            "net sustain",
            Group::Burst,
            &imposed,
            (Subsystem::Net, Unit::Seconds),
            "",
        ),
    ]
}

/// Runs the burst checks (or skips them with the reason where the namespaces, the server or
/// the bucket cannot be had).
pub(super) fn checks(c: &mut Checks) -> anyhow::Result<()> {
    in_pair(c, measure, |c, why| c.skip_all(bases(), &why))
}

/// The three checks, tried twice where one is off its mark (`twice_all`: the bucket is set
/// afresh, full, for each try: `tc qdisc replace` refills it).
fn measure(c: &mut Checks, pair: &NetPair, _server: &OwnedFd) -> anyhow::Result<()> {
    let tried = twice_all(c, ratio_read, |c| attempt(c, pair));
    c.push_tried(tried)
}

/// One try of the three checks.
fn attempt(c: &mut Checks, pair: &NetPair) -> anyhow::Result<Vec<Check>> {
    let [volume, baseline, sustain] = bases();
    if let Err(why) = pair.limit_burst(RATE_BPS, PEAK_BPS, BUCKET_BYTES) {
        let why = format!("cannot shape the veth pair with a peak rate: {why}");
        return Ok(with_reason([volume, baseline, sustain], &why));
    }
    // Nothing omitted: the burst begins with the stream. One repetition: the bucket refills
    // at the rate only. The receiver's figures: a sender's count what its socket took, and its
    // buffer grows (one read 5 % above the rate it was held to). Until steady: the server's
    // senders end once the rate after the burst is.
    let bench = throughput(Proto::Tcp)
        .with_all([
            Setting::Flag("reverse"),
            Setting::Time("omit", std::time::Duration::ZERO),
        ])
        .with_all(crate::verify::checks::timing("sustain", SUSTAIN, 1));
    let points = match c.measure(&bench) {
        Ok(p) => p,
        Err(e) if interrupted(&e) => return Err(e),
        Err(e) => {
            return Ok(failed_all([volume, baseline, sustain], &bench, &e));
        }
    };
    // The receiver's record has the client's intervals and phases.
    let at = c.find(&points, |r| {
        r.metric == Metric::Throughput
            && r.params
                .net()
                .is_some_and(|n| n.side == Some(Side::Receiver))
    });
    let rec = at.and_then(|i| c.record(i)).cloned();
    let (payload, packet, what) = payload_of(rec.as_ref(), Proto::Tcp);
    let share = payload as f64 / packet as f64;
    let found = rec.as_ref().and_then(found);
    let how = match &found {
        Some(f) => format!(
            "the phases found {} Mbit/s for {:.1} s, then {} Mbit/s",
            crate::units::format_sig(f.burst_bps / 1e6),
            f.burst_s,
            crate::units::format_sig(f.baseline_bps / 1e6)
        ),
        None => "the point's phases show no burst".into(),
    };
    let volume_check = judged(
        volume,
        &bench,
        points.clone(),
        found.as_ref().map(|f| f.excess_bytes),
        Judge {
            expected: BUCKET_BYTES as f64 * share,
            tolerance: 0.05 * BUCKET_BYTES as f64 * share,
            tolerance_text: "±5 %".into(),
            reason: format!(
                "{how}; expected: the bucket's {} MB beyond the rate, in goodput ({payload} B {what} of {packet} B); measured: the bytes beyond the rate it settled to, interval by interval",
                BUCKET_BYTES / 1_000_000
            ),
        },
    );
    let expected = RATE_BPS as f64 * share;
    let baseline_check = judged(
        baseline,
        &bench,
        points.clone(),
        found.as_ref().map(|f| f.baseline_bps),
        Judge {
            expected,
            tolerance: 0.03 * expected,
            tolerance_text: "±3 %".into(),
            reason: format!(
                "{how}; expected: the rate × the payload's share of each packet, {payload} B ({what}) of {packet} B; measured: the last phase's median"
            ),
        },
    );
    let sustain_check = sustain_check(sustain, &bench, points, rec.as_ref(), found.as_ref());
    Ok(vec![volume_check, baseline_check, sustain_check])
}

/// `--sustain`'s end: the first steady window after the burst ends `steady::WINDOW` intervals
/// after the burst's end, which the phases place at an interval's edge (the one it ended in, or
/// the next); the senders end as they learn it, and the stream's measured time at the receiver
/// is said beside it.
fn sustain_check(
    base: Check,
    bench: &Benchmark,
    points: Vec<usize>,
    rec: Option<&ResultRecord>,
    found: Option<&Found>,
) -> Check {
    let interval_s = crate::measure::timeline::interval_of(SUSTAIN).as_secs_f64();
    let window_s = crate::measure::steady::WINDOW as f64 * interval_s;
    let ran_s = rec.and_then(ResultRecord::intervals_s);
    let steady_s = rec.and_then(ResultRecord::last_steady_s);
    let end_s = found.map_or(f64::NAN, |f| f.burst_end_s);
    judged(
        base,
        bench,
        points,
        steady_s.filter(|_| found.is_some()),
        Judge {
            expected: end_s + window_s,
            tolerance: interval_s,
            tolerance_text: format!("±{} s", crate::units::format_sig(interval_s)),
            reason: format!(
                "expected: the burst's end ({} s, as the phases found it) plus the steady window ({} intervals of {} s); measured: when the senders found the rate steady and ended (the receiver's whole intervals: {})",
                crate::units::format_sig(end_s),
                crate::measure::steady::WINDOW,
                crate::units::format_sig(interval_s),
                ran_s.map_or("none".into(), |s| format!(
                    "{} s",
                    crate::units::format_sig(s)
                ))
            ),
        },
    )
}

/// A burst as a point's phases show it.
struct Found {
    burst_bps: f64,
    burst_s: f64,
    /// When it ended, in seconds of the stream's measured time.
    burst_end_s: f64,
    baseline_bps: f64,
    /// The bytes beyond the baseline over the whole stream.
    excess_bytes: f64,
}

/// The burst of `rec`'s phases, and its volume beyond the rate the point settled to (read from
/// its intervals: one repetition, so they are the whole stream).
fn found(rec: &ResultRecord) -> Option<Found> {
    let phases = rec.phases.as_deref()?;
    let (b, then) = burst(phases)?;
    let intervals = rec.intervals.as_ref()?;
    let excess_bits: f64 = intervals
        .values
        .iter()
        .map(|v| (v - then.value) * intervals.interval_s)
        .sum();
    Some(Found {
        burst_bps: b.value,
        burst_s: b.end_s - b.start_s,
        burst_end_s: b.end_s,
        baseline_bps: then.value,
        excess_bytes: excess_bits / 8.0,
    })
}
