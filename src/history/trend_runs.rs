//! The runs as `history --trend` reads them from the database: each point's identity, mean
//! and whether it is a `--diagnose` re-run from the `points` table's own columns, each run's
//! system read only where it differs from the run before's, and one record read per point (its
//! label). Loading every run whole (every record and sample) took 5.8 s and 1.3 GB for 10,000
//! runs of 63 points (bench/history-scale.sh); the trends need none of that.

use super::trend::{PointInfo, TrendPoint, TrendRun};
use super::{Store, sql_err};
use crate::results::{Report, ResultRecord};
use rusqlite::OptionalExtension;
use std::collections::HashMap;

/// Whether a stored point re-measures another (`--diagnose`): the `rerun` column where this
/// version stored it, else the record's own field (points stored before the column existed).
const RERUN_COLUMN: &str = "COALESCE(rerun, instr(record, '\"rerun\":') > 0)";
const RERUN_RECORD: &str = "instr(record, '\"rerun\":') > 0";

/// A stored point as the trends read it: its place in its run, its stored identity, its mean
/// and whether it is a re-run.
struct Row {
    seq: i64,
    stored: String,
    mean: Option<f64>,
    rerun: bool,
}

impl Store {
    /// Runs `ids` (oldest first) as the trends read them, and what each of their points is.
    /// A run stored before figures were kept in base units is loaded whole (its figures
    /// converted as [`Report::upgraded`] does).
    pub fn trend_runs(
        &self,
        ids: &[i64],
    ) -> anyhow::Result<(Vec<TrendRun>, HashMap<String, PointInfo>)> {
        let what = "cannot read the runs' points";
        let err = sql_err(what, &self.path);
        let mut infos = HashMap::new();
        let (Some(&lo), Some(&hi)) = (ids.iter().min(), ids.iter().max()) else {
            return Ok((Vec::new(), infos));
        };
        // Each run's layout version and system, as stored.
        let mut runs: HashMap<i64, (u32, String)> = HashMap::new();
        let mut q = self
            .conn
            .prepare("SELECT id, schema_version, system FROM runs WHERE id BETWEEN ?1 AND ?2")
            .map_err(&err)?;
        for row in q
            .query_map([lo, hi], |r| Ok((r.get(0)?, (r.get(1)?, r.get(2)?))))
            .map_err(&err)?
        {
            let (id, v) = row.map_err(&err)?;
            runs.insert(id, v);
        }
        // Every point of the range: its run, place, stored identity, mean, re-run.
        let rerun = if self.has_rerun_column().map_err(&err)? {
            RERUN_COLUMN
        } else {
            RERUN_RECORD
        };
        let mut points: HashMap<i64, Vec<Row>> = HashMap::new();
        let mut q = self
            .conn
            .prepare(&format!(
                "SELECT run_id, seq, key, mean, {rerun} FROM points WHERE run_id BETWEEN ?1 AND ?2 ORDER BY run_id, seq, id"
            ))
            .map_err(&err)?;
        for row in q
            .query_map([lo, hi], |r| {
                Ok((
                    r.get::<_, i64>(0)?,
                    Row {
                        seq: r.get(1)?,
                        stored: r.get(2)?,
                        mean: r.get(3)?,
                        rerun: r.get(4)?,
                    },
                ))
            })
            .map_err(&err)?
        {
            let (run, p) = row.map_err(&err)?;
            points.entry(run).or_default().push(p);
        }
        // The stored identity of a point (as the version that stored it computed it) to this
        // version's, from one of its records.
        let mut current: HashMap<String, Option<std::rc::Rc<str>>> = HashMap::new();
        let mut out = Vec::with_capacity(ids.len());
        let mut previous: Option<(String, Report)> = None;
        for &id in ids {
            let Some((schema, system)) = runs.remove(&id) else {
                continue;
            };
            if schema < crate::results::BASE_UNITS_SINCE {
                let report = self.load(id)?;
                let new_machine = previous
                    .as_ref()
                    .is_some_and(|(_, p)| super::machine::Machines::hardware_differs(p, &report));
                out.push(TrendRun::of(id, &report, new_machine, &mut infos));
                previous = Some((system, report));
                continue;
            }
            let new_machine = match &previous {
                Some((text, _)) if *text == system => false,
                _ => {
                    let sys = serde_json::from_str(&system).map_err(|e| {
                        anyhow::anyhow!("{what}: run {id}'s system is unreadable: {e}")
                    })?;
                    let report = Report::new(sys, Vec::new());
                    let differs = previous.as_ref().is_some_and(|(_, p)| {
                        super::machine::Machines::hardware_differs(p, &report)
                    });
                    previous = Some((system, report));
                    differs
                }
            };
            let mut run = TrendRun {
                id,
                new_machine,
                points: Vec::new(),
            };
            for Row {
                seq,
                stored,
                mean,
                rerun,
            } in points.remove(&id).unwrap_or_default()
            {
                let key = match current.get(&stored) {
                    Some(key) => key.clone(),
                    None => {
                        let key = self.point_info(id, seq)?.map(|rec| {
                            let (key, info) = PointInfo::of(&rec);
                            infos.entry(key.clone()).or_insert(info);
                            std::rc::Rc::<str>::from(key)
                        });
                        current.insert(stored, key.clone());
                        key
                    }
                };
                if let Some(key) = key {
                    run.points.push(TrendPoint {
                        key,
                        mean: mean.unwrap_or(f64::NAN),
                        rerun,
                    });
                }
            }
            out.push(run);
        }
        Ok((out, infos))
    }

