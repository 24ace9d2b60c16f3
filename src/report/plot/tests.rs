use super::prepare::{
    format_number, linear_ticks, log_ticks, percentile_ticks, power_of_two_ticks,
};
use super::*;
use crate::results::Subsystem;

fn lines(x: Axis, series: Vec<Series>, markers: Vec<Marker>) -> Chart {
    Chart {
        slug: "test".into(),
        subsystem: Subsystem::Cpu,
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
        subsystem: Subsystem::Cpu,
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
    // background, two series swatches and the guide's swatch of two dashes (6 px, a 4 px
    // gap, across 16 px).
    assert_eq!(base, 2, "{svg}");
    assert_eq!(svg.matches("<rect").count(), 3 + 1 + 2 + 2, "{svg}");
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

/// Sizes are ticked within the data: an 80 MiB point gets no 128 MiB tick at the padded edge,
/// whose label would leave the picture.
#[test]
fn size_ticks_stay_within_the_data() {
    let values: Vec<f64> = [8192.0f64, 8.0 * 1048576.0, 80.0 * 1048576.0]
        .iter()
        .map(|v| v.ln())
        .collect();
    let f = super::prepare::frame(&Axis::new("block size", Scale::Log, Ticks::Bytes), &values);
    let labels: Vec<&str> = f.ticks.iter().map(|t| t.1.as_str()).collect();
    assert!(!labels.is_empty());
    assert!(
        f.ticks.iter().all(|t| t.0 <= values[2] + 1e-9),
        "{labels:?}"
    );
    assert!(!labels.contains(&"128 MiB"), "{labels:?}");
}

/// A percentile axis ticks up to the finest percentile drawn and the maximum one nine beyond
/// (`--percentiles` may go finer than 99.99 %); the minimum at 0 goes unlabelled.
#[test]
fn percentile_ticks_reach_the_finest_percentile_drawn() {
    let labels =
        |max: f64| -> Vec<String> { percentile_ticks(max).into_iter().map(|(_, l)| l).collect() };
    assert_eq!(
        labels(nines(0.9999) + 1.0),
        ["50 %", "90 %", "99 %", "99.9 %", "99.99 %", "max"]
    );
    assert_eq!(
        labels(nines(0.99999) + 1.0),
        [
            "50 %", "90 %", "99 %", "99.9 %", "99.99 %", "99.999 %", "max"
        ]
    );
    let at = percentile_ticks(6.0);
    assert_eq!(at.last().unwrap().0, 6.0);
    assert!((at[5].0 - 5.0).abs() < 1e-9, "{at:?}");
}
