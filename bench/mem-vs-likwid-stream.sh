#!/usr/bin/env bash
# Memory acceptance benchmark, in one run on one machine:
#  1. COPY and TRIAD bandwidth at 1 and 2 threads against likwid-bench's non-temporal kernels
#     (copy_mem_avx512, stream_mem_avx512, -W N:2GB:T) and, when $STREAM names a STREAM binary
#     you built yourself from its public source (outside this repository), against the best of
#     its runs. The machine is shared and its bandwidth swings by tens of percent between
#     seconds, so the tools are run interleaved, ROUNDS times each, and the best run of each
#     tool is compared (STREAM itself reports the best of its iterations).
#  2. The latency staircase: each level's latency and the detected capacity next to sysfs.
# Needs likwid (apt-get install likwid) and python3.
# Usage: [ROUNDS=5] [STREAM=/tmp/stream/stream] bench/mem-vs-likwid-stream.sh
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${ROUNDS:-5}
command -v likwid-bench >/dev/null || { echo "likwid-bench not found: apt-get install likwid" >&2; exit 2; }
command -v python3 >/dev/null || { echo "python3 not found: apt-get install python3" >&2; exit 2; }
if [ -n "${STREAM:-}" ] && [ ! -x "$STREAM" ]; then echo "STREAM=$STREAM is not an executable" >&2; exit 2; fi
[ -n "${STREAM:-}" ] || echo "note: STREAM is not set; the STREAM comparison is skipped (build stream.c yourself and set STREAM=path)"
cargo build --release --quiet
pb=target/release/peakbench
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

status=0
check() { if python3 -c "import sys; sys.exit(0 if ($2) else 1)"; then echo "PASS  $1"; else echo "FAIL  $1"; status=1; fi; }

printf '%-6s %-3s %10s %10s %7s %10s %7s\n' kernel T "peakbench" "likwid" ratio "STREAM" ratio
for w in COPY TRIAD; do
  lk=copy_mem_avx512; sk=Copy
  [ "$w" = TRIAD ] && { lk=stream_mem_avx512; sk=Triad; }
  for t in 1 2; do
    best_pb=0; best_lk=0; best_st=0
    for _ in $(seq "$rounds"); do
      v=$("$pb" mem --workload "$w" --threads "$t" --repeat 3 --quiet --no-history --csv - | awk -F, 'NR == 2 {print $7}')
      best_pb=$(python3 -c "print(max($best_pb, $v))")
      v=$(likwid-bench -t "$lk" -W "N:2GB:$t" 2>/dev/null | awk '/^MByte\/s:/ {print $2 / 1000}')
      best_lk=$(python3 -c "print(max($best_lk, ${v:-0}))")
      if [ -n "${STREAM:-}" ]; then
        v=$(OMP_NUM_THREADS=$t OMP_PROC_BIND=spread "$STREAM" | awk -v k="$sk:" '$1 == k {print $2 / 1000}')
        best_st=$(python3 -c "print(max($best_st, ${v:-0}))")
      fi
    done
    r_lk=$(python3 -c "print(f'{$best_pb / $best_lk:.3f}')")
    r_st=$(python3 -c "print(f'{$best_pb / $best_st:.3f}' if $best_st > 0 else '—')")
    printf '%-6s %-3s %10.2f %10.2f %7s %10.2f %7s   GB/s, best of %s runs\n' "$w" "$t" "$best_pb" "$best_lk" "$r_lk" "$best_st" "$r_st" "$rounds"
    check "$w x$t >= 1.00x likwid-bench $lk" "$r_lk >= 1.0"
    [ -n "${STREAM:-}" ] && check "$w x$t >= 1.00x STREAM $sk (best of $rounds)" "$r_st >= 1.0"
  done
done

"$pb" mem --workload LATENCY --huge-pages on --quiet --no-history --json "$tmp/lat.json"
python3 - "$tmp/lat.json" <<'PY' || status=1
import json, sys
doc = json.load(open(sys.argv[1]))
levels = [r for r in doc["results"] if r["params"].get("probe") == "level"]
expect = {"L1": (1.1, 1.1), "L2": (4.0, 4.0), "L3": (13.0, 16.0), "memory": (150.0, 180.0)}
ok = True
print(f"{'level':8} {'latency ns':>10} {'cycles':>7} {'capacity':>12} {'sysfs':>12}")
for r in levels:
    r["mean"] *= 1e9  # stored in seconds
    p = r["params"]
    cap, sysfs = p.get("capacity_bytes"), p.get("sysfs_size_bytes")
    print(f"{p['level']:8} {r['mean']:10.2f} {p.get('latency_cycles', 0):7.1f} {cap or '-':>12} {sysfs or '-':>12}")
    if p["level"] in expect:
        lo, hi = expect[p["level"]]
        good = lo * 0.85 <= r["mean"] <= hi * 1.15
        print(f"{'PASS' if good else 'FAIL'}  {p['level']} latency {r['mean']:.2f} ns within 15 % of {lo}-{hi} ns")
        ok &= good
    if cap and sysfs:
        good = sysfs / 2 <= cap <= sysfs * 2
        print(f"{'PASS' if good else 'FAIL'}  {p['level']} capacity {cap} B within 2x of sysfs {sysfs} B")
        ok &= good
sys.exit(0 if ok else 1)
PY
exit $status
