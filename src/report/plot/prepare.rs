//! A plot's data cleaned and mapped to plotting coordinates, its frames and their ticks.

use super::{Axis, BarSeries, Detail, Marker, Plot, Scale, Series, Ticks, nines};
use crate::units::format_bytes_binary;
use plotters::coord::ranged1d::{DefaultFormatting, KeyPointHint};
use plotters::prelude::*;

/// An axis ready to draw: its range and ticks in plotting coordinates (the logarithm of the
/// value on a logarithmic axis).
#[derive(Debug, Clone)]
pub(super) struct Frame {
    pub(super) lo: f64,
    pub(super) hi: f64,
    pub(super) ticks: Vec<(f64, String)>,
}

impl Frame {
    fn positions(&self) -> Vec<f64> {
        self.ticks.iter().map(|t| t.0).collect()
    }

    /// The label of the tick at `pos` (plotters hands back the positions it was given).
    pub(super) fn label(&self, pos: f64) -> String {
        self.ticks
            .iter()
            .min_by(|a, b| (a.0 - pos).abs().total_cmp(&(b.0 - pos).abs()))
            .map(|t| t.1.clone())
            .unwrap_or_default()
    }
}

/// Plotters maps values on the frame linearly (it already holds logarithms on a logarithmic
/// axis) and draws grid lines and labels at exactly the frame's ticks.
impl Ranged for Frame {
    type FormatOption = DefaultFormatting;
    type ValueType = f64;

    fn map(&self, value: &f64, limit: (i32, i32)) -> i32 {
        let t = ((value - self.lo) / (self.hi - self.lo)).clamp(-0.5, 1.5);
        let t = if t.is_nan() { 0.0 } else { t };
        limit.0 + ((limit.1 - limit.0) as f64 * t).round() as i32
    }

    fn key_points<H: KeyPointHint>(&self, hint: H) -> Vec<f64> {
        if hint.weight().allow_light_points() {
            Vec::new()
        } else {
            self.positions()
        }
    }

    fn range(&self) -> std::ops::Range<f64> {
        self.lo..self.hi
    }
}

/// A plot with its data cleaned and mapped to plotting coordinates.
pub(super) enum Prepared {
    Lines(Lines),
    Bars(Bars),
}

/// A line plot ready to draw.
pub(super) struct Lines {
    pub(super) x: Frame,
    pub(super) y: Frame,
    pub(super) x_label: String,
    pub(super) y_label: String,
    pub(super) series: Vec<(String, Vec<(f64, f64)>)>,
    pub(super) guides: Vec<(String, Vec<(f64, f64)>)>,
    pub(super) markers: Vec<(f64, String)>,
    /// Per series (same order), its points' details in plotting coordinates.
    pub(super) details: Vec<Vec<Detail>>,
}

/// A bar plot ready to draw.
pub(super) struct Bars {
    pub(super) value: Frame,
    pub(super) value_label: String,
    pub(super) value_scale: Scale,
    /// Row i sits at position n − 1 − i, so that the first row is on top.
    pub(super) rows: Frame,
    /// Characters in the longest row label, to size the label area.
    pub(super) longest_row: usize,
    /// (bar series name, its value per row in plotting coordinates).
    pub(super) series: Vec<(String, Vec<Option<f64>>)>,
    pub(super) guide: Option<(f64, String)>,
}

/// The value in plotting coordinates, or `None` when the axis cannot show it.
pub(super) fn to_plot(v: f64, scale: Scale) -> Option<f64> {
    match scale {
        _ if !v.is_finite() => None,
        Scale::Linear => Some(v),
        Scale::Log if v > 0.0 => Some(v.ln()),
        Scale::Log => None,
    }
}

pub(super) fn from_plot(p: f64, scale: Scale) -> f64 {
    match scale {
        Scale::Linear => p,
        Scale::Log => p.exp(),
    }
}

/// The points of a series that its axes can show, in plotting coordinates, by x.
pub(super) fn clean(points: &[(f64, f64)], x: Scale, y: Scale) -> Vec<(f64, f64)> {
    let mut out: Vec<(f64, f64)> = points
        .iter()
        .filter_map(|&(a, b)| Some((to_plot(a, x)?, to_plot(b, y)?)))
        .collect();
    out.sort_by(|a, b| a.0.total_cmp(&b.0));
    out
}

pub(super) fn prepare(plot: &Plot) -> Option<Prepared> {
    match plot {
        Plot::Lines {
            x,
            y,
            series,
            guides,
            markers,
        } => prepare_lines(x, y, series, guides, markers).map(Prepared::Lines),
        Plot::Bars {
            rows,
            value,
            series,
            guide,
        } => prepare_bars(rows, value, series, guide.as_ref()).map(Prepared::Bars),
    }
}

