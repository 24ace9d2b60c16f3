//! The charts' geometry, read back from their SVG: no text runs past the picture's edges, the
//! legend lies below the plotting area (no point or line is drawn where it is), and each
//! legend entry is inside the picture — for every chart of a recorded quick run, of a disk sweep
//! and of a network sweep.

mod common;

use assert_cmd::Command;
use peakbench::report::{charts, legend, plot};
use peakbench::results::{Report, Subsystem};

/// An attribute's value in an element's text.
fn attr(element: &str, name: &str) -> Option<String> {
    let key = format!(" {name}=\"");
    let start = element.find(&key)? + key.len();
    Some(element[start..].split('"').next()?.to_string())
}

fn num(element: &str, name: &str) -> Option<f64> {
    attr(element, name)?.parse().ok()
}

/// Every element named `tag`: its attributes (from the space before the first) and its text
/// content (for `<text>`).
fn elements<'a>(svg: &'a str, tag: &str) -> Vec<(&'a str, &'a str)> {
    let open = format!("<{tag}");
    svg.split(open.as_str())
        .skip(1)
        .filter(|rest| rest.starts_with(' '))
        .map(|rest| {
            let head_end = rest.find('>').unwrap_or(rest.len());
            let head = &rest[..head_end];
            let body = rest[head_end..]
                .trim_start_matches('>')
                .split('<')
                .next()
                .unwrap_or("");
            (head, body.trim())
        })
        .collect()
}

/// The XML entities plotters writes, back to their characters.
fn unescape(t: &str) -> String {
    t.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&amp;", "&")
}

/// Checks one chart; returns what is wrong with it.
fn faults(chart: &plot::Chart) -> Vec<String> {
    let Some(svg) = plot::svg(chart).unwrap() else {
        return Vec::new();
    };
    let layout = plot::layout(chart).unwrap().unwrap();
    let (w, h, top) = (
        layout.width as f64,
        layout.height as f64,
        layout.plot_height as f64,
    );
    let mut out = Vec::new();
    let name = &chart.slug;
    // Text: inside the picture, by its anchor and measured width (rotated axis titles aside).
    for (head, body) in elements(&svg, "text") {
        if head.contains("transform") || body.is_empty() {
            continue;
        }
        let (Some(x), Some(y), Some(size)) =
            (num(head, "x"), num(head, "y"), num(head, "font-size"))
        else {
            continue;
        };
        let text = unescape(body);
        let tw = legend::text_width(&text, size);
        let left = match attr(head, "text-anchor").as_deref() {
            Some("end") => x - tw,
            Some("middle") => x - tw / 2.0,
            _ => x,
        };
        if left < -0.5 || left + tw > w + 0.5 || y < 0.0 || y > h {
            out.push(format!(
                "{name}: text '{text}' at x {left:.0}..{:.0}, y {y:.0} leaves the {w}×{h} picture",
                left + tw
            ));
        }
    }
    // Points and lines: above the legend.
    for (head, _) in elements(&svg, "circle") {
        // The hover targets are transparent circles over the points themselves.
        if let Some(cy) = num(head, "cy")
            && cy > top
        {
            out.push(format!(
                "{name}: a point at y {cy} is in the legend (from {top})"
            ));
        }
    }
    for (head, _) in elements(&svg, "polyline") {
        let points = attr(head, "points").unwrap_or_default();
        for p in points.split_whitespace() {
            let y: f64 = p
                .split(',')
                .nth(1)
                .and_then(|v| v.parse().ok())
                .unwrap_or(0.0);
            if y > top {
                out.push(format!(
                    "{name}: a line passes y {y} in the legend (from {top})"
                ));
                break;
            }
        }
    }
    for (head, _) in elements(&svg, "line") {
        for k in ["y1", "y2"] {
            if num(head, k).is_some_and(|y| y > top) {
                out.push(format!("{name}: a grid line reaches into the legend"));
            }
        }
    }
    // Every legend entry, swatch and label, inside the picture and drawn below the plot.
    let texts = elements(&svg, "text");
    for item in &layout.legend.items {
        if item.x < 0.0 || item.y < 0.0 || top + item.y > h {
            out.push(format!("{name}: legend entry {:?} outside", item.lines));
        }
        for line in &item.lines {
            let below = texts.iter().any(|(head, body)| {
                unescape(body) == *line && num(head, "y").is_some_and(|y| y > top)
            });
            if !below {
                out.push(format!(
                    "{name}: legend label '{line}' is not below the plot"
                ));
            }
        }
    }
    out
}

fn check(report: &Report, what: &str) -> usize {
    let charts = charts::for_report(report);
    let all: Vec<String> = charts.iter().flat_map(faults).collect();
    assert!(all.is_empty(), "{what}:\n{}", all.join("\n"));
    charts.len()
}

