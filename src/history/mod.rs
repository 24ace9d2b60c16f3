//! The results database: every run, its system information, every point and its samples, in a
//! local SQLite file, so that runs can be listed and compared between dates and machines.
//!
//! Writes are transactional per point: a run is inserted when it starts (status `running`),
//! each point with its samples in one transaction as soon as it is measured, and the status set
//! at the end (`complete`, `failed`, `interrupted`). A run killed outright stays `running` (shown
//! as incomplete) with every point measured before the kill. The database is in WAL mode, so
//! that a reader never sees half a transaction and two runs can write at once (they wait up to
//! [`BUSY_TIMEOUT`] for each other).
//!
//! Tables (documented in docs/history.md): `meta(key, value)` — `db_version`;
//! `runs(id, started_at, finished_at, status, tool_version, schema_version, hostname,
//! command_line, system)`; `points(id, run_id, seq, subsystem, workload, metric, unit, key,
//! mean, stddev, n, record, rerun)`; `samples(point_id, idx, value)`. JSON columns hold the same
//! objects as the JSON document of the run (docs/json-schema.md).

pub mod calibration;
pub mod compare;
pub mod machine;
pub mod run_noise;
pub mod trend;
mod trend_runs;

use crate::results::point::point_key;
use crate::results::{Report, ResultRecord, Tool};
use rusqlite::{Connection, OptionalExtension, params};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The database layout's version, stored in `meta`.
pub const DB_VERSION: u32 = 1;
/// How long a write waits for another process's transaction.
pub const BUSY_TIMEOUT: Duration = Duration::from_secs(10);

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS runs (
    id INTEGER PRIMARY KEY,
    started_at TEXT NOT NULL,
    finished_at TEXT,
    status TEXT NOT NULL,
    tool_version TEXT NOT NULL,
    schema_version INTEGER NOT NULL,
    hostname TEXT NOT NULL,
    command_line TEXT NOT NULL,
    system TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS points (
    id INTEGER PRIMARY KEY,
    run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    seq INTEGER NOT NULL,
    subsystem TEXT NOT NULL,
    workload TEXT NOT NULL,
    metric TEXT NOT NULL,
    unit TEXT NOT NULL,
    key TEXT NOT NULL,
    mean REAL,
    stddev REAL,
    n INTEGER NOT NULL,
    record TEXT NOT NULL,
    rerun INTEGER
);
CREATE INDEX IF NOT EXISTS points_run ON points(run_id, seq);
CREATE TABLE IF NOT EXISTS samples (
    point_id INTEGER NOT NULL REFERENCES points(id) ON DELETE CASCADE,
    idx INTEGER NOT NULL,
    value REAL
);
CREATE INDEX IF NOT EXISTS samples_point ON samples(point_id);
CREATE TABLE IF NOT EXISTS fleets (
    run_id INTEGER PRIMARY KEY REFERENCES runs(id) ON DELETE CASCADE,
    fleet TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS verifications (
    run_id INTEGER PRIMARY KEY REFERENCES runs(id) ON DELETE CASCADE,
    verification TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS calibrations (
    id INTEGER PRIMARY KEY,
    created_at TEXT NOT NULL,
    profile TEXT NOT NULL,
    calibration TEXT NOT NULL
);
";

/// The database's default place: `$XDG_DATA_HOME/peakbench/history.db`, else
/// `$HOME/.local/share/peakbench/history.db`.
/// Every run with its point count (`history`): each count found through the index of a run's
/// points, so that listing N runs costs their points, never N × all points.
const RUN_LIST: &str = "SELECT r.id, r.started_at, r.finished_at, r.status, r.hostname, r.tool_version, r.command_line,
        (SELECT COUNT(*) FROM points p WHERE p.run_id = r.id)
 FROM runs r ORDER BY r.id";

/// A run's points, in order (`compare`, `report`): through the index of a run's points, so that
/// loading one costs its own points whatever the history holds.
const RUN_POINTS: &str = "SELECT record FROM points WHERE run_id = ?1 ORDER BY seq, id";

pub fn default_path() -> Result<PathBuf, String> {
    let non_empty = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty());
    if let Some(d) = non_empty("XDG_DATA_HOME") {
        return Ok(PathBuf::from(d).join("peakbench/history.db"));
    }
    if let Some(h) = non_empty("HOME") {
        return Ok(PathBuf::from(h).join(".local/share/peakbench/history.db"));
    }
    Err("neither XDG_DATA_HOME nor HOME is set; give the database with --db FILE".into())
}

/// The database at `db`, or at the default place when `None` (a usage error when there is
/// none).
pub fn db_path(db: Option<&Path>) -> anyhow::Result<PathBuf> {
    match db {
        Some(p) => Ok(p.to_path_buf()),
        None => default_path().map_err(|e| crate::error::UsageError(e).into()),
    }
}

/// Opens the database at `db` (see [`db_path`]) for writing. The default place's directory is
/// created (the user did not choose it); a database the user named must be in a directory that
/// exists ([`crate::files::check_output_file`]).
pub fn open(db: Option<&Path>) -> anyhow::Result<Store> {
    let path = db_path(db)?;
    if db.is_none() {
        let dir = dir_of(&path);
        std::fs::create_dir_all(dir)
            .map_err(|e| crate::files::explained(e, dir))
            .map_err(|e| anyhow::anyhow!("cannot create the directory {}: {e}", dir.display()))?;
    }
    Store::open(&path)
}

/// A run as `history` lists it.
#[derive(Debug, Clone, serde::Serialize)]
pub struct RunSummary {
    pub id: i64,
    pub started_at: String,
    pub finished_at: Option<String>,
    pub status: String,
    pub hostname: String,
    pub tool_version: String,
    pub command_line: Vec<String>,
    pub points: i64,
}

/// An open results database.
pub struct Store {
    conn: Connection,
    /// Its file, named in errors.
    path: PathBuf,
}

/// The layout version a database records in `meta`.
fn stored_version(conn: &Connection) -> rusqlite::Result<String> {
    conn.query_row("SELECT value FROM meta WHERE key = 'db_version'", [], |r| {
        r.get(0)
    })
}

/// A database of another layout version is refused with what to do.
fn check_version(version: &str, what: &str) -> anyhow::Result<()> {
    if version == DB_VERSION.to_string() {
        return Ok(());
    }
    anyhow::bail!(
        "{what}: it has layout version {version}, this peakbench reads version {DB_VERSION}; use --db to choose another file"
    )
}

/// A database error as one line: `what`, then why. A full file system says which one and
/// what to do (see [`is_full`]).
fn sql_err<'a>(what: &'a str, db: &'a Path) -> impl Fn(rusqlite::Error) -> anyhow::Error + 'a {
    move |e| {
        if is_full(&e, db) {
            let full = std::io::Error::from(std::io::ErrorKind::StorageFull);
            if let Some(problem) = crate::files::space_problem(&full, dir_of(db)) {
                return anyhow::anyhow!(
                    "{what}: {problem}; free space there or choose another database with --db"
                );
            }
        }
        anyhow::anyhow!("{what}: {e}")
    }
}

/// The directory holding the database `db`.
fn dir_of(db: &Path) -> &Path {
    db.parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
}

/// Whether SQLite failed for want of space: SQLITE_FULL ("database or disk is full"), or an
/// I/O error or a file it cannot open while the file system of `db` has nothing left (SQLite
/// says only "disk I/O error" when it cannot grow its -shm file).
fn is_full(e: &rusqlite::Error, db: &Path) -> bool {
    use rusqlite::ErrorCode::{CannotOpen, DiskFull, SystemIoFailure};
    match e {
        rusqlite::Error::SqliteFailure(f, _) => {
            f.code == DiskFull
                || (matches!(f.code, SystemIoFailure | CannotOpen)
                    && crate::files::is_full(dir_of(db)))
        }
        _ => false,
    }
}

/// `path` as an SQLite `file:` URI: absolute, every byte but the unreserved ones and `/`
/// percent-encoded (`#`, `?`, `%`, spaces and bytes that are not UTF-8 included), so that any
/// path names the file it names on the command line.
fn file_uri(path: &Path) -> String {
    use std::os::unix::ffi::OsStrExt;
    let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let mut out = String::from("file:");
    // Built from the components, so that a leading "//" never reads as an authority.
    let mut bytes: Vec<u8> = Vec::new();
    for c in absolute.components() {
        match c {
            std::path::Component::RootDir => {}
            c => {
                bytes.push(b'/');
                bytes.extend_from_slice(c.as_os_str().as_bytes());
            }
        }
    }
    if bytes.is_empty() {
        bytes.push(b'/');
    }
    for b in bytes {
        if b.is_ascii_alphanumeric() || b"-._~/".contains(&b) {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

impl Store {
    /// Opens an existing database for reading only (listing, comparing, reporting): it works on
    /// a read-only file or file system, and never creates or changes anything.
    pub fn open_read_only(path: &Path) -> anyhow::Result<Store> {
        use rusqlite::OpenFlags;
        let what = format!("cannot read the results database {}", path.display());
        if !path.is_file() {
            return Err(crate::error::UsageError(format!(
                "{what}: there is no such file; run a benchmark first, or give --db FILE"
            ))
            .into());
        }
        let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_URI;
        let uri = |extra: &str| format!("{}?mode=ro{extra}", file_uri(path));
        // A WAL database on read-only media has no -shm file to share: then read it as an
        // immutable file (nothing else can be writing to it there).
        let err = sql_err(&what, path);
        let conn = match Connection::open_with_flags(uri(""), flags) {
            Ok(c) if stored_version(&c).is_ok() => c,
            _ => Connection::open_with_flags(uri("&immutable=1"), flags).map_err(&err)?,
        };
        conn.busy_timeout(BUSY_TIMEOUT).map_err(&err)?;
        match stored_version(&conn).optional().map_err(&err)? {
            Some(v) => check_version(&v, &what).map(|()| Store {
                conn,
                path: path.to_path_buf(),
            }),
            None => anyhow::bail!("{what}: it is not a peakbench results database"),
        }
    }

    /// Opens (creating it if needed) the database at `path`, whose directory must exist. A
    /// database this call created is removed again when the file system is too full to set it
    /// up.
    pub fn open(path: &Path) -> anyhow::Result<Store> {
        crate::files::check_output_file(path)?;
        // A device (/dev/null) is a fine output but no database: SQLite would make its journal
        // beside it (/dev/null-journal).
        if std::fs::metadata(path).is_ok_and(|m| !m.is_file()) {
            return Err(crate::error::UsageError(format!(
                "cannot open the results database {}: it is not a regular file; give a new or existing database file",
                crate::text::printable(&path.display().to_string())
            ))
            .into());
        }
        let existed = path.exists();
        let what = format!("cannot open the results database {}", path.display());
        let mut full = false;
        let err = |e: rusqlite::Error| {
            full |= is_full(&e, path);
            sql_err(&what, path)(e)
        };
        let opened = Self::set_up(path, err);
        if opened.is_err() && full && !existed {
            for suffix in ["", "-wal", "-shm", "-journal"] {
                let mut name = path.as_os_str().to_owned();
                name.push(suffix);
                let _ = std::fs::remove_file(name);
            }
        }
        opened
    }

    /// Opens or creates the database at `path`, in WAL mode with the current layout.
    fn set_up(
        path: &Path,
        mut err: impl FnMut(rusqlite::Error) -> anyhow::Error,
    ) -> anyhow::Result<Store> {
        // Without SQLITE_OPEN_URI: a --db named "file:…" is a file of that name, not a URI.
        let flags = rusqlite::OpenFlags::SQLITE_OPEN_READ_WRITE
            | rusqlite::OpenFlags::SQLITE_OPEN_CREATE
            | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let conn = Connection::open_with_flags(path, flags).map_err(&mut err)?;
        conn.busy_timeout(BUSY_TIMEOUT).map_err(&mut err)?;
        // Another program's database is left alone: a file with tables but no peakbench `meta`
        // table is not taken over (nothing is created in it, its journal mode is not changed).
        let tables: Vec<String> = conn
            .prepare("SELECT name FROM sqlite_master WHERE type = 'table'")
            .and_then(|mut q| {
                q.query_map([], |r| r.get(0))?
                    .collect::<Result<Vec<String>, _>>()
            })
            .map_err(&mut err)?;
        if !tables.is_empty() && !tables.iter().any(|t| t == "meta") {
            anyhow::bail!(
                "cannot open the results database {}: it is another program's SQLite database (no peakbench tables); give another --db",
                crate::text::printable(&path.display().to_string())
            );
        }
        // WAL: readers see whole transactions only; a killed writer leaves a readable file.
        let _: String = conn
            .query_row("PRAGMA journal_mode=WAL", [], |r| r.get(0))
            .map_err(&mut err)?;
        conn.execute_batch("PRAGMA foreign_keys=ON; PRAGMA synchronous=NORMAL;")
            .map_err(&mut err)?;
        conn.execute_batch(SCHEMA).map_err(&mut err)?;
        let version = stored_version(&conn).optional().map_err(&mut err)?;
        if let Some(v) = &version {
            check_version(
                v,
                &format!("cannot open the results database {}", path.display()),
            )?;
        }
        // Whether a point re-measures another (`--diagnose`), a column since this version: added
        // to a database of the same layout that lacks it, and filled in once from the records
        // (a version before it inserts none: `history --trend` reads the record there).
        let store = Store {
            conn,
            path: path.to_path_buf(),
        };
        if !store.has_rerun_column().map_err(&mut err)? {
            store
                .conn
                .execute_batch(
                    "BEGIN;
                     ALTER TABLE points ADD COLUMN rerun INTEGER;
                     UPDATE points SET rerun = instr(record, '\"rerun\":') > 0;
                     COMMIT;",
                )
                .map_err(&mut err)?;
        }
        if version.is_none() {
            store
                .conn
                .execute(
                    "INSERT OR IGNORE INTO meta(key, value) VALUES ('db_version', ?1)",
                    [DB_VERSION.to_string()],
                )
                .map_err(&mut err)?;
        }
        Ok(store)
    }

    /// Whether the `points` table has the `rerun` column (a database written by a version
    /// before it has not, until a writer adds it).
    fn has_rerun_column(&self) -> rusqlite::Result<bool> {
        let mut q = self.conn.prepare("PRAGMA table_info(points)")?;
        let names = q.query_map([], |r| r.get::<_, String>(1))?;
        for n in names {
            if n? == "rerun" {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// What failed, naming the database (for the errors of writes).
    fn what(&self, doing: &str) -> String {
        format!("{doing} in the results database {}", self.path.display())
    }

    /// Records the start of a run (status `running`); returns its id.
    pub fn begin_run(&mut self, report: &Report) -> anyhow::Result<i64> {
        let host = report.system.os.hostname.value.clone().unwrap_or_default();
        self.conn
            .execute(
                "INSERT INTO runs(started_at, status, tool_version, schema_version, hostname, command_line, system)
                 VALUES (?1, 'running', ?2, ?3, ?4, ?5, ?6)",
                params![
                    report.started_at,
                    report.tool.version,
                    report.schema_version,
                    host,
                    serde_json::to_string(&report.command_line)?,
                    serde_json::to_string(&report.system)?,
                ],
            )
            .map_err(sql_err(&self.what("cannot store the run"), &self.path))?;
        let run = self.conn.last_insert_rowid();
        if let Some(fleet) = &report.fleet {
            self.conn
                .execute(
                    "INSERT INTO fleets(run_id, fleet) VALUES (?1, ?2)",
                    params![run, serde_json::to_string(fleet)?],
                )
                .map_err(sql_err(
                    &self.what("cannot store the run's nodes"),
                    &self.path,
                ))?;
        }
        Ok(run)
    }

    /// Stores records of `run` (numbered from `first_seq`) with their samples, all or nothing.
    pub fn add_records(
        &mut self,
        run: i64,
        first_seq: usize,
        records: &[ResultRecord],
    ) -> anyhow::Result<()> {
        let what = format!(
            "cannot store the points in the results database {}",
            self.path.display()
        );
        let err = sql_err(&what, &self.path);
        let tx = self.conn.transaction().map_err(&err)?;
        for (i, rec) in records.iter().enumerate() {
            // Its derived figures finite, as a reader expects them: a peak that is not a
            // number is stored unknown, with the reason, never as `null`.
            let rec = &rec.clone().with_finite_figures();
            let finite = |v: f64| v.is_finite().then_some(v);
            tx.execute(
                "INSERT INTO points(run_id, seq, subsystem, workload, metric, unit, key, mean, stddev, n, record, rerun)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
                params![
                    run,
                    (first_seq + i) as i64,
                    rec.subsystem.name(),
                    rec.workload.name(),
                    rec.metric.name(),
                    rec.unit.name(),
                    point_key(rec),
                    finite(rec.summary.mean),
                    finite(rec.summary.stddev),
                    rec.samples.len() as i64,
                    serde_json::to_string(rec)?,
                    rec.rerun.is_some(),
                ],
            )
            .map_err(&err)?;
            let point = tx.last_insert_rowid();
            let mut stmt = tx
                .prepare_cached("INSERT INTO samples(point_id, idx, value) VALUES (?1, ?2, ?3)")
                .map_err(&err)?;
            for (j, s) in rec.samples.iter().enumerate() {
                stmt.execute(params![point, j as i64, finite(*s)])
                    .map_err(&err)?;
            }
        }
        tx.commit().map_err(&err)
    }

    /// Stores (or replaces) `verify`'s checks of `run`.
    pub fn set_verification(
        &mut self,
        run: i64,
        verification: &crate::results::verify::Verification,
    ) -> anyhow::Result<()> {
        self.conn
            .execute(
                "INSERT OR REPLACE INTO verifications(run_id, verification) VALUES (?1, ?2)",
                params![run, serde_json::to_string(verification)?],
            )
            .map_err(sql_err(
                &self.what("cannot store the run's checks"),
                &self.path,
            ))?;
        Ok(())
    }

    /// Stores `calibration`; returns its id.
    pub fn add_calibration(
        &mut self,
        calibration: &calibration::Calibration,
    ) -> anyhow::Result<i64> {
        self.conn
            .execute(
                "INSERT INTO calibrations(created_at, profile, calibration) VALUES (?1, ?2, ?3)",
                params![
                    calibration.created_at,
                    calibration.profile,
                    serde_json::to_string(calibration)?
                ],
            )
            .map_err(sql_err(
                &self.what("cannot store the calibration"),
                &self.path,
            ))?;
        Ok(self.conn.last_insert_rowid())
    }

    /// The stored calibrations, newest first, each with its id; one that is unreadable or
    /// implausible ([`calibration::Calibration::plausible`]) is left out, and a database from
    /// before calibrations has none.
    pub fn calibrations(&self) -> anyhow::Result<Vec<calibration::Calibration>> {
        let what = "cannot read the calibrations";
        let exists: Option<String> = self
            .conn
            .query_row(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'calibrations'",
                [],
                |r| r.get(0),
            )
            .optional()
            .map_err(sql_err(what, &self.path))?;
        if exists.is_none() {
            return Ok(Vec::new());
        }
        let mut stmt = self
            .conn
            .prepare("SELECT id, calibration FROM calibrations ORDER BY id DESC")
            .map_err(sql_err(what, &self.path))?;
        let rows = stmt
            .query_map([], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?)))
            .map_err(sql_err(what, &self.path))?;
        let mut found = Vec::new();
        for row in rows {
            let (id, text) = row.map_err(sql_err(what, &self.path))?;
            if let Ok(mut c) = serde_json::from_str::<calibration::Calibration>(&text)
                && c.plausible()
            {
                c.id = id;
                found.push(c);
            }
        }
        Ok(found)
    }

    /// Records how a run ended.
    pub fn finish_run(&mut self, run: i64, status: &str) -> anyhow::Result<()> {
        let now = humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string();
        self.conn
            .execute(
                "UPDATE runs SET status = ?1, finished_at = ?2 WHERE id = ?3",
                params![status, now, run],
            )
            .map_err(sql_err(
                &self.what("cannot store the end of the run"),
                &self.path,
            ))?;
        Ok(())
    }

    /// Removes `run` if it holds no point (a command refused before it measured anything
    /// leaves no run behind); a run with points is kept.
    pub fn forget_empty_run(&mut self, run: i64) -> anyhow::Result<()> {
        let what = self.what("cannot remove the empty run");
        let err = sql_err(&what, &self.path);
        let tx = self.conn.transaction().map_err(&err)?;
        let empty = "NOT EXISTS (SELECT 1 FROM points WHERE run_id = ?1)";
        for table in ["fleets", "verifications"] {
            tx.execute(
                &format!("DELETE FROM {table} WHERE run_id = ?1 AND {empty}"),
                params![run],
            )
            .map_err(&err)?;
        }
        tx.execute(
            &format!("DELETE FROM runs WHERE id = ?1 AND {empty}"),
            params![run],
        )
        .map_err(&err)?;
        tx.commit().map_err(&err)
    }

    /// Stores a whole report (from a JSON document) as a complete run; returns its id.
    pub fn import(&mut self, report: &Report) -> anyhow::Result<i64> {
        let run = self.begin_run(report)?;
        self.add_records(run, 0, &report.results)?;
        if let Some(v) = &report.verification {
            self.set_verification(run, v)?;
        }
        // Imported, not measured here: `latest` is never such a run.
        self.finish_run(run, "imported")?;
        Ok(run)
    }

    /// Every run, oldest first.
    pub fn runs(&self) -> anyhow::Result<Vec<RunSummary>> {
        let what = "cannot read the runs";
        let mut stmt = self
            .conn
            .prepare(RUN_LIST)
            .map_err(sql_err(what, &self.path))?;
        let rows = stmt
            .query_map([], |r| {
                let cmd: String = r.get(6)?;
                Ok(RunSummary {
                    id: r.get(0)?,
                    started_at: r.get(1)?,
                    finished_at: r.get(2)?,
                    status: r.get(3)?,
                    hostname: r.get(4)?,
                    tool_version: r.get(5)?,
                    command_line: serde_json::from_str(&cmd).unwrap_or_default(),
                    points: r.get(7)?,
                })
            })
            .map_err(sql_err(what, &self.path))?;
        rows.collect::<Result<_, _>>()
            .map_err(sql_err(what, &self.path))
    }

    /// Resolves `latest`, `latest~N` or a number to a run id that exists.
    pub fn resolve(&self, run: &str) -> anyhow::Result<i64> {
        let what = "cannot read the runs";
        let back = match run.trim() {
            "latest" => Some(0),
            s => s
                .strip_prefix("latest~")
                .and_then(|n| n.parse::<i64>().ok()),
        };
        let id: Option<i64> = if let Some(back) = back {
            self.conn
                .query_row(
                    "SELECT id FROM runs WHERE status != 'imported' ORDER BY id DESC LIMIT 1 OFFSET ?1",
                    [back],
                    |r| r.get(0),
                )
                .optional()
                .map_err(sql_err(what, &self.path))?
        } else {
            let n: i64 = run.trim().parse().map_err(|_| {
                crate::error::UsageError(format!(
                    "'{run}' is not a run: give a run id from `peakbench history`, latest, latest~N, or a JSON file"
                ))
            })?;
            self.conn
                .query_row("SELECT id FROM runs WHERE id = ?1", [n], |r| r.get(0))
                .optional()
                .map_err(sql_err(what, &self.path))?
        };
        id.ok_or_else(|| {
            let why = if back.is_some() {
                " measured into the database (imported runs are named by their id)"
            } else {
                " in the database"
            };
            crate::error::UsageError(format!(
                "no run '{run}'{why}; `peakbench history` lists the runs"
            ))
            .into()
        })
    }

    /// A stored run as the report its JSON document was (in this schema version's form: a run
    /// stored by an earlier version has its figures converted to base units).
    pub fn load(&self, run: i64) -> anyhow::Result<Report> {
        let what = "cannot read the run";
        let (started_at, version, schema, command, system): (String, String, u32, String, String) =
            self.conn
                .query_row(
                    "SELECT started_at, tool_version, schema_version, command_line, system FROM runs WHERE id = ?1",
                    [run],
                    |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?)),
                )
                .map_err(sql_err(what, &self.path))?;
        let mut stmt = self
            .conn
            .prepare(RUN_POINTS)
            .map_err(sql_err(what, &self.path))?;
        let records = stmt
            .query_map([run], |r| r.get::<_, String>(0))
            .map_err(sql_err(what, &self.path))?
            .map(|r| {
                let text = r.map_err(sql_err(what, &self.path))?;
                serde_json::from_str::<ResultRecord>(&text)
                    .map_err(|e| anyhow::anyhow!("{what}: a stored point is unreadable: {e}"))
            })
            .collect::<anyhow::Result<Vec<_>>>()?;
        let fleet: Option<String> = self
            .conn
            .query_row("SELECT fleet FROM fleets WHERE run_id = ?1", [run], |r| {
                r.get(0)
            })
            .optional()
            .map_err(sql_err(what, &self.path))?;
        let fleet = fleet
            .map(|f| serde_json::from_str(&f))
            .transpose()
            .map_err(|e| anyhow::anyhow!("{what}: its node list is unreadable: {e}"))?;
        let verification: Option<String> = self
            .conn
            .query_row(
                "SELECT verification FROM verifications WHERE run_id = ?1",
                [run],
                |r| r.get(0),
            )
            .optional()
            .map_err(sql_err(what, &self.path))?;
        let verification = verification
            .map(|v| serde_json::from_str(&v))
            .transpose()
            .map_err(|e| anyhow::anyhow!("{what}: its checks are unreadable: {e}"))?;
        Ok(Report {
            schema_version: schema,
            tool: Tool {
                name: "peakbench".into(),
                version,
            },
            started_at,
            command_line: serde_json::from_str(&command)?,
            system: serde_json::from_str(&system).map_err(|e| {
                anyhow::anyhow!("{what}: its system information is unreadable: {e}")
            })?,
            results: records,
            fleet,
            verification,
            sha256: None,
        }
        .upgraded())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Any path names its own file, read-write and read-only alike: `#`, `?`, `%`, a space, a
    /// "file:" prefix and bytes that are not UTF-8 are the file's name, not a URI's parts. A
    /// device or another program's database is refused and left as it was.
    #[test]
    fn any_path_is_its_own_database() {
        use std::os::unix::ffi::OsStrExt;
        let dir = tempfile::tempdir().unwrap();
        let names: Vec<std::ffi::OsString> = vec![
            "h#x.db".into(),
            "h?mode=memory.db".into(),
            "h%23x.db".into(),
            "a b.db".into(),
            "file:h.db".into(),
            std::ffi::OsStr::from_bytes(b"h\xff.db").to_owned(),
        ];
        for name in names {
            let path = dir.path().join(&name);
            drop(Store::open(&path).unwrap());
            assert!(path.is_file(), "{name:?}");
            Store::open_read_only(&path).unwrap();
            // Nothing of another name was made.
            let made: Vec<_> = std::fs::read_dir(dir.path())
                .unwrap()
                .map(|e| e.unwrap().file_name())
                .filter(|n| !n.as_bytes().starts_with(name.as_bytes()))
                .collect();
            assert!(made.is_empty(), "{name:?}: {made:?}");
            for e in std::fs::read_dir(dir.path()).unwrap() {
                std::fs::remove_file(e.unwrap().path()).unwrap();
            }
        }
        assert_eq!(file_uri(Path::new("/a#b/c?d")), "file:/a%23b/c%3Fd");
        // Another program's database is not taken over; a device is no database.
        let other = dir.path().join("other.db");
        let c = Connection::open(&other).unwrap();
        c.execute_batch("CREATE TABLE bookmarks(url TEXT)").unwrap();
        drop(c);
        let e = Store::open(&other).err().unwrap().to_string();
        assert!(e.contains("another program's SQLite database"), "{e}");
        let c = Connection::open(&other).unwrap();
        let tables: i64 = c
            .query_row("SELECT count(*) FROM sqlite_master", [], |r| r.get(0))
            .unwrap();
        assert_eq!(tables, 1);
        let mode: String = c
            .query_row("PRAGMA journal_mode", [], |r| r.get(0))
            .unwrap();
        assert_eq!(mode, "delete");
        let e = Store::open(Path::new("/dev/null"))
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("not a regular file"), "{e}");
        assert!(!Path::new("/dev/null-journal").exists());
        assert_eq!(file_uri(Path::new("//x/y")), "file:/x/y");
    }

    use crate::results::params::Params;
    use crate::results::{Metric, Subsystem, Unit};

    /// A CPU throughput record: `iterations` is what the harness chose.
    fn record(workload: &str, threads: u64, samples: Vec<f64>) -> ResultRecord {
        let params = Params::with_defaults(
            crate::results::Workload::named(Subsystem::Cpu, workload).unwrap(),
            serde_json::json!({"threads": threads, "isa": "avx2", "iterations_per_thread": 12345}),
        )
        .unwrap();
        ResultRecord::new(
            crate::results::Workload::named(Subsystem::Cpu, workload).unwrap(),
            params,
            Metric::Throughput,
            Unit::Gops,
            samples,
            Err("unknown".into()),
        )
    }

    #[test]
    fn key_ignores_what_the_harness_chose() {
        let a = record("DP", 2, vec![1.0]);
        let mut b = record("DP", 2, vec![2.0]);
        if let Params::Cpu(p) = &mut b.params {
            p.kernel.as_mut().unwrap().iterations_per_thread = 99;
        }
        assert_eq!(point_key(&a), point_key(&b));
        assert_ne!(point_key(&a), point_key(&record("DP", 1, vec![1.0])));
        assert_ne!(point_key(&a), point_key(&record("SP", 2, vec![1.0])));
    }

    /// A history of many runs: loading one (what `compare` and `report` do) and listing them
    /// (`history`) find each run's points through their index, never by reading every point,
    /// so their cost grows with the runs asked for, not with the history (measured on 10,000
    /// runs of 63 points: `history` 0.07 s, `compare` under 0.01 s); and the run found is the
    /// one stored.
    #[test]
    fn a_runs_points_are_found_by_their_index_whatever_the_history_holds() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(&dir.path().join("h.db")).unwrap();
        let doc = std::fs::read(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/history/base.json"),
        )
        .unwrap();
        let report = Report::from_json(&doc).unwrap();
        let ids: Vec<i64> = (0..300).map(|_| store.import(&report).unwrap()).collect();
        for sql in [RUN_POINTS, RUN_LIST] {
            let mut stmt = store
                .conn
                .prepare(&format!("EXPLAIN QUERY PLAN {sql}"))
                .unwrap();
            let args = vec![1; stmt.parameter_count()];
            let plan: Vec<String> = stmt
                .query_map(rusqlite::params_from_iter(args), |r| r.get::<_, String>(3))
                .unwrap()
                .map(Result::unwrap)
                .collect();
            let on_points: Vec<&String> = plan.iter().filter(|l| l.contains("points")).collect();
            assert!(!on_points.is_empty(), "{plan:?}");
            assert!(
                on_points
                    .iter()
                    .all(|l| l.starts_with("SEARCH") && l.contains("INDEX points_run")),
                "{sql}: {plan:?}"
            );
        }
        let last = store.load(ids[299]).unwrap();
        let keys = |r: &Report| r.results.iter().map(point_key).collect::<Vec<_>>();
        assert_eq!(keys(&last), keys(&report));
        assert_eq!(store.runs().unwrap().len(), 300);
    }
}