fn prepare_lines(
    x: &Axis,
    y: &Axis,
    series: &[Series],
    guides: &[Series],
    markers: &[Marker],
) -> Option<Lines> {
    // Series ten times apart or more share a linear axis badly: the small ones lie
    // flat on its floor. Such an axis is drawn logarithmic.
    let y = &spread_axis(y, series);
    let cleaned = |list: &[Series]| -> Vec<(String, Vec<(f64, f64)>)> {
        list.iter()
            .map(|s| (s.name.clone(), clean(&s.points, x.scale, y.scale)))
            .filter(|(_, pts)| !pts.is_empty())
            .collect()
    };
    // Details in plotting coordinates, per series kept (a bound that cannot be drawn
    // is the point itself).
    let details: Vec<Vec<Detail>> = series
        .iter()
        .filter(|s| !clean(&s.points, x.scale, y.scale).is_empty())
        .map(|s| {
            s.details
                .iter()
                .filter_map(|d| {
                    let (px, py) = (to_plot(d.x, x.scale)?, to_plot(d.y, y.scale)?);
                    Some(Detail {
                        x: px,
                        y: py,
                        min: to_plot(d.min, y.scale).unwrap_or(py),
                        max: to_plot(d.max, y.scale).unwrap_or(py),
                        samples: d
                            .samples
                            .iter()
                            .filter_map(|v| to_plot(*v, y.scale))
                            .collect(),
                        tip: d.tip.clone(),
                    })
                })
                .collect()
        })
        .collect();
    let (series, guides) = (cleaned(series), cleaned(guides));
    if series.is_empty() {
        return None;
    }
    // The frame holds the guides too (a peak above every point stays on the chart),
    // along the measured points' x range.
    let xs: Vec<f64> = series
        .iter()
        .flat_map(|s| s.1.iter().map(|p| p.0))
        .collect();
    let ys: Vec<f64> = series
        .iter()
        .chain(&guides)
        .flat_map(|s| s.1.iter().map(|p| p.1))
        .chain(details.iter().flatten().flat_map(|d| [d.min, d.max]))
        .collect();
    let (xf, yf) = (frame(x, &xs), frame(y, &ys));
    let details = details
        .into_iter()
        .map(|list| {
            list.into_iter()
                .map(|d| Detail {
                    x: d.x.clamp(xf.lo, xf.hi),
                    y: d.y.clamp(yf.lo, yf.hi),
                    min: d.min.clamp(yf.lo, yf.hi),
                    max: d.max.clamp(yf.lo, yf.hi),
                    samples: d.samples.iter().map(|v| v.clamp(yf.lo, yf.hi)).collect(),
                    tip: d.tip,
                })
                .collect()
        })
        .collect();
    // Every point inside the frame (it is, unless the values were too extreme to frame),
    // so that plotters only ever sees pixel coordinates on the chart.
    let inside = |list: Vec<(String, Vec<(f64, f64)>)>| -> Vec<(String, Vec<(f64, f64)>)> {
        list.into_iter()
            .map(|(name, pts)| {
                let pts = pts
                    .into_iter()
                    .map(|(a, b)| (a.clamp(xf.lo, xf.hi), b.clamp(yf.lo, yf.hi)))
                    .collect();
                (name, pts)
            })
            .collect()
    };
    let (series, guides) = (inside(series), inside(guides));
    let markers = markers
        .iter()
        .filter_map(|m| {
            let p = to_plot(m.x, x.scale)?;
            (p >= xf.lo && p <= xf.hi).then(|| (p, m.label.clone()))
        })
        .collect();
    Some(Lines {
        x: xf,
        y: yf,
        x_label: x.label.clone(),
        y_label: y.label.clone(),
        series,
        guides,
        markers,
        details,
    })
}

