//! A prepared chart drawn with plotters: lines with their spread and guides, or bars.

use super::prepare::{Bars, Frame, Lines, Prepared, from_plot};
use super::{
    Chart, ChartError, Detail, MARKER, PALETTE, SERIES_DASH, STRIP_FROM, Scale, Tip, err,
    guide_style, legend,
};
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// `svg` with a transparent hover target over each measured point, its exact value and
/// parameters in an SVG `<title>` (the browser's tooltip; no script).
pub(super) fn with_tips(svg: String, tips: &[Tip]) -> String {
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

pub(super) fn text_style(size: f64) -> TextStyle<'static> {
    TextStyle::from(("sans-serif", size).into_font())
}

/// What every part of a chart is drawn with, `s` times its CSS size (1 for SVG).
struct Pen {
    s: f64,
    title: String,
    grid: ShapeStyle,
    axis: ShapeStyle,
    small: TextStyle<'static>,
}

impl Pen {
    /// A length in pixels: at least one.
    fn px(&self, v: f64) -> u32 {
        (v * self.s).round().max(1.0) as u32
    }
}

/// Draws a prepared chart on `root`; `s` scales every size (1 for SVG). Returns the hover texts
/// of the measured points, at their pixels.
pub(super) fn draw<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    chart: &Chart,
    prepared: &Prepared,
    s: f64,
) -> Result<Vec<Tip>, ChartError> {
    let px = |v: f64| (v * s).round().max(1.0) as u32;
    // A title wider than the chart is cut to it.
    let (width, _) = root.dim_in_pixel();
    let pen = Pen {
        s,
        title: legend::fit(&chart.title, 22.0, width as f64 / s - 28.0),
        grid: RGBColor(0, 0, 0).mix(0.12).stroke_width(px(1.0)),
        axis: RGBColor(60, 60, 60).stroke_width(px(1.0)),
        small: text_style(14.0 * s).color(&MARKER),
    };
    match prepared {
        Prepared::Lines(l) => draw_lines(root, &pen, l),
        Prepared::Bars(b) => draw_bars(root, &pen, b),
    }
}

type Ctx<'a, DB> = ChartContext<'a, DB, Cartesian2d<Frame, Frame>>;

/// A line chart: its frame, markers, series, each point's spread and the guides.
fn draw_lines<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    pen: &Pen,
    l: &Lines,
) -> Result<Vec<Tip>, ChartError> {
    let (s, px) = (pen.s, |v: f64| pen.px(v));
    let (x, y) = (&l.x, &l.y);
    let mut ctx = ChartBuilder::on(root)
        .caption(&pen.title, text_style(22.0 * s))
        .margin(px(14.0))
        .x_label_area_size(px(54.0))
        .y_label_area_size(px(80.0))
        .build_cartesian_2d(x.clone(), y.clone())
        .map_err(err)?;
    let x_fmt = |p: &f64| x.label(*p);
    let y_fmt = |p: &f64| y.label(*p);
    ctx.configure_mesh()
        .x_desc(l.x_label.as_str())
        .y_desc(l.y_label.as_str())
        .x_label_formatter(&x_fmt)
        .y_label_formatter(&y_fmt)
        .label_style(text_style(16.0 * s))
        .axis_desc_style(text_style(17.0 * s))
        .bold_line_style(pen.grid)
        .axis_style(pen.axis)
        .draw()
        .map_err(err)?;
    draw_markers(&mut ctx, pen, l)?;
    for (i, (_, points)) in l.series.iter().enumerate() {
        draw_series(&mut ctx, pen, i, points)?;
    }
    let tips = draw_spread(&mut ctx, pen, &l.details)?;
    for (i, (_, points)) in l.guides.iter().enumerate() {
        guide(&mut ctx, pen, i, points.iter().copied())?;
    }
    Ok(tips)
}

