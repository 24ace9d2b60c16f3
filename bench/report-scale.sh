#!/usr/bin/env bash
# `peakbench report` at scale: documents of many records (a quick run's 63 records again and
# again, each copy a point of its own: another node, another thread count; written by
# tests/common/mod.rs scaled_document through the ignored test history::write_scaled_document),
# then `peakbench report FILE` (release build) on each under /usr/bin/time -v: its wall time,
# CPU time and peak resident memory against the file's size. The report's time and memory
# should grow with the records, not faster: 100,000 records in seconds, within 10x the file.
#
# Usage: bench/report-scale.sh [RECORDS...]   (default 10000 30000 100000)
# Environment: OUT (directory for the documents, default /tmp/peakbench-report-scale), ARGS (more
# arguments to report, e.g. ARGS="--html /dev/null" or ARGS=-v).
set -euo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-/tmp/peakbench-report-scale}
mkdir -p "$out"
[[ -x /usr/bin/time ]] || { echo "report-scale: needs GNU time (apt-get install time)"; exit 2; }
cargo build --release --quiet
bin=${CARGO_TARGET_DIR:-$PWD/target}/release/peakbench
sizes=("$@")
[[ ${#sizes[@]} -gt 0 ]] || sizes=(10000 30000 100000)
printf '%8s %9s %8s %8s %9s %7s\n' records "file MB" "wall s" "cpu s" "peak MB" "peak/file"
for n in "${sizes[@]}"; do
  doc=$out/report-$n.json
  if [[ ! -s $doc ]]; then
    PEAKBENCH_SCALE_OUT=$doc PEAKBENCH_SCALE_RECORDS=$n \
      cargo test --quiet --test history_bounds write_scaled_document -- --ignored --exact >/dev/null
  fi
  # shellcheck disable=SC2086 # ARGS is split into words on purpose
  /usr/bin/time -v "$bin" report "$doc" ${ARGS:-} >/dev/null 2>"$out/time-$n.txt"
  awk -v n="$n" -v bytes="$(stat -c %s "$doc")" -F': ' '
    /Elapsed \(wall clock\)/ { k = split($2, t, ":"); wall = (k == 3) ? t[1] * 3600 + t[2] * 60 + t[3] : t[1] * 60 + t[2] }
    /User time/ { cpu += $2 } /System time/ { cpu += $2 }
    /Maximum resident set size/ { rss = $2 * 1024 }
    END { printf "%8d %9.1f %8.2f %8.2f %9.1f %7.1fx\n", n, bytes / 1e6, wall, cpu, rss / 1e6, rss / bytes }
  ' "$out/time-$n.txt"
done
