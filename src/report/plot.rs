//! The plot engine: data series in, SVG text or PNG bytes out, drawn with plotters. Which
//! charts a report has is `charts`.
//!
//! Text is measured (and, in PNGs, drawn) with DejaVu Sans compiled into the binary from
//! assets/fonts/, so that nothing depends on the fonts of the machine that draws and no C library
//! is involved; in an SVG the text stays text, set in the viewer's sans-serif. Values that cannot
//! be drawn — NaN, infinities, and zero or negative values on a logarithmic axis — are left out;
//! a chart left with no point is no chart (`None`), never an empty frame or a panic.

use super::legend;
use crate::units::format_bytes_binary;
use plotters::coord::Shift;
use plotters::coord::ranged1d::{DefaultFormatting, KeyPointHint};
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use std::sync::OnceLock;

/// How an axis maps values to positions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scale {
    Linear,
    /// Logarithmic: equal ratios take equal lengths (working sets, concurrency).
    Log,
}

/// What an axis's values are: where its ticks go and how they read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ticks {
    /// Any quantity: ticks at steps of 1, 2 or 5 × a power of ten.
    Number,
    /// Concurrency (threads, streams, queue depth): a tick at every value measured.
    Count,
    /// Sizes in bytes: ticks at powers of two, written as 4 KiB, 1 MiB…
    Bytes,
    /// Percentiles on a linear axis of "nines", −log10(1 − q) (an HDR percentile plot): ticks
    /// at 50 %, 90 %, 99 %, 99.9 %, 99.99 %, and the maximum one nine beyond.
    Percentile,
}

/// Where percentile `q` (0 ≤ q < 1) sits on a [`Ticks::Percentile`] axis.
pub fn nines(q: f64) -> f64 {
    -(1.0 - q).max(1e-12).log10()
}

/// One axis: its title (with the unit), scale and kind of ticks.
#[derive(Debug, Clone, PartialEq)]
pub struct Axis {
    pub label: String,
    pub scale: Scale,
    pub ticks: Ticks,
}

impl Axis {
    pub fn new(label: impl Into<String>, scale: Scale, ticks: Ticks) -> Axis {
        Axis {
            label: label.into(),
            scale,
            ticks,
        }
    }
}

/// A named line through (x, y) points, with what each point stands for where it is known.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Series {
    pub name: String,
    pub points: Vec<(f64, f64)>,
    /// The measured points' repetitions (error bars, strip plots) and hover text.
    pub details: Vec<Detail>,
}

impl Series {
    /// A series of single figures (no repetitions), each point's hover text from `tip(x, y)`.
    pub fn of_figures(
        name: String,
        points: Vec<(f64, f64)>,
        tip: impl Fn(f64, f64) -> String,
    ) -> Series {
        let details = points
            .iter()
            .map(|&(x, y)| Detail::at(x, y, tip(x, y)))
            .collect();
        Series {
            name,
            points,
            details,
        }
    }
}

/// A measured point of a series: its repetitions' range, each repetition, and the text shown
/// when the pointer rests on it.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Detail {
    pub x: f64,
    pub y: f64,
    pub min: f64,
    pub max: f64,
    pub samples: Vec<f64>,
    pub tip: String,
}

impl Detail {
    /// A point without repetitions to show (a percentile, an interval, a reference figure):
    /// only its hover text.
    pub fn at(x: f64, y: f64, tip: String) -> Detail {
        Detail {
            x,
            y,
            min: y,
            max: y,
            samples: Vec::new(),
            tip,
        }
    }
}

/// Repetitions from which each one is drawn beside the error bar (a strip plot).
pub const STRIP_FROM: usize = 5;

/// A labelled vertical line at `x` (a cache size on the latency staircase, the peak on an
/// efficiency chart).
#[derive(Debug, Clone, PartialEq)]
pub struct Marker {
    pub x: f64,
    pub label: String,
}

/// One bar per row of a bar chart; `None` where the row has no value for this series.
#[derive(Debug, Clone, PartialEq)]
pub struct BarSeries {
    pub name: String,
    pub values: Vec<Option<f64>>,
}

/// What a chart draws.
#[derive(Debug, Clone, PartialEq)]
pub enum Plot {
    /// Lines through points with a dot at each point, dashed guide lines (the theoretical
    /// peak: grey, without dots, named in the legend), and dashed vertical markers. The legend
    /// goes below the plotting area. A linear y axis whose series differ by ten times or more
    /// is drawn logarithmic, so that the smaller ones keep their room.
    Lines {
        x: Axis,
        y: Axis,
        series: Vec<Series>,
        guides: Vec<Series>,
        markers: Vec<Marker>,
    },
    /// Horizontal bars: one row per label, one bar per series in each row, and an optional
    /// dashed guide line across the rows.
    Bars {
        rows: Vec<String>,
        value: Axis,
        series: Vec<BarSeries>,
        guide: Option<Marker>,
    },
}

