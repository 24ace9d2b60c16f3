//! A chart's legend, laid out below its plotting area so that it never covers a point or a
//! line: one entry per series (a filled swatch) and per guide (a dashed one), left to right,
//! wrapping onto further rows; a label too long for a row is wrapped at its spaces (a word
//! longer than a row is cut with "…"). Sizes are CSS pixels, multiplied by the PNG's scale.

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// One entry: its label, colour, and whether it is a dashed guide rather than a series.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    pub name: String,
    pub color: RGBColor,
    /// The dash and gap lengths (CSS px) where the line is dashed (a guide, or a series past
    /// the palette's colours), as the chart draws it; None for a solid series.
    pub dash: Option<(f64, f64)>,
}

/// The label's font size.
pub const FONT_SIZE: f64 = 16.0;
/// The height of one line of a label.
const LINE: f64 = 20.0;
/// The swatch's width, and the gap between it and its label.
const SWATCH: f64 = 16.0;
const GAP: f64 = 6.0;
/// Between two entries on a row.
const SPACING: f64 = 22.0;
/// Left and right of the rows, and above and below them.
const MARGIN: f64 = 14.0;
const PAD: f64 = 4.0;

/// An entry placed: its top-left corner in the legend's area and its label's lines.
#[derive(Debug, Clone, PartialEq)]
pub struct Placed {
    pub x: f64,
    pub y: f64,
    pub lines: Vec<String>,
}

/// The legend of a chart `width` pixels wide: where each entry goes, and the height it takes
/// (0 without entries).
#[derive(Debug, Clone, PartialEq)]
pub struct Layout {
    pub items: Vec<Placed>,
    pub height: f64,
}

/// The width `text` takes in the charts' font at `size` pixels (the bundled font must be
/// registered; a rough estimate where it cannot be measured).
pub fn text_width(text: &str, size: f64) -> f64 {
    ("sans-serif", size)
        .into_font()
        .box_size(text)
        .map(|(w, _)| w as f64)
        .unwrap_or(text.chars().count() as f64 * size * 0.62)
}

/// `text` cut with "…" to at most `room` pixels at `size`.
pub fn fit(text: &str, size: f64, room: f64) -> String {
    if text_width(text, size) <= room {
        return text.to_string();
    }
    let chars: Vec<char> = text.chars().collect();
    let mut n = chars.len();
    while n > 0 {
        n -= 1;
        let cut: String = chars[..n].iter().collect::<String>() + "…";
        if text_width(&cut, size) <= room {
            return cut;
        }
    }
    "…".into()
}

/// `text` in lines of at most `room` pixels, broken at spaces.
fn wrap(text: &str, room: f64) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    let mut line = String::new();
    for word in text.split_whitespace() {
        let candidate = if line.is_empty() {
            word.to_string()
        } else {
            format!("{line} {word}")
        };
        if !line.is_empty() && text_width(&candidate, FONT_SIZE) > room {
            lines.push(std::mem::take(&mut line));
            line = word.to_string();
        } else {
            line = candidate;
        }
    }
    lines.push(line);
    lines
        .into_iter()
        .map(|l| fit(&l, FONT_SIZE, room))
        .collect()
}

/// Lays out `entries` below a chart `width` pixels wide.
pub fn layout(entries: &[Entry], width: f64) -> Layout {
    if entries.is_empty() {
        return Layout {
            items: Vec::new(),
            height: 0.0,
        };
    }
    let right = width - MARGIN;
    let label_room = (right - MARGIN - SWATCH - GAP).max(40.0);
    let (mut x, mut y, mut row) = (MARGIN, PAD, LINE);
    let mut items = Vec::with_capacity(entries.len());
    for e in entries {
        let lines = wrap(&e.name, label_room);
        let w = SWATCH
            + GAP
            + lines
                .iter()
                .map(|l| text_width(l, FONT_SIZE))
                .fold(0.0, f64::max);
        if x > MARGIN && x + w > right {
            x = MARGIN;
            y += row;
            row = LINE;
        }
        row = row.max(LINE * lines.len() as f64);
        items.push(Placed { x, y, lines });
        x += w + SPACING;
    }
    Layout {
        items,
        height: y + row + PAD,
    }
}

/// Draws `layout` on `area` (the strip below the chart); `s` scales every size.
pub fn draw<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    layout: &Layout,
    entries: &[Entry],
    s: f64,
) -> Result<(), String> {
    let px = |v: f64| (v * s).round() as i32;
    let style = TextStyle::from(("sans-serif", FONT_SIZE * s).into_font())
        .pos(Pos::new(HPos::Left, VPos::Center));
    for (placed, e) in layout.items.iter().zip(entries) {
        let mid = placed.y + LINE / 2.0;
        let (x0, x1) = (placed.x, placed.x + SWATCH);
        if let Some((dash, gap)) = e.dash {
            // The line's dashes, as the chart draws it, across the swatch (scaled to show
            // at least two).
            let k = (SWATCH / (2.0 * dash + gap)).min(1.0);
            let (dash, gap) = (dash * k, gap * k);
            let mut a = x0;
            while a < x1 {
                area.draw(&Rectangle::new(
                    [
                        (px(a), px(mid - 1.0)),
                        (px((a + dash).min(x1)), px(mid + 1.0)),
                    ],
                    e.color.filled(),
                ))
                .map_err(|e| e.to_string())?;
                a += dash + gap;
            }
        } else {
            area.draw(&Rectangle::new(
                [(px(x0), px(mid - 5.0)), (px(x1), px(mid + 5.0))],
                e.color.filled(),
            ))
            .map_err(|e| e.to_string())?;
        }
        for (i, line) in placed.lines.iter().enumerate() {
            area.draw(&Text::new(
                line.clone(),
                (px(x1 + GAP), px(mid + LINE * i as f64)),
                style.clone(),
            ))
            .map_err(|e| e.to_string())?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(name: &str) -> Entry {
        Entry {
            name: name.into(),
            color: RGBColor(0, 0, 0),
            dash: None,
        }
    }

    /// Entries go left to right and wrap onto rows; a label wider than a row wraps at its
    /// spaces; nothing passes the right margin.
    #[test]
    fn entries_wrap_and_stay_inside() {
        super::super::plot::font().unwrap();
        let short: Vec<Entry> = (0..12).map(|i| entry(&format!("series {i}"))).collect();
        let l = layout(&short, 720.0);
        assert!(
            l.items.iter().any(|p| p.y > PAD),
            "twelve entries take rows"
        );
        let long = [entry(&"word ".repeat(60))];
        let l = layout(&long, 720.0);
        assert!(l.items[0].lines.len() > 1, "{:?}", l.items[0].lines);
        for (p, e) in l.items.iter().zip(&long) {
            let _ = e;
            for line in &p.lines {
                assert!(p.x + SWATCH + GAP + text_width(line, FONT_SIZE) <= 720.0 - MARGIN);
            }
        }
        assert!(l.height >= LINE * l.items[0].lines.len() as f64);
        assert_eq!(layout(&[], 720.0).height, 0.0);
        assert!(fit(&"x".repeat(500), 14.0, 100.0).ends_with('…'));
    }
}