fn prepare_bars(
    rows: &[String],
    value: &Axis,
    series: &[BarSeries],
    guide: Option<&Marker>,
) -> Option<Bars> {
    let series: Vec<(String, Vec<Option<f64>>)> = series
        .iter()
        .map(|s| {
            let values = (0..rows.len())
                .map(|i| {
                    s.values
                        .get(i)
                        .copied()
                        .flatten()
                        .and_then(|v| to_plot(v, value.scale))
                })
                .collect();
            (s.name.clone(), values)
        })
        .collect();
    let mut vs: Vec<f64> = series
        .iter()
        .flat_map(|s| s.1.iter().flatten().copied())
        .collect();
    if vs.is_empty() {
        return None;
    }
    let guide = guide.and_then(|g| Some((to_plot(g.x, value.scale)?, g.label.clone())));
    if let Some((g, _)) = &guide {
        vs.push(*g);
    }
    let n = rows.len();
    let row_frame = Frame {
        lo: -0.5,
        hi: n as f64 - 0.5,
        ticks: rows
            .iter()
            .enumerate()
            .map(|(i, r)| ((n - 1 - i) as f64, r.clone()))
            .collect(),
    };
    let mut vf = frame(value, &vs);
    // Room right of the longest bar for its value (on a logarithmic axis too: the room is in
    // plotting coordinates, a share of the width either way).
    let room = vf.hi + 0.3 * (vf.hi - vf.lo);
    if room.is_finite() {
        vs.push(room);
        vf = frame(value, &vs);
    }
    let series = series
        .into_iter()
        .map(|(name, values)| {
            let values = values
                .into_iter()
                .map(|v| v.map(|v| v.clamp(vf.lo, vf.hi)))
                .collect();
            (name, values)
        })
        .collect();
    let guide = guide.filter(|(g, _)| *g >= vf.lo && *g <= vf.hi);
    Some(Bars {
        value: vf,
        value_label: value.label.clone(),
        value_scale: value.scale,
        rows: row_frame,
        longest_row: rows.iter().map(|r| r.chars().count()).max().unwrap_or(0),
        series,
        guide,
    })
}

/// `y`, made logarithmic where it is linear and the largest values of its series differ by
/// ten times or more (all of them positive).
pub(super) fn spread_axis(y: &Axis, series: &[Series]) -> Axis {
    let tops: Vec<f64> = series
        .iter()
        .filter_map(|s| {
            s.points
                .iter()
                .map(|p| p.1)
                .filter(|v| v.is_finite())
                .reduce(f64::max)
        })
        .collect();
    let all_positive = series
        .iter()
        .flat_map(|s| &s.points)
        .all(|p| !p.1.is_finite() || p.1 > 0.0);
    let (lo, hi) = tops
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| {
            (a.min(*v), b.max(*v))
        });
    let mut axis = y.clone();
    if y.scale == Scale::Linear
        && y.ticks == Ticks::Number
        && all_positive
        && tops.len() > 1
        && lo > 0.0
        && hi / lo >= 10.0
    {
        axis.scale = Scale::Log;
        axis.label.push_str(", log scale");
    }
    axis
}

/// The range and ticks of an axis showing `values` (plotting coordinates, finite, not empty).
pub(super) fn frame(axis: &Axis, values: &[f64]) -> Frame {
    let min = values.iter().copied().fold(f64::INFINITY, f64::min);
    let max = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let (lo, hi) = match axis.scale {
        Scale::Log => {
            let pad = if max - min > 1e-9 {
                0.06 * (max - min)
            } else {
                0.35
            };
            (min - pad, max + pad)
        }
        Scale::Linear if axis.ticks == Ticks::Count => {
            let span = max - min;
            let pad = if span > 0.0 { 0.06 * span } else { 0.5 };
            (min - pad, max + pad)
        }
        Scale::Linear => {
            // Quantities start at zero, so that bars and lines compare honestly.
            let (lo, hi) = (min.min(0.0), max.max(0.0));
            let span = if hi > lo { hi - lo } else { 1.0 };
            (
                if lo < 0.0 { lo - 0.08 * span } else { lo },
                hi + 0.08 * span,
            )
        }
    };
    let (lo, hi) = if lo.is_finite() && hi.is_finite() && hi > lo {
        (lo, hi)
    } else {
        (0.0, 1.0)
    };
    let ticks = match (axis.scale, axis.ticks) {
        (_, Ticks::Count) => count_ticks(values, axis.scale),
        // Sizes are ticked within the data only: a label at the padded edge ("128 MiB" past
        // an 80 MiB point) would leave the picture.
        (Scale::Log, Ticks::Bytes) => power_of_two_ticks(min - 1e-9, max + 1e-9),
        (Scale::Log, Ticks::Number) => log_ticks(lo, hi),
        (_, Ticks::Percentile) => percentile_ticks(max),
        (Scale::Linear, t) => linear_ticks(lo, hi, t),
    };
    let ticks = ticks
        .into_iter()
        .filter(|(p, _)| *p >= lo && *p <= hi)
        .collect();
    Frame { lo, hi, ticks }
}

/// At most this many labelled ticks on an axis.
pub(super) const MAX_TICKS: usize = 12;

/// Every distinct value, thinned to at most [`MAX_TICKS`].
pub(super) fn count_ticks(values: &[f64], scale: Scale) -> Vec<(f64, String)> {
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    v.dedup_by(|a, b| (*a - *b).abs() < 1e-9);
    let step = v.len().div_ceil(MAX_TICKS).max(1);
    v.into_iter()
        .step_by(step)
        .map(|p| (p, format_number(from_plot(p, scale), 0)))
        .collect()
}

