//! Where a run's results go while it runs: the report, the output files (rewritten after every
//! point) and the results database (one transaction per point). One recorder serves a single
//! benchmark command or a whole suite of them (`peakbench run`).

use super::outputs::Outputs;
use super::session::Session;
use crate::error::Interrupted;
use crate::history::Store;
use crate::reference::RefContext;
use crate::results::{Report, ResultRecord};
use crate::sysinfo::peak::plausible::Machine;
use crate::sysinfo::{ClockBudget, SystemInfo, collect};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// The results database of a run: not wanted, not opened yet, open with the run's id, or given
/// up after an error (reported once; the run goes on).
enum History {
    Off,
    Pending,
    On(Store, i64),
    Failed,
}

/// A point as `--verbose` prints it: what it is, its mean and spread, and every repetition, in
/// display units.
fn verbose_line(r: &ResultRecord, display: &crate::units::Display) -> String {
    use crate::units::format_sig;
    let conv = display.fitted([r.figure()]).conversion(r.subsystem, r.unit);
    let f = |v: f64| conv.map_or(v, |c| c.apply(v));
    let unit = conv.map_or(r.unit, |c| c.unit);
    let s = &r.summary;
    let samples: Vec<String> = r.samples.iter().map(|v| format_sig(f(*v))).collect();
    let precise = r.precision.as_ref().map_or(String::new(), |p| {
        use crate::measure::precision::pct;
        format!(
            "; --precision ±{} %: ±{} % after {} measurement{}, {} repetitions in all",
            pct(p.target),
            p.reached.map_or("unknown".into(), pct),
            p.measurements,
            if p.measurements == 1 { "" } else { "s" },
            p.repetitions
        )
    });
    format!(
        "  {} {}: {} {} {unit} ± {} (min {}, max {}, {} repetitions: {}{precise})",
        r.subsystem,
        crate::results::point::label(r),
        r.metric,
        format_sig(f(s.mean)),
        format_sig(f(s.stddev)),
        format_sig(f(s.min)),
        format_sig(f(s.max)),
        r.samples.len(),
        samples.join(" ")
    )
}

pub struct Recorder {
    argv: Vec<String>,
    output: Outputs,
    report: Option<Report>,
    history: History,
    /// The reference tools' context when `--reference` asked for them.
    reference: Option<RefContext>,
    /// Reference errors already reported (each once).
    reference_notes: std::collections::BTreeSet<String>,
    /// Measuring the jobs of a suite, whose job lines say what each measures.
    in_suite: bool,
    /// The event stream (`--json-stream`), once the run began.
    stream: Option<super::stream::Stream>,
}

impl Recorder {
    /// A recorder writing to `output`'s files and, where asked, the database. From now on
    /// Ctrl-C stops the run after the current point (see [`crate::runner::stop`]).
    pub fn new(argv: Vec<String>, output: Outputs) -> Recorder {
        crate::runner::stop::graceful();
        Recorder {
            argv,
            report: None,
            history: if output.history {
                History::Pending
            } else {
                History::Off
            },
            reference: output.reference.then(references),
            reference_notes: Default::default(),
            output,
            in_suite: false,
            stream: None,
        }
    }

    pub fn quiet(&self) -> bool {
        self.output.quiet
    }

    pub fn verbose(&self) -> bool {
        self.output.verbose
    }

    /// The units the user chose for what is printed (`--gbit`, `--mib`, …).
    pub fn display(&self) -> &crate::units::Display {
        &self.output.display
    }

    /// The network run's token: proved to a peakbench server on another host that starts the
    /// reference tools' servers (`net serve --references`).
    pub fn set_net_token(&mut self, token: Option<String>) {
        if let Some(ctx) = &mut self.reference {
            ctx.net_token = token;
        }
    }

    /// What the reference tools may take (`run --budget`).
    pub fn set_reference_limits(&mut self, limits: crate::reference::Limits) {
        if let Some(ctx) = &mut self.reference {
            ctx.set_limits(limits);
        }
    }

