//! For the HTML report's tests (tests/html*.rs): the page of a report, its SVGs, and headless
//! Chromium to render it.

use peakbench::report;
use peakbench::results::Report;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Charts in [`super::chart_report`]: CPU DP, SP, efficiency, measured beside likwid-bench and
/// the peak (grouped bars); memory COPY, RWS, staircase; disk throughput, IOPS, mean and p99
/// latency against queue depth, latency percentiles, throughput per interval; network goodput,
/// latency percentiles.
pub const CHARTS: usize = 15;

pub fn html_of(r: &Report) -> String {
    String::from_utf8(report::html::render(&super::shown(r))).unwrap()
}

/// The `<svg>…</svg>` elements of a page.
pub fn svgs(html: &str) -> Vec<&str> {
    html.split("<svg")
        .skip(1)
        .map(|s| s.split("</svg>").next().unwrap_or(""))
        .collect()
}

/// Chromium on PATH, as Debian names it or as others do.
pub fn find_chromium() -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    ["chromium", "chromium-browser"]
        .into_iter()
        .find_map(|name| {
            std::env::split_paths(&path)
                .map(|d| d.join(name))
                .find(|p| p.is_file())
        })
}

/// Runs headless Chromium on `page` with `args`, at most 90 s; returns (stdout, stderr).
pub fn chromium(bin: &Path, work: &Path, args: &[String], page: &Path) -> (String, String) {
    let profile = tempfile::tempdir_in(work).unwrap();
    let (out, err) = (work.join("stdout"), work.join("stderr"));
    let mut child = Command::new(bin)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--no-first-run",
            "--no-default-browser-check",
            "--disable-extensions",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--hide-scrollbars",
            "--force-device-scale-factor=1",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .args(args)
        .arg(format!("file://{}", page.display()))
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&out).unwrap())
        .stderr(std::fs::File::create(&err).unwrap())
        .spawn()
        .expect("chromium starts");
    let deadline = Instant::now() + Duration::from_secs(90);
    loop {
        match child.try_wait().unwrap() {
            Some(_) => break,
            None if Instant::now() > deadline => {
                let _ = child.kill();
                let _ = child.wait();
                panic!("chromium did not finish within 90 s: {args:?}");
            }
            None => std::thread::sleep(Duration::from_millis(50)),
        }
    }
    (
        std::fs::read_to_string(out).unwrap_or_default(),
        std::fs::read_to_string(err).unwrap_or_default(),
    )
}

/// Lines of Chromium's log that are messages of the page's console.
pub fn console_lines(stderr: &str) -> Vec<&str> {
    stderr.lines().filter(|l| l.contains("CONSOLE")).collect()
}