/// Guide `i` (a peak, ideal scaling, a roof): a grey dashed line through `points`, in the
/// `i`th [`guide_style`].
fn guide<DB: DrawingBackend>(
    ctx: &mut Ctx<'_, DB>,
    pen: &Pen,
    i: usize,
    points: impl Iterator<Item = (f64, f64)> + Clone,
) -> Result<(), ChartError> {
    let style = guide_style(i);
    ctx.draw_series(DashedLineSeries::new(
        points,
        pen.px(style.dash),
        pen.px(style.gap),
        style.color.stroke_width(pen.px(1.5)),
    ))
    .map_err(err)?;
    Ok(())
}

/// The markers: a dashed vertical line each, with its label at the top.
fn draw_markers<DB: DrawingBackend>(
    ctx: &mut Ctx<'_, DB>,
    pen: &Pen,
    l: &Lines,
) -> Result<(), ChartError> {
    let (s, px) = (pen.s, |v: f64| pen.px(v));
    let (x, y) = (&l.x, &l.y);
    for (i, (pos, label)) in l.markers.iter().enumerate() {
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
                pen.small.pos(Pos::new(HPos::Right, VPos::Top)),
            )
        } else {
            Text::new(label.clone(), (px(4.0) as i32, dy), pen.small.clone())
        };
        ctx.draw_series(std::iter::once(EmptyElement::at((*pos, y.hi)) + text))
            .map_err(err)?;
    }
    Ok(())
}

/// Series `i`: a line in its palette colour; past the palette the colours come round again,
/// and these series are dashed, their points squares, as their legend swatches are.
fn draw_series<DB: DrawingBackend>(
    ctx: &mut Ctx<'_, DB>,
    pen: &Pen,
    i: usize,
    points: &[(f64, f64)],
) -> Result<(), ChartError> {
    let px = |v: f64| pen.px(v);
    let color = PALETTE[i % PALETTE.len()];
    if i < PALETTE.len() {
        ctx.draw_series(
            LineSeries::new(points.iter().copied(), color.filled().stroke_width(px(2.0)))
                .point_size(px(3.5)),
        )
        .map_err(err)?;
        return Ok(());
    }
    ctx.draw_series(DashedLineSeries::new(
        points.iter().copied(),
        px(SERIES_DASH.0),
        px(SERIES_DASH.1),
        color.stroke_width(px(2.0)),
    ))
    .map_err(err)?;
    let half = px(3.5) as i32;
    ctx.draw_series(points.iter().map(|p| {
        EmptyElement::at(*p) + Rectangle::new([(-half, -half), (half, half)], color.filled())
    }))
    .map_err(err)?;
    Ok(())
}

/// Each measured point's spread: an error bar from the least to the greatest repetition, and
/// each repetition as a dot beside it where there are enough to show their distribution.
/// Returns the points' hover texts.
fn draw_spread<DB: DrawingBackend>(
    ctx: &mut Ctx<'_, DB>,
    pen: &Pen,
    details: &[Vec<Detail>],
) -> Result<Vec<Tip>, ChartError> {
    let px = |v: f64| pen.px(v);
    let mut tips = Vec::new();
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
                        EmptyElement::at((d.x, end)) + PathElement::new([(-cap, 0), (cap, 0)], bar),
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
    Ok(tips)
}

/// A bar chart: rows of bars, each bar's value beside it, and the guide.
fn draw_bars<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    pen: &Pen,
    b: &Bars,
) -> Result<Vec<Tip>, ChartError> {
    let (s, px) = (pen.s, |v: f64| pen.px(v));
    let (value, rows) = (&b.value, &b.rows);
    let label_width = (b.longest_row as f64 * 8.6 + 24.0).clamp(60.0, 340.0);
    let mut ctx = ChartBuilder::on(root)
        .caption(&pen.title, text_style(22.0 * s))
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
        .x_desc(b.value_label.as_str())
        .x_label_formatter(&x_fmt)
        .y_label_formatter(&y_fmt)
        .label_style(text_style(16.0 * s))
        .axis_desc_style(text_style(17.0 * s))
        .bold_line_style(pen.grid)
        .axis_style(pen.axis)
        .draw()
        .map_err(err)?;
    let mut tips = Vec::new();
    for j in 0..b.series.len() {
        tips.extend(draw_bar_series(&mut ctx, pen, b, j)?);
    }
    if let Some((pos, _)) = &b.guide {
        // Named in the legend: near the peak, a label on the chart would cover the bars'
        // values.
        guide(
            &mut ctx,
            pen,
            0,
            [(*pos, rows.lo), (*pos, rows.hi)].into_iter(),
        )?;
    }
    Ok(tips)
}