/// A chart with its place in a report.
#[derive(Debug, Clone, PartialEq)]
pub struct Chart {
    /// A short name for files and anchors, e.g. `cpu-dp-throughput`.
    pub slug: String,
    /// The subsystem whose section shows it (`cpu`, `mem`, `disk`, `net`).
    pub subsystem: String,
    pub title: String,
    /// One sentence on how to read it (may be empty).
    pub note: String,
    pub plot: Plot,
}

impl Chart {
    /// Applies `f` to every text of the chart: its title, note, axis labels, series and row
    /// names and marker labels.
    pub fn map_text(&mut self, f: impl Fn(&mut String)) {
        f(&mut self.title);
        f(&mut self.note);
        match &mut self.plot {
            Plot::Lines {
                x,
                y,
                series,
                guides,
                markers,
                ..
            } => {
                f(&mut x.label);
                f(&mut y.label);
                series.iter_mut().for_each(|s| f(&mut s.name));
                guides.iter_mut().for_each(|s| f(&mut s.name));
                markers.iter_mut().for_each(|m| f(&mut m.label));
            }
            Plot::Bars {
                rows,
                value,
                series,
                guide,
            } => {
                rows.iter_mut().for_each(&f);
                f(&mut value.label);
                series.iter_mut().for_each(|s| f(&mut s.name));
                if let Some(g) = guide {
                    f(&mut g.label);
                }
            }
        }
    }
}

/// A chart that plotters could not draw (a font or backend failure).
#[derive(Debug, thiserror::Error)]
#[error("the chart could not be drawn: {0}")]
pub struct ChartError(String);

fn err(e: impl std::fmt::Display) -> ChartError {
    ChartError(e.to_string())
}

/// DejaVu Sans (assets/fonts/README.md), for text metrics and bitmap text.
static FONT: &[u8] = include_bytes!("../../assets/fonts/DejaVuSans.ttf");

/// Registers the bundled font as plotters' "sans-serif", once.
pub(super) fn font() -> Result<(), ChartError> {
    static REGISTERED: OnceLock<bool> = OnceLock::new();
    let ok = *REGISTERED.get_or_init(|| {
        plotters::style::register_font("sans-serif", FontStyle::Normal, FONT).is_ok()
    });
    if ok {
        Ok(())
    } else {
        Err(ChartError("the bundled font could not be read".into()))
    }
}

/// Series colours (Tableau 10), distinct in colour and in lightness.
pub const PALETTE: [RGBColor; 8] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
];
const MARKER: RGBColor = RGBColor(90, 90, 90);

/// The chart's size in CSS pixels (PNGs multiply it by their scale).
fn size(plot: &Plot) -> (u32, u32) {
    match plot {
        Plot::Lines { .. } => (720, 420),
        Plot::Bars { rows, series, .. } => {
            let row = 12 + 14 * series.len().clamp(1, 100) as u32;
            (720, (120 + rows.len().min(1000) as u32 * row).min(8000))
        }
    }
}

/// Draws `chart` as an SVG document; `None` when it has nothing to draw.
pub fn svg(chart: &Chart) -> Result<Option<String>, ChartError> {
    let Some(layout) = layout(chart)? else {
        return Ok(None);
    };
    let mut out = String::new();
    let tips = {
        let root =
            SVGBackend::with_string(&mut out, (layout.width, layout.height)).into_drawing_area();
        let tips = draw_all(&root, chart, &layout, 1.0)?;
        root.present().map_err(err)?;
        tips
    };
    Ok(Some(with_tips(out, &tips)))
}

/// Where a chart's parts go, in CSS pixels: the plotting part on top (`plot_height`), the
/// legend below it.
pub struct ChartLayout {
    pub width: u32,
    pub height: u32,
    /// The height of the part with the axes; the legend takes the rest.
    pub plot_height: u32,
    pub legend: legend::Layout,
    entries: Vec<legend::Entry>,
    prepared: Prepared,
}

/// The layout of `chart`, or `None` when it has nothing to draw.
pub fn layout(chart: &Chart) -> Result<Option<ChartLayout>, ChartError> {
    let Some(prepared) = prepare(&chart.plot) else {
        return Ok(None);
    };
    font()?;
    let (width, plot_height) = size(&chart.plot);
    let entries = legend_entries(&prepared);
    let legend = legend::layout(&entries, width as f64);
    Ok(Some(ChartLayout {
        width,
        height: plot_height + legend.height.ceil() as u32,
        plot_height,
        legend,
        entries,
        prepared,
    }))
}

