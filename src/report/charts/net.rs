//! Network charts: goodput at the receiver against parallel streams.

use super::super::plot::{Chart, Series};
use super::series::{
    against_count, group_by, ideal_scaling, peak_guide, reference_series, series_of, threads,
};
use super::slug;
use crate::results::params::Side;
use crate::results::{Metric, ResultRecord, Subsystem};
use crate::units::format_bytes_binary;

/// Network goodput (at the receiver) against streams, per workload, one line per protocol and
/// message size.
pub(super) fn net_charts(records: &[&ResultRecord]) -> Vec<Chart> {
    let goodput: Vec<&ResultRecord> = records
        .iter()
        .copied()
        .filter(|r| {
            r.metric == Metric::Throughput
                && r.params.net().and_then(|n| n.side) != Some(Side::Sender)
        })
        .collect();
    group_by(&goodput, |r| (r.workload.clone(), r.unit))
        .into_iter()
        .map(|((workload, unit), recs)| {
            let series = series_of(
                &recs,
                |r| r.params.net().map(|n| n.streams as f64).or(threads(r)),
                |r| {
                    let Some(n) = r.params.net() else {
                        return r.workload.clone();
                    };
                    let mut name = format!(
                        "{} {}",
                        n.protocol.name(),
                        format_bytes_binary(n.message_size_bytes as u64)
                    );
                    if n.direction == Some(crate::results::params::Direction::ServerToClient) {
                        name.push_str(" reverse");
                    }
                    name.trim().to_string()
                },
            );
            let streams =
                |r: &ResultRecord| r.params.net().map(|n| n.streams as f64).or(threads(r));
            let mut guides: Vec<Series> = peak_guide(&recs, threads, "theoretical peak".into())
                .into_iter()
                .collect();
            guides.extend(ideal_scaling(&series));
            let mut series = series;
            series.extend(reference_series(&recs, streams, |r| {
                r.params.net().map_or_else(
                    || r.workload.clone(),
                    |n| {
                        format!(
                            "{} {}",
                            n.protocol.name(),
                            format_bytes_binary(n.message_size_bytes as u64)
                        )
                    },
                )
            }));
            Chart {
                slug: slug(&["net", &workload, "streams"]),
                subsystem: Subsystem::Net,
                title: format!("Network {workload}: goodput vs streams"),
                note: "Payload bit rate measured at the receiver; bars: the least and greatest \
                       repetition; dashed: the link's peak and ideal linear scaling from one \
                       stream."
                    .into(),
                plot: against_count(
                    "parallel streams",
                    format!("goodput ({})", unit),
                    series,
                    guides,
                ),
            }
        })
        .collect()
}
