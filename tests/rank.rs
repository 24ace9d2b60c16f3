//! `peakbench rank RUN DIR`: where a run stands among others, the outliers of its own kind of
//! machine, a recorded card among them, and what it refuses.

mod common;

use common::history::{fixture, peakbench, scaled};
use std::path::{Path, PathBuf};

/// The most documents a ranking reads (src/cli/rank.rs's `MAX_RUNS`).
const MAX_RUNS: usize = 1000;

/// A fleet in `dir`: the ranked run `a.json` (the recorded base run), two other machines (one
/// of another microarchitecture), and four of A's own hardware, one of them at 0.6 × A.
fn fleet(dir: &Path) -> PathBuf {
    let base: serde_json::Value =
        serde_json::from_slice(&std::fs::read(fixture("base.json")).unwrap()).unwrap();
    let fleet = dir.join("fleet");
    std::fs::create_dir(&fleet).unwrap();
    let mut b = scaled(&base, 0.8);
    b["system"]["cpu"]["brand"]["value"] = "AMD EPYC 7763".into();
    b["system"]["os"]["hostname"]["value"] = "milan".into();
    let mut c = scaled(&base, 3.0);
    c["system"]["cpu"]["brand"]["value"] = "Intel(R) Xeon(R) Platinum 8480+".into();
    c["system"]["cpu"]["microarchitecture"]["value"] = "Intel Sapphire Rapids".into();
    c["system"]["cpu"]["cores"]["value"] = 56.into();
    c["system"]["os"]["hostname"]["value"] = "spr".into();
    let mut docs = vec![("a", base.clone()), ("b", b), ("c", c)];
    for (name, factor) in [("d", 1.0), ("e", 1.02), ("f", 0.98), ("g", 0.6)] {
        let mut doc = scaled(&base, factor);
        doc["system"]["os"]["hostname"]["value"] = format!("node-{name}").into();
        docs.push((name, doc));
    }
    for (name, doc) in docs {
        std::fs::write(
            fleet.join(format!("{name}.json")),
            serde_json::to_vec(&doc).unwrap(),
        )
        .unwrap();
    }
    fleet
}

/// `peakbench rank RUN DIR` on a terminal of 100 columns: what it printed and its status.
fn rank_text(db: &Path, run: &Path, dir: &Path) -> std::process::Output {
    peakbench(db)
        .env("COLUMNS", "100")
        .arg("rank")
        .arg(run)
        .arg(dir)
        .output()
        .unwrap()
}

/// `peakbench rank RUN DIR --json -`, which must succeed: its document.
fn rank_json(db: &Path, run: &Path, dir: &Path) -> serde_json::Value {
    let out = peakbench(db)
        .arg("rank")
        .arg(run)
        .arg(dir)
        .args(["--json", "-"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// Ranked among six others: its DP figure beats 3.5 of them (58 %), 3.5 of the 5 of its
/// microarchitecture (70 %); of its kind (itself and four of its hardware) the one at 0.6 × is the
/// outlier on both figures and the others are not; the ranked run's own document in the
/// directory is left out; the table fits 100 columns; the JSON has every number.
#[test]
fn a_run_among_a_fleet_and_its_outlier() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.db");
    let fleet = fleet(dir.path());
    let out = rank_text(&db, &fleet.join("a.json"), &fleet);
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for line in text.lines() {
        assert!(line.chars().count() <= 100, "{line}\n{text}");
    }
    assert!(
        text.contains("Among 6 other run(s): 4 of its kind")
            && text.contains("5 of its microarchitecture (AMD Zen 4)"),
        "{text}"
    );
    let dp = text
        .lines()
        .find(|l| l.starts_with("DP"))
        .unwrap_or_else(|| panic!("no DP row:\n{text}"));
    assert!(
        dp.contains("58 %") && dp.contains("70 % of 5"),
        "{dp}\n{text}"
    );
    assert!(text.contains("g.json (node-g): 2 of 2 figure(s), their median deviation -40.0 %"));
    assert!(!text.contains("d.json (node-d):"), "{text}");

    let doc = rank_json(&db, &fleet.join("a.json"), &fleet);
    assert_eq!(doc["others"].as_array().unwrap().len(), 6, "{doc}");
    let dp = &doc["rows"][0];
    assert_eq!(dp["runs"], 6, "{dp}");
    assert!((dp["better_than"].as_f64().unwrap() - 3.5 / 6.0).abs() < 1e-9);
    assert_eq!(dp["kind_runs"], 5, "{dp}");
    assert_eq!(dp["deviation"].as_f64().unwrap(), 0.0, "{dp}");
    let outliers = dp["outliers"].as_array().unwrap();
    assert_eq!(outliers.len(), 1, "{dp}");
    let g = outliers[0]["run"].as_u64().unwrap() as usize;
    assert!(
        doc["others"][g - 1]["name"]
            .as_str()
            .unwrap()
            .ends_with("g.json")
    );
    assert_eq!(outliers[0]["worse"], true);
}

/// A recorded card of a real machine among the fleet: its points pair with the base run's by
/// what they measure (one thread with one, all threads with all), and alone of its kind no
/// outlier is judged.
#[test]
fn a_recorded_card_ranks_among_other_machines() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.db");
    let fleet = fleet(dir.path());
    let card = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/machines/sapphire-rapids-kvm-2cpu.json");
    let doc = rank_json(&db, &card, &fleet);
    assert_eq!(doc["others"].as_array().unwrap().len(), 7, "{doc}");
    assert!(
        doc["others"]
            .as_array()
            .unwrap()
            .iter()
            .all(|o| o["same_kind"] == false)
    );
    let rows = doc["rows"].as_array().unwrap();
    let dp = rows
        .iter()
        .find(|r| {
            let l = r["label"].as_str().unwrap();
            l.starts_with("DP ·") && l.ends_with("· 1 thread")
        })
        .unwrap_or_else(|| panic!("{doc}"));
    assert_eq!(dp["runs"], 7, "{dp}");
    assert_eq!(dp["kind_runs"], 1, "{dp}");
    assert!(dp["deviation"].is_null(), "{dp}");
    // Alone of its kind: no outlier is judged, and the table says so.
    let out = peakbench(&db)
        .arg("rank")
        .arg(&card)
        .arg(&fleet)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("Outliers of its kind: not judged: 1 run(s) of its hardware"),
        "{text}"
    );
}