/// A legend entry per series (its colour) and per guide (dashed grey).
fn legend_entries(prepared: &Prepared) -> Vec<legend::Entry> {
    // Series past the palette's colours are drawn dashed, and so are their swatches.
    let entry = |name: &str, i: usize| legend::Entry {
        name: name.to_string(),
        color: PALETTE[i % PALETTE.len()],
        dashed: i >= PALETTE.len(),
    };
    let guide = |name: &str| legend::Entry {
        name: name.to_string(),
        color: MARKER,
        dashed: true,
    };
    match prepared {
        Prepared::Lines { series, guides, .. } => series
            .iter()
            .enumerate()
            .map(|(i, (name, _))| entry(name, i))
            .chain(guides.iter().map(|(name, _)| guide(name)))
            .collect(),
        Prepared::Bars {
            series, guide: g, ..
        } => series
            .iter()
            .enumerate()
            .map(|(i, (name, _))| legend::Entry {
                dashed: false,
                ..entry(name, i)
            })
            .chain(g.iter().map(|(_, label)| guide(label)))
            .collect(),
    }
}

/// Draws the chart and its legend below it on `root`, `s` times the CSS size.
fn draw_all<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    chart: &Chart,
    layout: &ChartLayout,
    s: f64,
) -> Result<Vec<Tip>, ChartError> {
    root.fill(&WHITE).map_err(err)?;
    let split = (layout.plot_height as f64 * s).round() as u32;
    let (top, bottom) = root.split_vertically(split);
    let tips = draw(&top, chart, &layout.prepared, s)?;
    legend::draw(&bottom, &layout.legend, &layout.entries, s).map_err(ChartError)?;
    Ok(tips)
}

/// Draws `chart` as a PNG image `scale` (1–4) times its SVG size, for slides; `None` when it has
/// nothing to draw.
pub fn png(chart: &Chart, scale: u32) -> Result<Option<Vec<u8>>, ChartError> {
    let Some(layout) = layout(chart)? else {
        return Ok(None);
    };
    let scale = scale.clamp(1, 4);
    let (w, h) = (layout.width * scale, layout.height * scale);
    let mut rgb = vec![255u8; w as usize * h as usize * 3];
    {
        let root = BitMapBackend::with_buffer(&mut rgb, (w, h)).into_drawing_area();
        // A picture has no pointer to rest on: its hover texts are dropped.
        let _tips = draw_all(&root, chart, &layout, scale as f64)?;
        root.present().map_err(err)?;
    }
    let mut out = Vec::new();
    let mut encoder = png::Encoder::new(&mut out, w, h);
    encoder.set_color(png::ColorType::Rgb);
    encoder.set_depth(png::BitDepth::Eight);
    let mut writer = encoder.write_header().map_err(err)?;
    writer.write_image_data(&rgb).map_err(err)?;
    writer.finish().map_err(err)?;
    Ok(Some(out))
}

/// How many times its SVG size a PNG chart is drawn: 1440 × 840 pixels for a line chart, sharp
/// on a slide.
pub const PNG_SCALE: u32 = 2;

/// Whether `plot` has anything to draw (a chart without is left out, never drawn empty).
pub fn drawable(plot: &Plot) -> bool {
    prepare(plot).is_some()
}

/// An axis ready to draw: its range and ticks in plotting coordinates (the logarithm of the
/// value on a logarithmic axis).
#[derive(Debug, Clone)]
struct Frame {
    lo: f64,
    hi: f64,
    ticks: Vec<(f64, String)>,
}

impl Frame {
    fn positions(&self) -> Vec<f64> {
        self.ticks.iter().map(|t| t.0).collect()
    }