    /// Removes the files the reference tools keep between runs (fio's laid-out file).
    pub fn release_reference_files(&self) {
        if let Some(ctx) = &self.reference {
            ctx.release_files();
        }
    }

    /// From now on the recorder measures the jobs of a suite ([`crate::app::suite`]).
    pub fn set_in_suite(&mut self) {
        self.in_suite = true;
    }

    /// Says, before a command measures, what it measures and about how long it takes:
    /// "peakbench cpu: <setup>; estimated 5 s", wrapped to the terminal. Not with `--quiet`,
    /// and in a suite only with `--verbose` (its job lines say it).
    /// `estimate` is None where an announcement of the same command gave it already.
    pub fn announce(&self, command: &str, setup: &str, estimate: Option<std::time::Duration>) {
        if self.output.quiet || (self.in_suite && !self.output.verbose) {
            return;
        }
        let line = match estimate {
            Some(e) => format!(
                "peakbench {command}: {setup}; estimated {}",
                crate::units::format_duration(e)
            ),
            None => format!("peakbench {command}: {setup}"),
        };
        // One write, and a closed standard error is no reason to stop measuring. Escaped: a
        // path or a name from a profile or a peer is in it.
        let text = format!(
            "{}\n",
            crate::text::wrap(
                &crate::text::printable(&line),
                crate::text::terminal_width(),
                "  "
            )
        );
        let _ = std::io::Write::write_all(&mut std::io::stderr().lock(), text.as_bytes());
    }

    /// Takes `sys`, collected already (to plan the run), as the machine the run measures.
    pub fn with_system(mut self, sys: SystemInfo) -> Recorder {
        if self.report.is_none() {
            self.report = Some(Report::new(sys, self.argv.clone()));
        }
        self
    }

    /// The machine the run measures (collected once, on first use). The run enters the
    /// history only when its points start ([`Recorder::drive`]): a command refused while it is
    /// planned records nothing.
    pub fn system(&mut self) -> SystemInfo {
        let report = self
            .report
            .take()
            .unwrap_or_else(|| Report::new(collect(ClockBudget::default()), self.argv.clone()));
        let sys = report.system.clone();
        self.report = Some(report);
        sys
    }

    /// Takes a report measured elsewhere (a cluster run's merge) as this run's: it is stored
    /// and written like a measured one. No reference tool runs for it.
    pub fn adopt(&mut self, mut report: Report) -> anyhow::Result<()> {
        let records = std::mem::take(&mut report.results);
        self.start_history(&report);
        self.reference = None;
        self.report = Some(report);
        self.add(records)
    }

    /// The run so far (None before its first record or system reading).
    pub fn report(&self) -> Option<&Report> {
        self.report.as_ref()
    }

    /// Marks the records from `from` on as measuring another point again (`--diagnose`).
    pub fn mark_reruns(&mut self, from: usize, rerun: &crate::results::diagnosis::Rerun) {
        if let Some(r) = &mut self.report {
            for rec in r.results.iter_mut().skip(from) {
                rec.rerun = Some(rerun.clone());
            }
        }
    }

    /// The points measured so far.
    pub fn results(&self) -> &[ResultRecord] {
        self.report.as_ref().map_or(&[], |r| r.results.as_slice())
    }

    /// Sets the run's checks (`peakbench verify`): in the report, its files and the history.
    pub fn set_verification(
        &mut self,
        v: crate::results::verify::Verification,
    ) -> anyhow::Result<()> {
        self.begin();
        if let History::On(store, run) = &mut self.history
            && let Err(e) = store.set_verification(*run, &v)
        {
            eprintln!("peakbench: warning: the checks are not stored in the history: {e:#}");
        }
        let Some(report) = self.report.as_mut() else {
            return Ok(());
        };
        report.verification = Some(v);
        self.output.write_files(report)
    }

    /// The report measured so far (none when nothing started).
    pub fn into_report(self) -> Option<Report> {
        self.report
    }

    /// The run begins: its machine collected and, where wanted, the run entered in the
    /// history (once).
    fn begin(&mut self) {
        self.system();
        if let Some(report) = self.report.take() {
            self.start_history(&report);
            self.start_stream(&report);
            self.report = Some(report);
        }
    }

