#!/usr/bin/env bash
# The results database at scale (issue 55: `history`, `compare` and `history --trend` each under
# a second with 10,000 runs). Builds a database of RUNS runs (default 10,000) from the recorded
# quick run (tests/fixtures/history/quick.json, 63 points): imported once, then copied in SQLite,
# each copy's means moved by a few percent (a slow drift and a step at the middle run, so that
# the trend has levels to find), then times each command twice with /usr/bin/time (wall
# seconds and peak memory). Nothing is written outside its temporary directory.
# Usage: [RUNS=10000] [KEEP=FILE] bench/history-scale.sh (KEEP: the database is copied there)
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${RUNS:-10000}
command -v sqlite3 > /dev/null || { echo "needs sqlite3: apt-get install sqlite3"; exit 2; }
[ -x /usr/bin/time ] || { echo "needs /usr/bin/time: apt-get install time"; exit 2; }
cargo build --release --quiet
pb=$PWD/target/release/peakbench
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
db=$tmp/h.db
"$pb" history --db "$db" --import tests/fixtures/history/quick.json > /dev/null
# Copies of run 1, each its points' means (in the columns and the records) and samples scaled: ±1 % of drift over the runs,
# and 6 % lower from the middle run on.
sqlite3 "$db" << SQL
PRAGMA journal_mode = OFF;
PRAGMA synchronous = OFF;
CREATE TEMP TABLE n(i INTEGER PRIMARY KEY);
WITH RECURSIVE c(i) AS (SELECT 2 UNION ALL SELECT i + 1 FROM c WHERE i < $runs) INSERT INTO n SELECT i FROM c;
CREATE TEMP TABLE f AS SELECT i, (1.0 + 0.01 * ((i % 97) - 48) / 48.0) * (CASE WHEN i > $runs / 2 THEN 0.94 ELSE 1.0 END) AS k FROM n;
INSERT INTO runs(id, started_at, finished_at, status, tool_version, schema_version, hostname, command_line, system)
  SELECT n.i, started_at, finished_at, status, tool_version, schema_version, hostname, command_line, system FROM runs, n WHERE runs.id = 1;
INSERT INTO points(run_id, seq, subsystem, workload, metric, unit, key, mean, stddev, n, record, rerun)
  SELECT f.i, seq, subsystem, workload, metric, unit, key, mean * f.k, stddev * f.k, p.n,
    CASE WHEN mean IS NULL THEN record ELSE json_set(record, '\$.mean', mean * f.k) END, rerun
  FROM points p, f WHERE p.run_id = 1;
INSERT INTO samples(point_id, idx, value)
  SELECT q.id, s.idx, s.value * f.k FROM samples s JOIN points p ON p.id = s.point_id AND p.run_id = 1
    JOIN points q ON q.seq = p.seq AND q.run_id != 1 JOIN f ON f.i = q.run_id;
SQL
echo "database: $(sqlite3 "$db" 'SELECT COUNT(*) FROM runs') runs, $(sqlite3 "$db" 'SELECT COUNT(*) FROM points') points, $(( $(stat -c %s "$db") / 1048576 )) MiB"
timed() {
    for i in 1 2; do
        /usr/bin/time -f "%e s, %M KiB" -o "$tmp/t" "$pb" "$@" --db "$db" > "$tmp/out" 2>&1 || true
        printf '%-48s %s\n' "peakbench $*" "$(cat "$tmp/t") ($(wc -l < "$tmp/out") lines)"
    done
}
timed history
timed compare $((runs - 1)) "$runs"
timed compare 1 "$runs"
timed history --trend TRIAD
timed history --trend
timed history --trend --last 1000
if [ -n "${KEEP:-}" ]; then cp "$db" "$KEEP"; fi
