//! The plot engine: data series in, SVG text or PNG bytes out, drawn with plotters. Which
//! charts a report has is `charts`.
//!
//! Text is measured (and, in PNGs, drawn) with DejaVu Sans compiled into the binary from
//! assets/fonts/, so that nothing depends on the fonts of the machine that draws and no C library
//! is involved; in an SVG the text stays text, set in the viewer's sans-serif. Values that cannot
//! be drawn — NaN, infinities, and zero or negative values on a logarithmic axis — are left out;
//! a chart left with no point is no chart (`None`), never an empty frame or a panic.

use super::legend;
use plotters::coord::Shift;
use plotters::prelude::*;
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
    /// at 50 %, 90 %, 99 %, … to the finest percentile drawn, and the maximum one nine beyond.
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
    /// Horizontal bars: one row per label, one bar per series in each row (where the row has
    /// no value of a series, "n/a" in the bar's place: absent, not zero), and an optional
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
    pub subsystem: crate::results::Subsystem,
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
static FONT: &[u8] = include_bytes!("../../../assets/fonts/DejaVuSans.ttf");

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
/// The dash and gap of a series past the palette's colours, CSS px.
pub(super) const SERIES_DASH: (f64, f64) = (6.0, 3.0);

/// How a guide is drawn: its dash and gap (CSS px) and colour.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GuideStyle {
    pub dash: f64,
    pub gap: f64,
    pub color: RGBColor,
}

/// Guide `i`'s style: dashes, dots, long dashes, then the three again in a lighter grey, so
/// that a chart's guides (peaks, ideal scaling, a roofline's roofs) tell apart, as their
/// legend swatches do.
pub fn guide_style(i: usize) -> GuideStyle {
    const DASHES: [(f64, f64); 3] = [(6.0, 4.0), (2.0, 3.0), (14.0, 4.0)];
    const GREYS: [RGBColor; 2] = [MARKER, RGBColor(150, 150, 150)];
    let (dash, gap) = DASHES[i % DASHES.len()];
    GuideStyle {
        dash,
        gap,
        color: GREYS[(i / DASHES.len()) % GREYS.len()],
    }
}

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
        dash: (i >= PALETTE.len()).then_some(SERIES_DASH),
    };
    let guide = |name: &str, i: usize| {
        let style = guide_style(i);
        legend::Entry {
            name: name.to_string(),
            color: style.color,
            dash: Some((style.dash, style.gap)),
        }
    };
    match prepared {
        Prepared::Lines(l) => l
            .series
            .iter()
            .enumerate()
            .map(|(i, (name, _))| entry(name, i))
            .chain(
                l.guides
                    .iter()
                    .enumerate()
                    .map(|(i, (name, _))| guide(name, i)),
            )
            .collect(),
        Prepared::Bars(b) => b
            .series
            .iter()
            .enumerate()
            .map(|(i, (name, _))| legend::Entry {
                dash: None,
                ..entry(name, i)
            })
            .chain(b.guide.iter().map(|(_, label)| guide(label, 0)))
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

mod draw;
mod prepare;
#[cfg(test)]
mod tests;

use draw::{draw, with_tips};

/// A hover text at a pixel of the chart: where the pointer shows it.
type Tip = (i32, i32, String);
use prepare::{Prepared, prepare};