/// Powers of two between `lo` and `hi` (natural logarithms), written as sizes.
pub(super) fn power_of_two_ticks(lo: f64, hi: f64) -> Vec<(f64, String)> {
    let ln2 = std::f64::consts::LN_2;
    let first = (lo / ln2).ceil().clamp(0.0, 62.0) as u32;
    let last = (hi / ln2).floor().clamp(0.0, 62.0) as u32;
    if first > last {
        return Vec::new();
    }
    let step = ((last - first + 1) as usize).div_ceil(MAX_TICKS - 2).max(1);
    (first..=last)
        .step_by(step)
        .map(|e| (e as f64 * ln2, format_bytes_binary(1u64 << e)))
        .collect()
}

/// 1, 2 and 5 × powers of ten between `lo` and `hi` (natural logarithms); every whole multiple
/// when the range is too narrow for that, only the powers of ten when it is wide.
pub(super) fn log_ticks(lo: f64, hi: f64) -> Vec<(f64, String)> {
    let ln10 = std::f64::consts::LN_10;
    let k0 = ((lo / ln10).floor() as i32).clamp(-30, 30);
    let k1 = ((hi / ln10).ceil() as i32).clamp(-30, 30);
    let within = |mantissas: &[f64]| -> Vec<(f64, String)> {
        let mut out = Vec::new();
        for k in k0..=k1 {
            for &m in mantissas {
                let v = m * 10f64.powi(k);
                let p = v.ln();
                if p >= lo && p <= hi {
                    out.push((p, format_number(v, (-k).max(0) as usize)));
                }
            }
        }
        out
    };
    let mut ticks = within(&[1.0, 2.0, 5.0]);
    if ticks.len() > MAX_TICKS {
        ticks = within(&[1.0]);
    }
    if ticks.len() < 2 {
        ticks = within(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0]);
    }
    if ticks.len() < 2 {
        // Narrower than one digit step: evenly spaced values.
        ticks = linear_ticks(lo.exp(), hi.exp(), Ticks::Number)
            .into_iter()
            .filter(|(v, _)| *v > 0.0)
            .map(|(v, l)| (v.ln(), l))
            .collect();
    }
    ticks
}

/// Evenly spaced ticks at 1, 2 or 5 × a power of ten, about five of them.
/// The ticks of a percentile axis whose rightmost point is at `max` (the maximum, one nine
/// beyond the finest percentile drawn: 99.99 % by default, finer with `--percentiles`): 50 %,
/// 90 %, 99 %, … to the finest, and "max". The minimum, at 0, goes unlabelled (its label would
/// run into 50 %'s, a third of a nine away).
pub(super) fn percentile_ticks(max: f64) -> Vec<(f64, String)> {
    let finest = (max - 1.0).clamp(1.0, 12.0);
    let mut out = vec![(nines(0.5), "50 %".to_string())];
    let mut n = 1;
    while n as f64 <= finest + 1e-9 {
        let q = 1.0 - 10f64.powi(-n);
        let label = format!("{:.*} %", (n - 2).max(0) as usize, q * 100.0);
        out.push((nines(q), label));
        n += 1;
    }
    out.push((max, "max".to_string()));
    out
}

pub(super) fn linear_ticks(lo: f64, hi: f64, ticks: Ticks) -> Vec<(f64, String)> {
    let raw = (hi - lo) / 5.0;
    if !(raw > 0.0 && raw.is_finite()) {
        return Vec::new();
    }
    let magnitude = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .map(|m| m * magnitude)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * magnitude);
    let decimals = if step >= 1.0 {
        0
    } else {
        ((-step.log10()).ceil() as usize).min(12)
    };
    let first = (lo / step).ceil();
    (0..=MAX_TICKS)
        .map(|k| (first + k as f64) * step)
        .take_while(|v| *v <= hi + step * 1e-9)
        .map(|v| {
            let label = match ticks {
                Ticks::Bytes if v >= 0.0 => format_bytes_binary(v.round() as u64),
                _ => format_number(v, decimals),
            };
            (v, label)
        })
        .collect()
}

/// A tick label: `decimals` places below 10 000, then k, M and G.
pub(super) fn format_number(v: f64, decimals: usize) -> String {
    let a = v.abs();
    let short = |x: f64, suffix: &str| {
        let s = format!("{x:.2}");
        let s = s.trim_end_matches('0').trim_end_matches('.');
        format!("{s}{suffix}")
    };
    if a >= 1e9 {
        short(v / 1e9, "G")
    } else if a >= 1e6 {
        short(v / 1e6, "M")
    } else if a >= 1e4 {
        short(v / 1e3, "k")
    } else {
        format!("{v:.decimals$}")
    }
}