    /// Opens the event stream and writes the run's start, where one is asked for and not open.
    fn start_stream(&mut self, report: &Report) {
        let Some(path) = &self.output.json_stream else {
            return;
        };
        if self.stream.is_some() {
            return;
        }
        match crate::files::open_stream(path) {
            Ok(out) => {
                let mut s = super::stream::Stream::new(out, path.display().to_string());
                s.start(report);
                self.stream = Some(s);
            }
            Err(e) => eprintln!(
                "peakbench: warning: no event stream: cannot write {}: {e}",
                crate::text::printable(&path.display().to_string())
            ),
        }
    }

    /// Opens the database and starts the run in it, unless that is not wanted or done.
    fn start_history(&mut self, report: &Report) {
        if !matches!(self.history, History::Pending) {
            return;
        }
        let opened = crate::history::open(self.output.db.as_deref())
            .and_then(|mut store| store.begin_run(report).map(|run| (store, run)));
        self.history = match opened {
            Ok((store, run)) => History::On(store, run),
            Err(e) => {
                eprintln!("peakbench: warning: the run is not stored in the history: {e:#}");
                History::Failed
            }
        };
    }

    /// Runs the reference tool of every record where one applies (one run per point: the
    /// context shares it between the point's records) and puts its figure in the record.
    fn add_references(&mut self, records: &mut [ResultRecord]) {
        let Some(ctx) = &self.reference else {
            return;
        };
        for r in records.iter_mut() {
            match crate::reference::measure_all(r, ctx).map(|m| m.map_err(|e| e.to_string())) {
                None => {
                    // --reference was asked for: say where it cannot apply, once a workload.
                    let why = format!("no reference tool measures {} {}", r.workload, r.metric);
                    let note = format!(
                        "no reference tool measures {} {} {} (its reference column stays empty)",
                        r.subsystem, r.workload, r.metric
                    );
                    if self.reference_notes.insert(note.clone()) {
                        reference_note(&note);
                    }
                    r.reference_unknown_reason = Some(why);
                }
                Some(Ok((reference, others))) => {
                    r.reference = Some(reference);
                    for other in others {
                        match other {
                            Ok(o) => r.other_references.push(o),
                            // The row has its figure: another tool's failure is a note.
                            Err(e) => {
                                let e = e.to_string();
                                if self.reference_notes.insert(e.clone()) {
                                    reference_note(&e);
                                }
                            }
                        }
                    }
                }
                Some(Err(e)) => {
                    if self.reference_notes.insert(e.clone()) {
                        reference_note(&e);
                    }
                    r.reference_unknown_reason = Some(e);
                }
            }
        }
    }

    fn add(&mut self, mut records: Vec<ResultRecord>) -> anyhow::Result<()> {
        self.add_references(&mut records);
        // No figure the document or the database cannot hold (a peak overflowed to infinity
        // is unknown, with the reason).
        let records: Vec<ResultRecord> = records
            .into_iter()
            .map(ResultRecord::with_finite_figures)
            .collect();
        let Some(report) = self.report.as_mut() else {
            return Ok(());
        };
        if let History::On(store, run) = &mut self.history
            && let Err(e) = store.add_records(*run, report.results.len(), &records)
        {
            eprintln!("peakbench: warning: the history stops here: {e:#}");
            self.history = History::Failed;
        }
        if self.output.verbose {
            for r in &records {
                let line = verbose_line(r, &self.output.display);
                eprintln!(
                    "{}",
                    crate::text::wrap(&line, crate::text::terminal_width(), "    ")
                );
            }
        }
        if let Some(s) = &mut self.stream {
            s.points(report.results.len(), &records);
        }
        // A report adopted whole (a multi-node run's merge) takes the records' own list: no
        // second list of them beside the first.
        if report.results.is_empty() {
            report.results = records;
        } else {
            report.results.extend(records);
        }
        self.output.write_files(report)
    }