/// The recorded card of the 16-vCPU Emerald Rapids among the cards of the other two recorded
/// machines: its all-thread DP beats both, its one-thread DP one of the two and the other of
/// its microarchitecture (the 2-vCPU Sapphire Rapids); no run is of its kind, so no outlier is
/// judged.
#[test]
fn a_recorded_card_ranks_among_the_other_recorded_machines() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.db");
    let machines = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/machines");
    let others = dir.path().join("others");
    std::fs::create_dir(&others).unwrap();
    for card in ["zen5-kvm-2cpu.json", "sapphire-rapids-kvm-2cpu.json"] {
        std::fs::copy(machines.join(card), others.join(card)).unwrap();
    }
    let doc = rank_json(
        &db,
        &machines.join("emerald-rapids-kvm-16cpu.json"),
        &others,
    );
    assert_eq!(doc["others"].as_array().unwrap().len(), 2, "{doc}");
    let row = |label: &str| {
        doc["rows"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["label"] == label)
            .unwrap_or_else(|| panic!("no {label} row: {doc}"))
            .clone()
    };
    let all = row("DP · weak scaling · all threads");
    assert_eq!(all["runs"], 2, "{all}");
    assert_eq!(all["better_than"], 1.0, "{all}");
    let one = row("DP · weak scaling · 1 thread");
    assert_eq!(one["better_than"], 0.5, "{one}");
    assert_eq!(one["runs_same_microarchitecture"], 1, "{one}");
    assert_eq!(one["better_than_same_microarchitecture"], 1.0, "{one}");
    assert_eq!(one["kind_runs"], 1, "{one}");
    assert!(one["outliers"].as_array().unwrap().is_empty(), "{one}");
    let out = rank_text(
        &db,
        &machines.join("emerald-rapids-kvm-16cpu.json"),
        &others,
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("Among 2 other run(s): 0 of its kind")
            && text.contains("Outliers of its kind: not judged"),
        "{text}"
    );
    for line in text.lines() {
        assert!(line.chars().count() <= 100, "{line}\n{text}");
    }
}

/// What rank refuses, each in one line with exit 2: more documents than it reads, a document
/// changed since peakbench wrote it, nothing else to rank among, a directory without
/// documents.
#[test]
fn rank_refuses_a_changed_document_and_an_empty_field() {
    let dir = tempfile::tempdir().unwrap();
    let card = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/machines/sapphire-rapids-kvm-2cpu.json");
    let mut doc: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&card).unwrap()).unwrap();
    let mean = doc["results"][0]["mean"].as_f64().unwrap();
    doc["results"][0]["mean"] = (mean * 2.0).into();
    let changed = dir.path().join("changed");
    std::fs::create_dir(&changed).unwrap();
    std::fs::write(changed.join("x.json"), serde_json::to_vec(&doc).unwrap()).unwrap();
    let empty = dir.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    let only = dir.path().join("only");
    std::fs::create_dir(&only).unwrap();
    std::fs::copy(&card, only.join("card.json")).unwrap();
    // More documents than a ranking reads: refused before any is read.
    let many = dir.path().join("many");
    std::fs::create_dir(&many).unwrap();
    for i in 0..=MAX_RUNS {
        std::fs::write(many.join(format!("{i:04}.json")), b"{}").unwrap();
    }
    let card = card.to_str().unwrap();
    for (among, expected) in [
        (&many, "1001 documents to rank among, more than 1000"),
        (&changed, "cannot rank among"),
        (&empty, "holds no .json document"),
        (&only, "no other run to rank among"),
    ] {
        common::one_line_exit(&["rank", card, among.to_str().unwrap()], 2, &[expected]);
    }
}
