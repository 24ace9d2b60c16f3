#!/usr/bin/env bash
# A/A pairs of the ci profile under `compare --gate` (issue 53: at most 1 gate failure in 10
# pairs on the 2-core development guest). Calibrates the machine first (`peakbench calibrate`,
# CAL_RUNS runs of the ci profile) unless CALIBRATED=1 and the database has a calibration, then
# runs PAIRS pairs of `run --profile ci`, one run after the other (nothing changed between the
# two runs of a pair), and gates each pair: its outcome (passed, or the points that failed),
# then the count. Everything goes into its own database (DB), never the user's history.
# Usage: [PAIRS=10] [CAL_RUNS=8] [CALIBRATED=1] [DB=/var/tmp/gate-aa.db] bench/gate-aa.sh
set -euo pipefail
cd "$(dirname "$0")/.."
pairs=${PAIRS:-10}; cal_runs=${CAL_RUNS:-8}; db=${DB:-/var/tmp/gate-aa.db}
cargo build --release --quiet
pb=$PWD/target/release/peakbench
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if [ "${CALIBRATED:-0}" != 1 ]; then
    COLUMNS=100 "$pb" calibrate --db "$db" --runs "$cal_runs"
fi
failed=0
for i in $(seq 1 "$pairs"); do
    "$pb" run --profile ci --db "$db" -q 2> /dev/null
    "$pb" run --profile ci --db "$db" -q 2> /dev/null
    rc=0
    "$pb" compare --gate --db "$db" latest~1 latest --json "$tmp/pair$i.json" 2> /dev/null || rc=$?
    if [ "$rc" -ne 0 ] && [ "$rc" -ne 3 ]; then
        echo "pair $i: compare failed (exit $rc)"; exit 1
    fi
    python3 - "$tmp/pair$i.json" "$i" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
bad = [c for c in doc['changes'] if c['regression'] or c['improvement']]
runs = sum(1 for c in doc['changes'] if c.get('spread') == 'between_runs')
worst = max(doc['changes'], key=lambda c: abs(c['change']) if c['change'] == c['change'] else 0)
line = f"pair {sys.argv[2]} ({doc['a']} {doc['b']}): "
if bad:
    line += "FAILED: " + "; ".join(f"{c['label']} {c['change']*100:+.1f} % (gate {c['threshold']*100:.1f} %)" for c in bad)
else:
    line += "passed"
line += f"; {len(doc['changes'])} points, {runs} on run-to-run noise; largest change {worst['label']} {worst['change']*100:+.1f} %"
print(line)
PY
    if [ "$rc" -eq 3 ]; then failed=$((failed + 1)); fi
done
echo "gate failures: $failed of $pairs A/A pairs"