    /// Runs `points` one after the other with a progress bar on stderr (ticked between rounds,
    /// never inside a timed region), recording every point as soon as it is measured so that an
    /// interrupted run keeps it. A point that fails stops the run; the points before it stay.
    /// With reference tools, the runs of those that will measure a point alternate with its
    /// rounds, as the session's `planned` (a point's records before it runs: empty where it allows none) says
    /// they will ([`crate::reference::Interleave`]).
    /// With [`super::mock::MOCK_ENV`] set, the session's measurement is [`super::mock`]'s.
    pub fn drive<S: Session>(
        &mut self,
        points: &[S::Point],
        session: &mut S,
    ) -> anyhow::Result<()> {
        if super::mock::selected() {
            // Nothing is measured: no noise to fingerprint.
            return self.drive_each(points, &mut super::mock::Mock(session), false);
        }
        self.drive_each(points, session, true)
    }

    /// Runs each point of `points` in `session` and records it; `fingerprint`: with each
    /// point's noise ([`crate::measure::noise`]).
    fn drive_each<S: Session>(
        &mut self,
        points: &[S::Point],
        session: &mut S,
        fingerprint: bool,
    ) -> anyhow::Result<()> {
        self.begin();
        let bar = if self.output.quiet {
            ProgressBar::hidden()
        } else {
            let total = points.iter().map(|p| session.rounds(p)).sum();
            let b = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
            if let Ok(style) = ProgressStyle::with_template(
                "{wide_msg}\n{bar:30} {pos}/{len} rounds, {elapsed} elapsed, about {eta} left",
            ) {
                b.set_style(style);
            }
            b
        };
        for &point in points {
            if crate::runner::stop::requested() {
                bar.finish_and_clear();
                return Err(Interrupted.into());
            }
            bar.set_message(session.label(&point));
            let outcome = self.measure(point, session, &bar, fingerprint);
            let outcome = match (outcome, session.precision()) {
                (Ok(records), Some(p)) => {
                    self.to_precision(point, session, &bar, fingerprint, p, records)
                }
                (outcome, _) => outcome,
            };
            // A point a signal cut short (verify's) is not whole: dropped, whatever it gave.
            if crate::runner::stop::cut_short() {
                bar.finish_and_clear();
                return Err(Interrupted.into());
            }
            match outcome {
                Ok(mut records) => {
                    let cpus = crate::runner::affinity::allowed_cpus().len();
                    let quota = crate::sysinfo::cgroup::own_cpu_quota().map(|q| q.cpus());
                    records.iter_mut().for_each(|r| r.add_notices(cpus, quota));
                    if let Some(report) = &self.report {
                        let machine = Machine::of(&report.system);
                        records
                            .iter_mut()
                            .for_each(|r| r.check_inputs(&machine, None));
                    }
                    bar.suspend(|| self.add(records))?;
                }
                Err(e) => {
                    bar.finish_and_clear();
                    return Err(e);
                }
            }
        }
        bar.finish_and_clear();
        Ok(())
    }

    /// Measures `point` once in `session` (its reference tools' runs between its rounds, its
    /// noise): under `--strict`, again where it was measured under interference (bounded).
    fn measure<S: Session>(
        &self,
        point: S::Point,
        session: &mut S,
        bar: &ProgressBar,
        fingerprint: bool,
    ) -> anyhow::Result<Vec<ResultRecord>> {
        let available = self
            .report
            .as_ref()
            .and_then(|r| r.system.memory.available_bytes.get().copied());
        let mut tries = 0;
        loop {
            let mut tools = self.reference.as_ref().map(|ctx| {
                ctx.interleave(&session.planned(&point), session.rounds(&point), available)
            });
            let before = fingerprint.then(crate::measure::noise::snapshot);
            let mut outcome = session.run(point, &mut || {
                bar.inc(1);
                if let Some(t) = &mut tools {
                    t.tick();
                }
            });
            if let Some(t) = tools {
                t.finish(outcome.is_ok());
            }
            if let (Ok(records), Some(before)) = (&mut outcome, before) {
                let after = crate::measure::noise::snapshot();
                records
                    .iter_mut()
                    .for_each(|r| r.add_noise(&before, &after));
            }
            // --strict: a point measured under interference is measured again (bounded).
            let disturbed = outcome.as_ref().ok().and_then(|records| {
                records
                    .iter()
                    .filter_map(|r| r.noise.as_ref())
                    .find(|n| !n.interference.is_empty())
                    .map(|n| n.interference.join(", "))
            });
            match disturbed {
                Some(causes)
                    if self.output.strict
                        && tries < super::outputs::STRICT_RETRIES
                        && !crate::runner::stop::requested() =>
                {
                    tries += 1;
                    bar.suspend(|| {
                        eprintln!(
                            "peakbench: {}: measured under interference ({causes}); --strict measures it again ({tries} of {})",
                            session.label(&point),
                            super::outputs::STRICT_RETRIES
                        )
                    });
                    bar.inc_length(session.rounds(&point));
                }
                _ => return outcome,
            }
        }
    }