fn run(args: &[&str]) -> Report {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    // The charts' geometry, not the figures: the mock session's records.
    Command::new(env!("CARGO_BIN_EXE_peakbench"))
        .env(common::MOCK_SESSION.0, common::MOCK_SESSION.1)
        .current_dir(dir.path())
        .args(args)
        .args(["--no-history", "--quiet", "--json"])
        .arg(&json)
        .assert()
        .success();
    Report::from_json(&std::fs::read(&json).unwrap()).unwrap()
}

/// Any run's charts, checked the same way: `PEAKBENCH_CHARTS_REPORT=run.json cargo test --test
/// charts` (e.g. a run of the assignment profile, too long to record here).
#[test]
fn a_given_reports_charts_keep_their_geometry() {
    let Some(path) = std::env::var_os("PEAKBENCH_CHARTS_REPORT") else {
        println!("SKIPPED: no PEAKBENCH_CHARTS_REPORT given");
        return;
    };
    let report = Report::from_json(&std::fs::read(&path).unwrap()).unwrap();
    let n = check(&report.displayed(&Default::default()), "the given report");
    println!("{n} charts checked");
}

#[test]
fn no_legend_covers_data_and_no_text_is_clipped() {
    let quick = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/history/quick.json"
    );
    let quick = Report::from_json(&std::fs::read(quick).unwrap()).unwrap();
    let shown = quick.displayed(&Default::default());
    assert!(check(&shown, "quick profile") >= 10);
    // The report's test page: every kind of chart, a long legend.
    assert!(check(&common::chart_report(), "chart report") > 0);
    // A disk sweep over queue depths and block sizes, with two engines.
    let disk = run(&[
        "disk",
        "--engine",
        "null",
        "--workload",
        "RR,WS",
        "--block-size",
        "4K,1M",
        "--iodepth",
        "1,4,16",
        "--size",
        "4M",
        "--runtime",
        "50ms",
        "--ramp",
        "0s",
        "--repeat",
        "2",
    ]);
    assert!(check(&disk, "disk sweep") > 0);
    // A network sweep over streams and message sizes, TCP and UDP.
    let net = run(&[
        "net",
        "--loopback",
        "--protocol",
        "tcp,udp",
        "-P",
        "1,2",
        "--message-size",
        "1K,32K",
        "--duration",
        "100ms",
        "--omit",
        "0s",
        "--repeat",
        "2",
    ]);
    assert!(check(&net, "network sweep") > 0);
}

/// A title and a series name far longer than the chart is wide: cut and wrapped, never past
/// its edges.
#[test]
fn long_titles_and_names_stay_inside() {
    let long = "THROUGHPUT · 1 thread · UDP · 1 stream · 1400 B messages · receiver · client to server · rate 0 bit/s · server 127.0.0.1 ".repeat(3);
    let chart = plot::Chart {
        slug: "long".into(),
        subsystem: Subsystem::Net,
        title: long.clone(),
        note: String::new(),
        plot: plot::Plot::Lines {
            x: plot::Axis::new("time (s)", plot::Scale::Linear, plot::Ticks::Number),
            y: plot::Axis::new("Mbit/s", plot::Scale::Linear, plot::Ticks::Number),
            series: vec![
                plot::Series {
                    name: long.clone(),
                    points: vec![(0.0, 1.0), (1.0, 2.0)],
                    details: Vec::new(),
                },
                plot::Series {
                    name: "x".repeat(300),
                    points: vec![(0.0, 1.5), (1.0, 2.5)],
                    details: Vec::new(),
                },
            ],
            guides: Vec::new(),
            markers: vec![plot::Marker {
                x: 0.98,
                label: "a marker label near the right edge".into(),
            }],
        },
    };
    let all = faults(&chart);
    assert!(all.is_empty(), "{}", all.join("\n"));
}

/// A chart whose series differ tenfold gets a logarithmic y axis, so that the small series is
/// not flattened on the floor.
#[test]
fn series_ten_times_apart_get_a_log_axis() {
    let series = |name: &str, v: f64| plot::Series {
        name: name.into(),
        points: vec![(0.0, v), (1.0, v * 1.1)],
        details: Vec::new(),
    };
    let chart = plot::Chart {
        slug: "t".into(),
        subsystem: Subsystem::Net,
        title: "t".into(),
        note: String::new(),
        plot: plot::Plot::Lines {
            x: plot::Axis::new("time (s)", plot::Scale::Linear, plot::Ticks::Number),
            y: plot::Axis::new("Mbit/s", plot::Scale::Linear, plot::Ticks::Number),
            series: vec![series("TCP", 30_000.0), series("UDP", 2_500.0)],
            guides: Vec::new(),
            markers: Vec::new(),
        },
    };
    let svg = plot::svg(&chart).unwrap().unwrap();
    assert!(svg.contains("Mbit/s, log scale"), "{svg}");
}
