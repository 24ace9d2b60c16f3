#!/usr/bin/env bash
# Compares peakbench's CPU throughput with likwid-bench's peakflops kernels of the same ISA, in
# one run, on the same machine, and checks the acceptance targets of the CPU benchmark:
#   * DP and SP at each thread count: >= 0.97x likwid-bench peakflops(_sp)_avx512_fma (or
#     _avx_fma where peakbench runs AVX2), best run against best run, the tools interleaved;
#   * INT32, INT64, HP and QP: efficiency >= 95 % of the table's issue rate;
#   * the clock peakbench reports within 3 % of an independent imul chain
#     (../shared/tools/imul-clock.c, or IMUL_CLOCK=path to a built binary; skipped without gcc).
# Needs likwid (apt-get install likwid). Usage: bench/cpu-vs-likwid.sh [ROUNDS] [THREADS]
#   ROUNDS (default 5) interleaved rounds; THREADS (default "1 2") thread counts, e.g. "1 2 4 8 16".
# Exit status 0 when every check passes, 1 otherwise, 2 when a tool is missing.
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-5}
threads=${2:-1 2}
if ! command -v likwid-bench >/dev/null; then
  echo "likwid-bench not found: install it with 'apt-get install likwid'" >&2
  exit 2
fi
pb=${PEAKBENCH:-target/release/peakbench}
[ -n "${PEAKBENCH:-}" ] || cargo build --release --quiet
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

isa=$("$pb" sysinfo --json - | python3 -c 'import json,sys; print(json.load(sys.stdin)["system"]["cpu"]["isas"][0])')
case "$isa" in
  avx512) dp_kernel=peakflops_avx512_fma; sp_kernel=peakflops_sp_avx512_fma ;;
  avx2) dp_kernel=peakflops_avx_fma; sp_kernel=peakflops_sp_avx_fma ;;
  *) echo "peakbench runs $isa here; likwid-bench has no FMA peakflops kernel to compare" >&2; exit 2 ;;
esac
tlist=$(echo "$threads" | tr ' ' ',')

# Interleaved rounds: peakbench (every workload at every thread count), then likwid for each
# kernel and thread count. Interference only ever lowers a rate, so each side's best round is
# compared with the other's.
for r in $(seq "$rounds"); do
  "$pb" cpu --workload DP,SP,INT32,INT64,HP,QP --threads "$tlist" --isa "$isa" --repeat 3 \
    --quiet --no-history --json "$tmp/pb$r.json"
  for t in $threads; do
    for k in "$dp_kernel" "$sp_kernel"; do
      g=$(likwid-bench -t "$k" -W "N:32kB:$t" 2>/dev/null | awk '/^MFlops\/s:/ {printf "%.3f", $2 / 1000}')
      echo "$k $t ${g:-nan}" >>"$tmp/likwid.txt"
    done
  done
done
# The clock: peakbench's sysinfo and the independent imul chain, interleaved three times, best of
# each (the clock of a shared host moves with its other tenants' load).
imul_bin=${IMUL_CLOCK:-}
if [ -z "$imul_bin" ] && command -v gcc >/dev/null && [ -f ../shared/tools/imul-clock.c ]; then
  gcc -O2 ../shared/tools/imul-clock.c -o "$tmp/imul-clock" && imul_bin=$tmp/imul-clock
fi
imul=""
for r in 1 2 3; do
  "$pb" sysinfo --json "$tmp/sys$r.json" >/dev/null
  [ -z "$imul_bin" ] || imul="$imul $("$imul_bin")"
done

python3 - "$tmp" "$rounds" "$dp_kernel" "$sp_kernel" "$imul" "$threads" <<'EOF'
import json, sys
tmp, rounds, dpk, spk, imul, threads = sys.argv[1:]
threads = [int(t) for t in threads.split()]
best = {}   # (workload, threads) -> (best repetition GOPS, its efficiency, the point's clock)
for r in range(1, int(rounds) + 1):
    for rec in json.load(open(f"{tmp}/pb{r}.json"))["results"]:
        key = (rec["workload"], rec["params"]["threads"])
        # The document stores op/s; GOPS here, as likwid-bench's MFlops/s / 1000.
        top = max((s / 1e9 for s in rec["samples"] if s is not None), default=None)
        if top is not None and (key not in best or top > best[key][0]):
            peak = rec["peak"]["value"] / 1e9 if rec["peak"] else None
            best[key] = (top, peak and top / peak, rec["params"].get("clock_ghz"))
lk = {}
for line in open(f"{tmp}/likwid.txt"):
    k, t, g = line.split()
    if g != "nan":
        lk[(k, int(t))] = max(lk.get((k, int(t)), 0.0), float(g))
ok = True
def check(text, cond):
    global ok
    print(("PASS  " if cond else "FAIL  ") + text)
    ok = ok and cond
print(f"{'workload':8} {'threads':>7} {'peakbench':>12} {'likwid':>12} {'ratio':>7} {'eff %':>7} {'clock GHz':>9}")
for w, k in (("DP", dpk), ("SP", spk), ("INT32", None), ("INT64", None), ("HP", None), ("QP", None)):
    for t in threads:
        mean, eff, clock = best.get((w, t), (float("nan"), None, None))
        ref = lk.get((k, t)) if k else None
        ratio = mean / ref if ref else None
        print(f"{w:8} {t:>7} {mean:>12.2f} {ref if ref else '—':>12} "
              f"{ratio if ratio is None else round(ratio, 3)!s:>7} "
              f"{'unknown' if eff is None else round(100 * eff, 1)!s:>7} {clock if clock is None else round(clock, 3)!s:>9}")
        if k:
            check(f"{w} x{t}: {ratio and round(ratio, 3)} x likwid-bench {k} >= 0.97", ratio is not None and ratio >= 0.97)
        else:
            check(f"{w} x{t}: efficiency {eff and round(100 * eff, 1)} % >= 95 %", eff is not None and eff >= 0.95)
cpus = [json.load(open(f"{tmp}/sys{r}.json"))["system"]["cpu"] for r in (1, 2, 3)]
cpu = max(cpus, key=lambda c: c["measured_clock_ghz"]["value"] or 0)
clock = cpu["measured_clock_ghz"]["value"]
imul = max((float(x) for x in imul.split()), default=None)
print(f"clock (best of 3 sysinfo runs): 1 thread {clock} GHz, all cores {cpu['all_core_clock_ghz'].get('value')} GHz; probes "
      + "; ".join(f"{p['probe']} {p['ghz']:.3f}" for p in cpu["clock_probes"]))
if imul:
    dev = (clock - imul) / imul * 100 if clock else float("nan")
    print(f"imul-clock.c (best of 3): {imul} GHz; difference {dev:.2f} %")
    check("clock within 3 % of imul-clock.c", clock is not None and abs(dev) < 3)
else:
    print("SKIP  clock vs imul-clock.c: no gcc or no ../shared/tools/imul-clock.c (set IMUL_CLOCK)")
sys.exit(0 if ok else 1)
EOF