    /// `--precision` ([`crate::measure::precision`]): `point`, measured once as `records`,
    /// measured again with as many repetitions as its spread says the target takes (up to
    /// [`crate::measure::precision::MAX_MEASUREMENTS`] measurements, within `--max-repeat` in
    /// all); the last whole measurement is kept, each record saying what was reached (and,
    /// where it fell short or a measurement failed, why, in its warnings). The session's
    /// repetitions are set back after each.
    fn to_precision<S: Session>(
        &self,
        point: S::Point,
        session: &mut S,
        bar: &ProgressBar,
        fingerprint: bool,
        precision: crate::measure::precision::Precision,
        mut records: Vec<ResultRecord>,
    ) -> anyhow::Result<Vec<ResultRecord>> {
        let pilot = session.repeat();
        let mut made = vec![(pilot, judged(&records))];
        let mut spent = pilot;
        while let Some(n) = precision.next(&made, spent) {
            if crate::runner::stop::requested() {
                break;
            }
            let &(last, reached) = made.last().expect("a measurement");
            session.set_repeat(n);
            bar.inc_length(session.rounds(&point));
            bar.set_message(format!(
                "{} (±{} % after {last} repetitions, --precision ±{} %: measured again with {n})",
                session.label(&point),
                crate::measure::precision::pct(reached.unwrap_or(f64::NAN)),
                crate::measure::precision::pct(precision.target)
            ));
            let again = self.measure(point, session, bar, fingerprint);
            session.set_repeat(pilot);
            // A point a signal cut short is dropped by the caller.
            if crate::runner::stop::cut_short() {
                return again;
            }
            match again {
                Ok(r) => {
                    records = r;
                    made.push((n, judged(&records)));
                    spent = spent.saturating_add(n);
                }
                // The last whole measurement stays the point's, and says why it is not more.
                Err(e) => {
                    let why = format!(
                        "--precision: measuring the point again failed ({e:#}); the record is its last whole measurement"
                    );
                    bar.suspend(|| {
                        eprintln!(
                            "peakbench: {}: {}",
                            session.label(&point),
                            crate::text::printable(&why)
                        )
                    });
                    records
                        .iter_mut()
                        .for_each(|r| r.warnings.push(why.clone()));
                    break;
                }
            }
        }
        let &(last, reached) = made.last().expect("a measurement");
        bar.set_message(session.label(&point));
        let outcome = precision.reached(reached, made.len(), spent);
        let shortfall = outcome.shortfall(last);
        for r in &mut records {
            r.precision = Some(outcome.clone());
            if let Some(why) = &shortfall {
                r.warnings.push(why.clone());
            }
        }
        Ok(records)
    }