    /// The record at `seq` of run `run`.
    fn point_info(&self, run: i64, seq: i64) -> anyhow::Result<Option<ResultRecord>> {
        let what = "cannot read a stored point";
        let text: Option<String> = self
            .conn
            .query_row(
                "SELECT record FROM points WHERE run_id = ?1 AND seq = ?2",
                [run, seq],
                |r| r.get(0),
            )
            .optional()
            .map_err(sql_err(what, &self.path))?;
        text.map(|t| {
            serde_json::from_str(&t)
                .map_err(|e| anyhow::anyhow!("{what}: run {run}'s point {seq} is unreadable: {e}"))
        })
        .transpose()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::trend::{Trend, trends, trends_of};

    fn fixture() -> Report {
        let doc = std::fs::read(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("tests/fixtures/history/base.json"),
        )
        .unwrap();
        Report::from_json(&doc).unwrap()
    }

    fn shown(t: &[Trend]) -> String {
        serde_json::to_string(t).unwrap()
    }

    /// The trends read from the table's columns are those of the runs loaded whole: a point
    /// that moved, a `--diagnose` re-run of another knob (not a point of its own), and a run
    /// on another CPU (a new stretch) — in a database with the `rerun` column, and in one
    /// written before it (the record read instead), which a writer then fills in.
    #[test]
    fn the_columns_give_the_trends_of_the_whole_runs() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("h.db");
        let mut store = Store::open(&path).unwrap();
        let base = fixture();
        let mut runs: Vec<(i64, Report)> = Vec::new();
        for i in 0..12 {
            let mut r = base.clone();
            for rec in &mut r.results {
                let k = if i >= 6 { 0.8 } else { 1.0 + 0.001 * i as f64 };
                rec.summary.mean *= k;
            }
            if i == 3 {
                let mut again = r.results[0].clone();
                again.params = crate::results::params::Params::with_defaults(
                    again.workload,
                    serde_json::json!({"threads": 64}),
                )
                .unwrap_or(again.params);
                again.summary.mean *= 3.0;
                again.rerun = Some(crate::results::diagnosis::Rerun {
                    of: 0,
                    cause: "isa".into(),
                    knob: "--isa avx512".into(),
                });
                r.results.push(again);
            }
            if i == 9 {
                r.system.cpu.brand = crate::sysinfo::Fact::known(
                    "Another CPU".to_string(),
                    crate::sysinfo::Source::Detected,
                );
            }
            let id = store.import(&r).unwrap();
            runs.push((id, store.load(id).unwrap()));
        }
        let ids: Vec<i64> = runs.iter().map(|(id, _)| *id).collect();
        let settings = crate::measure::levels::Settings::default();
        let whole = trends(&runs, None, &settings);
        assert!(!whole.is_empty());
        assert!(
            whole.iter().all(|t| t.runs.len() == 12),
            "a re-run became a point"
        );
        let (lean, infos) = store.trend_runs(&ids).unwrap();
        assert_eq!(
            shown(&trends_of(&lean, &infos, None, &settings)),
            shown(&whole)
        );
        // Written before the column: read from the records, the same; a writer fills it in.
        store
            .conn
            .execute_batch("ALTER TABLE points DROP COLUMN rerun")
            .unwrap();
        drop(store);
        let read_only = Store::open_read_only(&path).unwrap();
        assert!(!read_only.has_rerun_column().unwrap());
        let (lean, infos) = read_only.trend_runs(&ids).unwrap();
        assert_eq!(
            shown(&trends_of(&lean, &infos, None, &settings)),
            shown(&whole)
        );
        drop(read_only);
        let store = Store::open(&path).unwrap();
        let marked: i64 = store
            .conn
            .query_row("SELECT SUM(rerun) FROM points", [], |r| r.get(0))
            .unwrap();
        assert_eq!(marked, 1);
    }
}