/// Bar series `j`: a bar per row with a value, its value right of its end, and its hover text;
/// [`ABSENT`] where a row has none.
fn draw_bar_series<DB: DrawingBackend>(
    ctx: &mut Ctx<'_, DB>,
    pen: &Pen,
    b: &Bars,
    j: usize,
) -> Result<Vec<Tip>, ChartError> {
    let (s, px) = (pen.s, |v: f64| pen.px(v));
    let (name, values) = &b.series[j];
    let n = b.rows.ticks.len();
    let band = 0.8;
    let bar = band / b.series.len().max(1) as f64;
    let base = match b.value_scale {
        Scale::Linear => 0f64.clamp(b.value.lo, b.value.hi),
        Scale::Log => b.value.lo,
    };
    let at_middle = pen.small.pos(Pos::new(HPos::Left, VPos::Center));
    let color = PALETTE[j % PALETTE.len()];
    let top = |i: usize| (n - 1 - i) as f64 + band / 2.0 - j as f64 * bar;
    let bars: Vec<(f64, f64)> = values
        .iter()
        .enumerate()
        .filter_map(|(i, v)| v.map(|v| (top(i), v)))
        .collect();
    ctx.draw_series(
        bars.iter()
            .map(|&(top, v)| Rectangle::new([(base, top), (v, top - 0.9 * bar)], color.filled())),
    )
    .map_err(err)?;
    let mut tips = Vec::new();
    for (i, v) in values.iter().enumerate() {
        let Some(v) = v else { continue };
        let (tx, ty) = ctx.backend_coord(&(*v, top(i) - 0.45 * bar));
        tips.push((
            tx,
            ty,
            format!(
                "{}\n{name}: {}",
                b.rows.label((n - 1 - i) as f64),
                crate::units::format_sig(from_plot(*v, b.value_scale))
            ),
        ));
    }
    // Each bar's value right of its end; where it would cross the guide line, right of the
    // guide instead.
    let guide_px = b
        .guide
        .as_ref()
        .map(|(g, _)| ctx.backend_coord(&(*g, b.rows.lo)).0);
    for &(top, v) in &bars {
        let text = crate::units::format_sig(from_plot(v, b.value_scale));
        let (end, _) = ctx.backend_coord(&(v, top));
        let w = (legend::text_width(&text, 14.0) * s) as i32;
        let gap = px(4.0) as i32;
        let dx = match guide_px {
            Some(g) if end + gap <= g + gap && end + gap + w >= g - gap => g - end + gap,
            _ => gap,
        };
        ctx.draw_series(std::iter::once(
            EmptyElement::at((v, top - 0.45 * bar)) + Text::new(text, (dx, 0), at_middle.clone()),
        ))
        .map_err(err)?;
    }
    // A row without this series' figure says so where its bar would start: absent, not zero.
    let absent: Vec<f64> = values
        .iter()
        .enumerate()
        .filter(|(_, v)| v.is_none())
        .map(|(i, _)| top(i) - 0.45 * bar)
        .collect();
    ctx.draw_series(absent.iter().map(|&middle| {
        EmptyElement::at((base, middle)) + Text::new(ABSENT, (px(4.0) as i32, 0), at_middle.clone())
    }))
    .map_err(err)?;
    Ok(tips)
}

/// What a bar chart writes where a row has no figure of a series.
pub(super) const ABSENT: &str = "n/a";