    /// Ends the run: its status in the history, the outputs that go to standard output and the
    /// table (also after a failure, for the points measured; not after an interruption);
    /// returns `outcome`.
    pub fn finish(mut self, outcome: anyhow::Result<()>) -> anyhow::Result<()> {
        let status = match &outcome {
            Ok(()) => "complete",
            Err(e) if e.downcast_ref::<Interrupted>().is_some() => "interrupted",
            Err(_) => "failed",
        };
        let points = self.report.as_ref().map_or(0, |r| r.results.len());
        if let Some(s) = &mut self.stream {
            s.end(status, points);
        }
        let refused =
            matches!(&outcome, Err(e) if e.downcast_ref::<crate::error::UsageError>().is_some());
        let stored = match &mut self.history {
            // Refused before its first point: no run is left behind.
            History::On(store, run) if refused && points == 0 => {
                if let Err(e) = store.forget_empty_run(*run) {
                    eprintln!("peakbench: warning: {e:#}");
                }
                None
            }
            History::On(store, run) => match store.finish_run(*run, status) {
                Ok(()) => Some(*run),
                Err(e) => {
                    eprintln!("peakbench: warning: {e:#}");
                    None
                }
            },
            _ => None,
        };
        // The run's report is the terminal's table's at the end (no copy of it beside it).
        let Some(report) = self.report.take() else {
            return outcome;
        };
        if let Err(e) = self.output.write_final_files(&report) {
            return outcome.and(Err(e));
        }
        // A failed run still shows what it measured; an interrupted one stops at once.
        let interrupted = matches!(&outcome, Err(e) if e.downcast_ref::<Interrupted>().is_some());
        if interrupted || (outcome.is_err() && report.results.is_empty()) {
            return outcome;
        }
        self.output.write_stdout(&report)?;
        let db = self.output.db_path().ok();
        let files = self.output.files();
        let written = (!files.is_empty()).then(|| format!("wrote {}", files.join(", ")));
        let stored_as = stored.zip(db.as_ref()).map(|(run, path)| {
            format!(
                "stored as run {run} in {}",
                crate::text::printable(&path.display().to_string())
            )
        });
        if self.output.quiet {
            // One line: where the results are.
            let parts: Vec<String> = [stored_as, written].into_iter().flatten().collect();
            if !parts.is_empty() {
                eprintln!("peakbench: {}", parts.join("; "));
            }
            return outcome;
        }
        let mut text = self.output.table(report);
        if !self.output.verbose {
            let every = match stored {
                Some(run) => format!(
                    "Every row, the peaks' formulas and the notes: -v, or peakbench report {run}; the charts: peakbench report {run} --html report.html"
                ),
                None => "Every row, the peaks' formulas and the notes: -v, or --markdown FILE; the charts: --html FILE".into(),
            };
            text.push_str(&crate::text::wrap(
                &every,
                crate::text::terminal_width(),
                "  ",
            ));
            text.push('\n');
        }
        if self.output.stdout_taken() {
            eprint!("{text}");
        } else {
            crate::files::print(&text)?;
        }
        let width = crate::text::terminal_width();
        if let Some(s) = stored_as {
            eprintln!(
                "{}",
                crate::text::wrap(
                    &format!("{s} (peakbench history, peakbench compare)"),
                    width,
                    "  "
                )
            );
        }
        if let Some(w) = written {
            eprintln!("{}", crate::text::wrap(&w, width, "  "));
        }
        outcome
    }
}
/// The widest 95 % half width among a point's figures that a precision is asked of: its
/// rates, throughputs and latencies (not a loss or a jitter, whose means near zero have no
/// share to speak of).
fn judged(records: &[ResultRecord]) -> Option<f64> {
    use crate::results::Metric;
    crate::measure::precision::widest(
        records
            .iter()
            .filter(|r| {
                matches!(
                    r.metric,
                    Metric::Throughput | Metric::Iops | Metric::Rate | Metric::Latency
                )
            })
            .map(|r| &r.summary),
    )
}

/// The reference tools' context for a run in the current directory, told how to ask the
/// system BLAS which kernels it chose (hpcc's OpenBLAS is told the best on a CPU it does not
/// know).
pub fn references() -> crate::reference::RefContext {
    let mut ctx = crate::reference::RefContext::new(".");
    ctx.blas_core = crate::bench::linalg::system_blas::SystemBlas::detected_core;
    ctx
}

