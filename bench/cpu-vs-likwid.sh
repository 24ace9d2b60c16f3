#!/usr/bin/env bash
# Compares peakbench's CPU throughput with likwid-bench's peakflops kernels, in one run, on the
# same machine, and checks the acceptance targets of the CPU benchmark:
#   * DP and SP, 1 and 2 threads: >= 95 % of the theoretical peak and >= 0.97x likwid-bench;
#   * the measured clock within 3 % of likwid's best one-thread DP peakflops / 16 (AVX2 FMA: 2 FMA
#     units x 4 doubles x 2 flops = 16 flops/cycle on Zen 2-4 and Haswell-Skylake client cores);
#   * DP scales from 1 to 2 threads by >= 1.9x.
# Needs likwid (apt-get install likwid). Usage: bench/cpu-vs-likwid.sh [REPEATS]
# Exit status 0 when every check passes, 1 otherwise, 2 when a tool is missing.
set -euo pipefail
cd "$(dirname "$0")/.."
repeats=${1:-3}
if ! command -v likwid-bench >/dev/null; then
  echo "likwid-bench not found: install it with 'apt-get install likwid'" >&2
  exit 2
fi
cargo build --release --quiet
pb=target/release/peakbench
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# likwid: $repeats runs -> "mean best" GFlop/s (interference only ever lowers a run's rate, so
# the best run is the one to derive a clock from).
likwid() { # kernel threads
  for _ in $(seq "$repeats"); do
    likwid-bench -t "$1" -W "N:32kB:$2" 2>/dev/null | awk '/^MFlops\/s:/ {print $2}'
  done | awk '{s += $1; n++; if ($1 > m) m = $1} END {if (n) printf "%.2f %.2f\n", s / n / 1000, m / 1000; else print "nan nan"}'
}

# peakbench (mean of $repeats repetitions per point; isa pinned to AVX2 and AVX-512 both run).
"$pb" cpu --workload DP,SP --threads 1,2 --repeat "$repeats" --quiet --no-history --csv "$tmp/pb.csv"
"$pb" sysinfo --json "$tmp/sys.json" >/dev/null
clock=$(awk '/"measured_clock_ghz"/ {getline; gsub(/[^0-9.]/, ""); print; exit}' "$tmp/sys.json")

status=0
check() { # description condition-as-awk-expression
  if awk "BEGIN {exit !($2)}"; then echo "PASS  $1"; else echo "FAIL  $1"; status=1; fi
}
printf '%-4s %-7s %12s %12s %8s %12s %8s\n' workload threads "peakbench" "likwid" ratio "peak" "eff %"
for w in DP SP; do
  kernel=peakflops_avx_fma; [ "$w" = SP ] && kernel=peakflops_sp_avx_fma
  for t in 1 2; do
    pbv=$(awk -F, -v w="$w" -v t="$t" '$2 == w && $3 == t {printf "%.2f", $7}' "$tmp/pb.csv")
    peak=$(awk -F, -v w="$w" -v t="$t" '$2 == w && $3 == t {printf "%.2f", $15}' "$tmp/pb.csv")
    read -r lk lk_best < <(likwid "$kernel" "$t")
    ratio=$(awk -v a="$pbv" -v b="$lk" 'BEGIN {printf "%.3f", a / b}')
    eff=$(awk -v a="$pbv" -v b="$peak" 'BEGIN {printf "%.1f", 100 * a / b}')
    printf '%-8s %-7s %12s %12s %8s %12s %8s\n' "$w" "$t" "$pbv GF/s" "$lk GF/s" "$ratio" "$peak GF/s" "$eff"
    check "$w x$t: $eff % of peak >= 95 %" "$eff >= 95"
    check "$w x$t: $ratio x likwid-bench $kernel >= 0.97" "$ratio >= 0.97"
    [ "$w" = DP ] && eval "dp$t=$pbv"
    [ "$w" = DP ] && [ "$t" = 1 ] && lk_dp1=$lk_best
  done
done
implied=$(awk -v g="$lk_dp1" 'BEGIN {printf "%.3f", g / 16}')
dev=$(awk -v c="$clock" -v i="$implied" 'BEGIN {d = (c - i) / i * 100; printf "%.2f", d}')
echo "measured clock $clock GHz; likwid 1-thread DP (best of $repeats) / 16 = $implied GHz; difference $dev %"
check "clock within 3 % of likwid-implied" "($dev < 3) && ($dev > -3)"
scale=$(awk -v a="$dp1" -v b="$dp2" 'BEGIN {printf "%.3f", b / a}')
echo "DP 1 -> 2 threads: ${scale}x"
check "DP scales 1 -> 2 threads by >= 1.9x" "$scale >= 1.9"
exit $status