    /// The label of the tick at `pos` (plotters hands back the positions it was given).
    fn label(&self, pos: f64) -> String {
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
enum Prepared {
    Lines {
        x: Frame,
        y: Frame,
        x_label: String,
        y_label: String,
        series: Vec<(String, Vec<(f64, f64)>)>,
        guides: Vec<(String, Vec<(f64, f64)>)>,
        markers: Vec<(f64, String)>,
        /// Per series (same order), its points' details in plotting coordinates.
        details: Vec<Vec<Detail>>,
    },
    Bars {
        value: Frame,
        value_label: String,
        value_scale: Scale,
        /// Row i sits at position n − 1 − i, so that the first row is on top.
        rows: Frame,
        /// Characters in the longest row label, to size the label area.
        longest_row: usize,
        /// (bar series name, its value per row in plotting coordinates).
        series: Vec<(String, Vec<Option<f64>>)>,
        guide: Option<(f64, String)>,
    },
}

/// The value in plotting coordinates, or `None` when the axis cannot show it.
fn to_plot(v: f64, scale: Scale) -> Option<f64> {
    match scale {
        _ if !v.is_finite() => None,
        Scale::Linear => Some(v),
        Scale::Log if v > 0.0 => Some(v.ln()),
        Scale::Log => None,
    }
}

fn from_plot(p: f64, scale: Scale) -> f64 {
    match scale {
        Scale::Linear => p,
        Scale::Log => p.exp(),
    }
}

/// The points of a series that its axes can show, in plotting coordinates, by x.
fn clean(points: &[(f64, f64)], x: Scale, y: Scale) -> Vec<(f64, f64)> {
    let mut out: Vec<(f64, f64)> = points
        .iter()
        .filter_map(|&(a, b)| Some((to_plot(a, x)?, to_plot(b, y)?)))
        .collect();
    out.sort_by(|a, b| a.0.total_cmp(&b.0));
    out
}

fn prepare(plot: &Plot) -> Option<Prepared> {
    match plot {
        Plot::Lines {
            x,
            y,
            series,
            guides,
            markers,
        } => {
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
            Some(Prepared::Lines {
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
        Plot::Bars {
            rows,
            value,
            series,
            guide,
        } => {
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
            let guide = guide
                .as_ref()
                .and_then(|g| Some((to_plot(g.x, value.scale)?, g.label.clone())));
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
            // Room right of the longest bar for its value and for the legend.
            let room = vf.hi + 0.3 * (vf.hi - vf.lo);
            if value.scale == Scale::Linear && room.is_finite() {
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
            Some(Prepared::Bars {
                value: vf,
                value_label: value.label.clone(),
                value_scale: value.scale,
                rows: row_frame,
                longest_row: rows.iter().map(|r| r.chars().count()).max().unwrap_or(0),
                series,
                guide,
            })
        }
    }
}

/// `y`, made logarithmic where it is linear and the largest values of its series differ by
/// ten times or more (all of them positive).
fn spread_axis(y: &Axis, series: &[Series]) -> Axis {
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
fn frame(axis: &Axis, values: &[f64]) -> Frame {
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
        (Scale::Log, Ticks::Bytes) => power_of_two_ticks(lo, hi),
        (Scale::Log, Ticks::Number) => log_ticks(lo, hi),
        (_, Ticks::Percentile) => percentile_ticks(),
        (Scale::Linear, t) => linear_ticks(lo, hi, t),
    };
    let ticks = ticks
        .into_iter()
        .filter(|(p, _)| *p >= lo && *p <= hi)
        .collect();
    Frame { lo, hi, ticks }
}

/// At most this many labelled ticks on an axis.
const MAX_TICKS: usize = 12;

/// Every distinct value, thinned to at most [`MAX_TICKS`].
fn count_ticks(values: &[f64], scale: Scale) -> Vec<(f64, String)> {
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
fn power_of_two_ticks(lo: f64, hi: f64) -> Vec<(f64, String)> {
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
fn log_ticks(lo: f64, hi: f64) -> Vec<(f64, String)> {
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
/// The ticks of a percentile axis.
fn percentile_ticks() -> Vec<(f64, String)> {
    [
        (0.0, "0 %"),
        (0.5, "50 %"),
        (0.9, "90 %"),
        (0.99, "99 %"),
        (0.999, "99.9 %"),
        (0.9999, "99.99 %"),
    ]
    .into_iter()
    .map(|(q, l)| (nines(q), l.to_string()))
    .chain(std::iter::once((nines(0.9999) + 1.0, "max".to_string())))
    .collect()
}

fn linear_ticks(lo: f64, hi: f64, ticks: Ticks) -> Vec<(f64, String)> {
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
fn format_number(v: f64, decimals: usize) -> String {
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

/// A hover text at a pixel of the chart: where the pointer shows it.
type Tip = (i32, i32, String);

/// `svg` with a transparent hover target over each measured point, its exact value and
/// parameters in an SVG `<title>` (the browser's tooltip; no script).
fn with_tips(svg: String, tips: &[Tip]) -> String {
    if tips.is_empty() {
        return svg;
    }
    let mut g = String::from("<g class=\"tips\">\n");
    for (x, y, tip) in tips {
        g.push_str(&format!(
            "<circle cx=\"{x}\" cy=\"{y}\" r=\"8\" fill=\"transparent\"><title>{}</title></circle>\n",
            // Line breaks separate the tip's lines; no other control character is drawn.
            crate::text::xml_escape(&tip.replace(|c: char| c.is_control() && c != '\n', ""))
        ));
    }
    g.push_str("</g>\n");
    match svg.rfind("</svg>") {
        Some(end) => format!("{}{g}{}", &svg[..end], &svg[end..]),
        None => svg,
    }
}

fn text_style(size: f64) -> TextStyle<'static> {
    TextStyle::from(("sans-serif", size).into_font())
}

/// Draws a prepared chart on `root`; `s` scales every size (1 for SVG). Returns the hover texts
/// of the measured points, at their pixels.
fn draw<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    chart: &Chart,
    prepared: &Prepared,
    s: f64,
) -> Result<Vec<Tip>, ChartError> {
    let mut tips = Vec::new();
    let px = |v: f64| (v * s).round().max(1.0) as u32;
    // A title wider than the chart is cut to it.
    let (width, _) = root.dim_in_pixel();
    let title = legend::fit(&chart.title, 22.0, width as f64 / s - 28.0);
    let grid = RGBColor(0, 0, 0).mix(0.12).stroke_width(px(1.0));
    let axis = RGBColor(60, 60, 60).stroke_width(px(1.0));
    let small = text_style(14.0 * s).color(&MARKER);
    match prepared {
        Prepared::Lines {
            x,
            y,
            x_label,
            y_label,
            series,
            guides,
            markers,
            details,
        } => {
            let mut ctx = ChartBuilder::on(root)
                .caption(&title, text_style(22.0 * s))
                .margin(px(14.0))
                .x_label_area_size(px(54.0))
                .y_label_area_size(px(80.0))
                .build_cartesian_2d(x.clone(), y.clone())
                .map_err(err)?;
            let x_fmt = |p: &f64| x.label(*p);
            let y_fmt = |p: &f64| y.label(*p);
            ctx.configure_mesh()
                .x_desc(x_label.as_str())
                .y_desc(y_label.as_str())
                .x_label_formatter(&x_fmt)
                .y_label_formatter(&y_fmt)
                .label_style(text_style(16.0 * s))
                .axis_desc_style(text_style(17.0 * s))
                .bold_line_style(grid)
                .axis_style(axis)
                .draw()
                .map_err(err)?;
            for (i, (pos, label)) in markers.iter().enumerate() {
                ctx.draw_series(DashedLineSeries::new(
                    [(*pos, y.lo), (*pos, y.hi)],
                    px(6.0),
                    px(4.0),
                    MARKER.stroke_width(px(1.0)),
                ))
                .map_err(err)?;
                // Alternate heights so that neighbouring labels do not overlap; a label that
                // would run past the plotting area's right edge goes left of its line.
                let dy = px(4.0 + 16.0 * (i % 2) as f64) as i32;
                let (lx, _) = ctx.backend_coord(&(*pos, y.hi));
                let (right, _) = ctx.backend_coord(&(x.hi, y.hi));
                let room = (right - lx) as f64 / s;
                let text = if legend::text_width(label, 14.0) + 6.0 > room {
                    Text::new(
                        label.clone(),
                        (-(px(4.0) as i32), dy),
                        small.pos(Pos::new(HPos::Right, VPos::Top)),
                    )
                } else {
                    Text::new(label.clone(), (px(4.0) as i32, dy), small.clone())
                };
                ctx.draw_series(std::iter::once(EmptyElement::at((*pos, y.hi)) + text))
                    .map_err(err)?;
            }
            for (i, (_, points)) in series.iter().enumerate() {
                let color = PALETTE[i % PALETTE.len()];
                if i < PALETTE.len() {
                    ctx.draw_series(
                        LineSeries::new(
                            points.iter().copied(),
                            color.filled().stroke_width(px(2.0)),
                        )
                        .point_size(px(3.5)),
                    )
                    .map_err(err)?;
                } else {
                    // Past the palette the colours come round again: these series are dashed,
                    // their points squares, as their legend swatches are.
                    ctx.draw_series(DashedLineSeries::new(
                        points.iter().copied(),
                        px(6.0),
                        px(3.0),
                        color.stroke_width(px(2.0)),
                    ))
                    .map_err(err)?;
                    let half = px(3.5) as i32;
                    ctx.draw_series(points.iter().map(|p| {
                        EmptyElement::at(*p)
                            + Rectangle::new([(-half, -half), (half, half)], color.filled())
                    }))
                    .map_err(err)?;
                }
            }
            // Each measured point's spread: an error bar from the least to the greatest
            // repetition, and each repetition as a dot beside it where there are enough to
            // show their distribution.
            let cap = px(4.0) as i32;
            for (i, list) in details.iter().enumerate() {
                let color = PALETTE[i % PALETTE.len()];
                let bar = color.stroke_width(px(1.5));
                for d in list {
                    if d.max > d.min {
                        ctx.draw_series(std::iter::once(PathElement::new(
                            [(d.x, d.min), (d.x, d.max)],
                            bar,
                        )))
                        .map_err(err)?;
                        for end in [d.min, d.max] {
                            ctx.draw_series(std::iter::once(
                                EmptyElement::at((d.x, end))
                                    + PathElement::new([(-cap, 0), (cap, 0)], bar),
                            ))
                            .map_err(err)?;
                        }
                    }
                    if d.samples.len() >= STRIP_FROM {
                        let dot = color.mix(0.5).filled();
                        ctx.draw_series(d.samples.iter().map(|v| {
                            EmptyElement::at((d.x, *v)) + Circle::new((2 * cap, 0), px(1.8), dot)
                        }))
                        .map_err(err)?;
                    }
                    let (tx, ty) = ctx.backend_coord(&(d.x, d.y));
                    tips.push((tx, ty, d.tip.clone()));
                }
            }
            for (_, points) in guides {
                let dash = MARKER.stroke_width(px(1.5));
                ctx.draw_series(DashedLineSeries::new(
                    points.iter().copied(),
                    px(6.0),
                    px(4.0),
                    dash,
                ))
                .map_err(err)?;
            }
        }
        Prepared::Bars {
            value,
            value_label,
            value_scale,
            rows,
            longest_row,
            series,
            guide,
        } => {
            let label_width = (*longest_row as f64 * 8.6 + 24.0).clamp(60.0, 340.0);
            let mut ctx = ChartBuilder::on(root)
                .caption(&title, text_style(22.0 * s))
                .margin(px(14.0))
                .x_label_area_size(px(54.0))
                .y_label_area_size(px(label_width))
                .build_cartesian_2d(value.clone(), rows.clone())
                .map_err(err)?;
            let x_fmt = |p: &f64| value.label(*p);
            // A row label longer than its area is cut to it.
            let y_fmt = |p: &f64| legend::fit(&rows.label(*p), 16.0, label_width - 20.0);
            ctx.configure_mesh()
                .disable_y_mesh()
                .x_desc(value_label.as_str())
                .x_label_formatter(&x_fmt)
                .y_label_formatter(&y_fmt)
                .label_style(text_style(16.0 * s))
                .axis_desc_style(text_style(17.0 * s))
                .bold_line_style(grid)
                .axis_style(axis)
                .draw()
                .map_err(err)?;
            let n = rows.ticks.len();
            let band = 0.8;
            let bar = band / series.len().max(1) as f64;
            let base = match value_scale {
                Scale::Linear => 0f64.clamp(value.lo, value.hi),
                Scale::Log => value.lo,
            };
            let at_middle = small.pos(Pos::new(HPos::Left, VPos::Center));
            for (j, (name, values)) in series.iter().enumerate() {
                let color = PALETTE[j % PALETTE.len()];
                let bars: Vec<(f64, f64)> = values
                    .iter()
                    .enumerate()
                    .filter_map(|(i, v)| {
                        let top = (n - 1 - i) as f64 + band / 2.0 - j as f64 * bar;
                        v.map(|v| (top, v))
                    })
                    .collect();
                ctx.draw_series(bars.iter().map(|&(top, v)| {
                    Rectangle::new([(base, top), (v, top - 0.9 * bar)], color.filled())
                }))
                .map_err(err)?;
                for (i, v) in values.iter().enumerate() {
                    let Some(v) = v else { continue };
                    let top = (n - 1 - i) as f64 + band / 2.0 - j as f64 * bar;
                    let (tx, ty) = ctx.backend_coord(&(*v, top - 0.45 * bar));
                    tips.push((
                        tx,
                        ty,
                        format!(
                            "{}\n{name}: {}",
                            rows.label((n - 1 - i) as f64),
                            crate::units::format_sig(from_plot(*v, *value_scale))
                        ),
                    ));
                }
                // Each bar's value right of its end; where it would cross the guide line, right
                // of the guide instead.
                let guide_px = guide
                    .as_ref()
                    .map(|(g, _)| ctx.backend_coord(&(*g, rows.lo)).0);
                for &(top, v) in &bars {
                    let text = crate::units::format_sig(from_plot(v, *value_scale));
                    let (end, _) = ctx.backend_coord(&(v, top));
                    let w = (legend::text_width(&text, 14.0) * s) as i32;
                    let gap = px(4.0) as i32;
                    let dx = match guide_px {
                        Some(g) if end + gap <= g + gap && end + gap + w >= g - gap => {
                            g - end + gap
                        }
                        _ => gap,
                    };
                    ctx.draw_series(std::iter::once(
                        EmptyElement::at((v, top - 0.45 * bar))
                            + Text::new(text, (dx, 0), at_middle.clone()),
                    ))
                    .map_err(err)?;
                }
            }
            if let Some((pos, _)) = guide {
                // Named in the legend: near the peak, a label on the chart would cover the
                // bars' values.
                let dash = MARKER.stroke_width(px(1.5));
                ctx.draw_series(DashedLineSeries::new(
                    [(*pos, rows.lo), (*pos, rows.hi)],
                    px(6.0),
                    px(4.0),
                    dash,
                ))
                .map_err(err)?;
            }
        }
    }
    Ok(tips)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(x: Axis, series: Vec<Series>, markers: Vec<Marker>) -> Chart {
        Chart {
            slug: "test".into(),
            subsystem: "cpu".into(),
            title: "Test chart".into(),
            note: String::new(),
            plot: Plot::Lines {
                x,
                y: Axis::new("GOPS", Scale::Linear, Ticks::Number),
                series,
                guides: Vec::new(),
                markers,
            },
        }
    }

    fn threads() -> Axis {
        Axis::new("threads", Scale::Log, Ticks::Count)
    }

    fn series(name: &str, points: &[(f64, f64)]) -> Series {
        Series {
            details: Vec::new(),
            name: name.into(),
            points: points.to_vec(),
        }
    }

    /// The `cx` of every circle, in document order.
    fn circle_xs(svg: &str) -> Vec<f64> {
        svg.split("<circle")
            .skip(1)
            .filter_map(|c| c.split("cx=\"").nth(1)?.split('"').next()?.parse().ok())
            .collect()
    }

    #[test]
    fn a_series_gives_one_dot_per_point_and_a_line() {
        let c = lines(
            threads(),
            vec![
                series("avx512", &[(1.0, 57.0), (2.0, 114.0), (4.0, 220.0)]),
                series("avx2", &[(1.0, 30.0), (2.0, 60.0)]),
            ],
            vec![],
        );
        let svg = svg(&c).unwrap().unwrap();
        assert!(svg.starts_with("<svg"), "{}", &svg[..100.min(svg.len())]);
        assert!(svg.trim_end().ends_with("</svg>"));
        assert_eq!(svg.matches("<circle").count(), 5);
        assert!(svg.matches("<polyline").count() >= 2);
        for text in ["Test chart", "avx512", "avx2", "threads", "GOPS"] {
            assert!(svg.contains(text), "{text} missing");
        }
        // The first series' colour is used.
        assert!(svg.contains("#1F77B4"), "{svg}");
    }

    /// A point's spread: an error bar (a vertical line and two caps) where its repetitions
    /// differ, each repetition as a dot from five, and a hover target with its text; a point
    /// without spread draws none of them.
    #[test]
    fn points_show_their_spread_samples_and_hover_text() {
        let mut s = series("avx512", &[(1.0, 57.0), (2.0, 114.0)]);
        s.details = vec![
            Detail {
                x: 1.0,
                y: 57.0,
                min: 50.0,
                max: 60.0,
                samples: vec![50.0, 55.0, 57.0, 59.0, 60.0],
                tip: "DP · 1 thread <&>".into(),
            },
            Detail {
                x: 2.0,
                y: 114.0,
                min: 114.0,
                max: 114.0,
                samples: vec![114.0, 114.0],
                tip: "DP · 2 threads".into(),
            },
        ];
        let plain = svg(&lines(
            threads(),
            vec![series("avx512", &[(1.0, 57.0), (2.0, 114.0)])],
            vec![],
        ))
        .unwrap()
        .unwrap();
        let drawn = svg(&lines(threads(), vec![s], vec![])).unwrap().unwrap();
        // Two dots for the points, five for the first point's repetitions, two hover targets.
        assert_eq!(plain.matches("<circle").count(), 2);
        assert_eq!(drawn.matches("<circle").count(), 2 + 5 + 2);
        // One bar and two caps for the first point only.
        let paths = |svg: &str| svg.matches("<polyline").count() + svg.matches("<path").count();
        assert_eq!(paths(&drawn), paths(&plain) + 3, "{drawn}");
        assert!(
            drawn.contains("<title>DP · 1 thread &lt;&amp;&gt;</title>"),
            "{drawn}"
        );
        assert!(drawn.contains("<title>DP · 2 threads</title>"));
        assert!(!plain.contains("<title>"));
    }

    #[test]
    fn no_data_gives_no_chart() {
        let empty = lines(threads(), vec![], vec![]);
        assert!(svg(&empty).unwrap().is_none());
        assert!(png(&empty, 1).unwrap().is_none());
        let nothing_drawable = lines(
            threads(),
            vec![series(
                "nan",
                &[(1.0, f64::NAN), (f64::INFINITY, 2.0), (0.0, 3.0)],
            )],
            vec![Marker {
                x: 4.0,
                label: "marker".into(),
            }],
        );
        assert!(
            svg(&nothing_drawable).unwrap().is_none(),
            "0 has no logarithm"
        );
        let no_bars = Chart {
            plot: Plot::Bars {
                rows: vec!["DP ×1".into()],
                value: Axis::new("%", Scale::Linear, Ticks::Number),
                series: vec![BarSeries {
                    name: "peakbench".into(),
                    values: vec![None],
                }],
                guide: None,
            },
            ..empty
        };
        assert!(svg(&no_bars).unwrap().is_none());
    }

    #[test]
    fn points_that_cannot_be_drawn_are_left_out() {
        let c = lines(
            threads(),
            vec![series(
                "s",
                &[(1.0, f64::NAN), (2.0, 5.0), (-1.0, 3.0), (4.0, 7.0)],
            )],
            vec![],
        );
        assert_eq!(circle_xs(&svg(&c).unwrap().unwrap()).len(), 2);
        // One point, or all values equal, still makes a frame.
        let one = lines(threads(), vec![series("s", &[(2.0, 0.0)])], vec![]);
        assert_eq!(svg(&one).unwrap().unwrap().matches("<circle").count(), 1);
    }

    #[test]
    fn log_axis_spaces_equal_ratios_equally_and_marks_sizes() {
        let c = lines(
            Axis::new("working set", Scale::Log, Ticks::Bytes),
            vec![series(
                "chase",
                &[
                    (4096.0, 1.0),
                    (8192.0, 1.1),
                    (16384.0, 1.2),
                    (1048576.0, 4.0),
                ],
            )],
            vec![
                Marker {
                    x: 32768.0,
                    label: "L1d 32 KiB".into(),
                },
                Marker {
                    x: 1e12,
                    label: "beyond the data".into(),
                },
            ],
        );
        let svg = svg(&c).unwrap().unwrap();
        let xs = circle_xs(&svg);
        assert_eq!(xs.len(), 4);
        let (d1, d2) = (xs[1] - xs[0], xs[2] - xs[1]);
        assert!(d1 > 0.0 && (d1 - d2).abs() <= 1.0, "{xs:?}");
        // 4 KiB → 1 MiB is 8 doublings: 8 steps of the same length.
        assert!((xs[3] - xs[0] - 8.0 * d1).abs() <= 4.0, "{xs:?}");
        for label in ["4 KiB", "64 KiB", "1 MiB", "L1d 32 KiB"] {
            assert!(svg.contains(label), "{label} missing");
        }
        assert!(
            !svg.contains("beyond the data"),
            "a marker off the axis is left out"
        );
    }

    #[test]
    fn bars_give_one_rect_per_value_and_the_guide() {
        let c = Chart {
            slug: "eff".into(),
            subsystem: "cpu".into(),
            title: "Efficiency".into(),
            note: String::new(),
            plot: Plot::Bars {
                rows: vec!["DP ×1".into(), "DP ×2".into(), "SP ×1".into()],
                value: Axis::new("% of peak", Scale::Linear, Ticks::Number),
                series: vec![
                    BarSeries {
                        name: "peakbench".into(),
                        values: vec![Some(99.0), Some(98.5), Some(f64::NAN)],
                    },
                    BarSeries {
                        name: "likwid-bench".into(),
                        values: vec![None, Some(99.4), None],
                    },
                ],
                guide: Some(Marker {
                    x: 100.0,
                    label: "peak".into(),
                }),
            },
        };
        let plain = lines(threads(), vec![series("s", &[(1.0, 1.0)])], vec![]);
        let base = svg(&plain).unwrap().unwrap().matches("<rect").count();
        let svg = svg(&c).unwrap().unwrap();
        // The plain chart: the background and one legend swatch. This one: 3 bars, the
        // background, two series swatches and the guide's swatch of three dashes.
        assert_eq!(base, 2, "{svg}");
        assert_eq!(svg.matches("<rect").count(), 3 + 1 + 2 + 3, "{svg}");
        for text in ["DP ×2", "SP ×1", "likwid-bench", "peak", "99.4"] {
            assert!(svg.contains(text), "{text} missing");
        }
    }

    #[test]
    fn png_has_the_chart_at_its_scale() {
        let c = lines(
            threads(),
            vec![series("s", &[(1.0, 1.0), (2.0, 2.0)])],
            vec![],
        );
        let bytes = png(&c, 2).unwrap().unwrap();
        let decoder = png::Decoder::new(std::io::Cursor::new(bytes));
        let mut reader = decoder.read_info().unwrap();
        let mut buf = vec![0; reader.output_buffer_size().unwrap()];
        let info = reader.next_frame(&mut buf).unwrap();
        // Twice the SVG's size: 720 × 420 and the legend's row below.
        let layout = layout(&c).unwrap().unwrap();
        assert_eq!((layout.width, layout.plot_height), (720, 420));
        assert!(layout.height > 420);
        assert_eq!((info.width, info.height), (1440, 2 * layout.height));
        let pixels = &buf[..info.buffer_size()];
        let colour = PALETTE[0];
        let series_pixels = pixels
            .chunks(3)
            .filter(|p| p[0] == colour.0 && p[1] == colour.1 && p[2] == colour.2)
            .count();
        assert!(series_pixels > 200, "{series_pixels} pixels of the series");
        let dark = pixels
            .chunks(3)
            .filter(|p| p[0] < 100 && p[1] < 100 && p[2] < 100);
        assert!(dark.count() > 1000, "text and axes are drawn");
    }

    #[test]
    fn ticks_read_well() {
        assert_eq!(format_number(2.0, 0), "2");
        assert_eq!(format_number(0.25, 2), "0.25");
        assert_eq!(format_number(15000.0, 0), "15k");
        assert_eq!(format_number(2_500_000.0, 0), "2.5M");
        let t = linear_ticks(0.0, 10.0, Ticks::Number);
        assert_eq!(
            t.iter().map(|t| t.1.as_str()).collect::<Vec<_>>(),
            ["0", "2", "4", "6", "8", "10"]
        );
        let t = power_of_two_ticks(4096f64.ln(), 65536f64.ln());
        assert_eq!(t.first().unwrap().1, "4 KiB");
        assert_eq!(t.last().unwrap().1, "64 KiB");
        let t = log_ticks(1f64.ln(), 100f64.ln());
        let labels: Vec<&str> = t.iter().map(|t| t.1.as_str()).collect();
        assert_eq!(labels, ["1", "2", "5", "10", "20", "50", "100"]);
        assert!(
            log_ticks(100f64.ln(), 120f64.ln()).len() >= 2,
            "narrow range"
        );
        assert!(linear_ticks(0.0, f64::INFINITY, Ticks::Number).is_empty());
    }
}