/// A note on the reference tools while the run goes on (a tool missing, failed or without the
/// point), on standard error in the terminal's width.
fn reference_note(note: &str) {
    let line = format!("peakbench: reference: {}", crate::text::printable(note));
    eprintln!(
        "{}",
        crate::text::wrap(&line, crate::text::terminal_width(), "  ")
    );
}
#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::precision::Precision;

    /// A session of one point whose repetitions spread by `spread` around 100 (−, 0, +), that
    /// fails on its `fail_at`-th measurement, remembering each measurement's repetitions.
    struct Spread {
        repeat: usize,
        spread: f64,
        fail_at: Option<usize>,
        measured: Vec<usize>,
    }

    impl Session for Spread {
        type Point = u32;

        fn rounds(&self, _: &u32) -> u64 {
            self.repeat as u64
        }

        fn label(&self, p: &u32) -> String {
            format!("point {p}")
        }

        fn repeat(&self) -> usize {
            self.repeat
        }

        fn set_repeat(&mut self, repeat: usize) {
            self.repeat = repeat;
        }

        fn precision(&self) -> Option<Precision> {
            Some(Precision {
                target: 0.02,
                max_repeat: 50,
            })
        }

        fn planned(&self, _: &u32) -> Vec<ResultRecord> {
            Vec::new()
        }

        fn run(&mut self, _: u32, tick: &mut dyn FnMut()) -> anyhow::Result<Vec<ResultRecord>> {
            self.measured.push(self.repeat);
            if Some(self.measured.len()) == self.fail_at {
                anyhow::bail!("the disk is full");
            }
            (0..self.repeat).for_each(|_| tick());
            let samples = (0..self.repeat)
                .map(|i| 100.0 * (1.0 + self.spread * ((i % 3) as f64 - 1.0)))
                .collect();
            let workload =
                crate::results::Workload::Net(crate::workload::net::NetWorkload::Throughput);
            let params =
                crate::results::params::Params::with_defaults(workload, serde_json::json!({}))
                    .map_err(anyhow::Error::msg)?;
            Ok(vec![ResultRecord::new(
                workload,
                params,
                crate::results::Metric::Throughput,
                crate::results::Unit::MbitPerSec,
                samples,
                Err("none".into()),
            )])
        }
    }

    fn recorder() -> Recorder {
        let quick = ClockBudget {
            warmup: std::time::Duration::ZERO,
            sample: std::time::Duration::from_millis(1),
            samples: 1,
        };
        Recorder::new(Vec::new(), Outputs::silent()).with_system(collect(quick))
    }

    fn session(fail_at: Option<usize>) -> Spread {
        Spread {
            repeat: 3,
            spread: 0.02,
            fail_at,
            measured: Vec::new(),
        }
    }

    /// A first measurement of 3 at ±4.97 % is followed by one of 7 (±1.66 %: met); the record
    /// is the second, and the session's count is set back.
    #[test]
    fn a_point_is_measured_again_until_its_interval_is_within_the_target() {
        let mut rec = recorder();
        let mut s = session(None);
        rec.drive(&[1], &mut s).unwrap();
        assert_eq!((s.measured.as_slice(), s.repeat), (&[3, 7][..], 3));
        let r = &rec.results()[0];
        let p = r.precision.as_ref().unwrap();
        assert_eq!(r.samples.len(), 7);
        assert!(p.met && p.measurements == 2 && p.repetitions == 10, "{p:?}");
        assert!(r.warnings.is_empty(), "{:?}", r.warnings);
    }

    /// A measurement that fails keeps the last whole one, which says so; the run goes on.
    #[test]
    fn a_failed_measurement_keeps_the_last_whole_one() {
        let mut rec = recorder();
        let mut s = session(Some(2));
        rec.drive(&[1, 2], &mut s).unwrap();
        assert_eq!(s.measured, [3, 7, 3, 7]);
        let r = &rec.results()[0];
        let p = r.precision.as_ref().unwrap();
        assert_eq!(r.samples.len(), 3);
        assert!(!p.met && p.measurements == 1 && p.repetitions == 3, "{p:?}");
        assert!(
            r.warnings
                .iter()
                .any(|w| w.contains("measuring the point again failed (the disk is full)")),
            "{:?}",
            r.warnings
        );
        assert_eq!(rec.results()[1].samples.len(), 7);
    }
}
