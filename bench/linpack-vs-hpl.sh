#!/usr/bin/env bash
# Compares peakbench's LINPACK and DGEMM with HPL and StarDGEMM from Debian's hpcc, in one run on
# the same machine, and checks the acceptance targets of the LINPACK workload:
#   * LINPACK (built-in engine) >= 0.95x hpcc's HPL at the same N and as many MPI processes as
#     threads, as the median over rounds of each round's ratio (each round runs both, back to
#     back, through `peakbench cpu --reference`), every residual PASSED;
#   * DGEMM >= 85 % of the DP peak (best round); SGEMM's efficiency is printed.
#   * with SYSTEM_BLAS=1, the same LINPACK, DGEMM and SGEMM with `--blas system` (OpenBLAS, BLIS
#     or MKL loaded at run time; apt-get install libopenblas0-pthread) are printed beside them,
#     and checked to have run on the system engine with every residual PASSED.
# Needs hpcc, mpirun and an optimised BLAS (apt-get install hpcc openmpi-bin libopenblas0-serial).
# Usage: bench/linpack-vs-hpl.sh [ROUNDS] [N] [THREADS]
#   ROUNDS (default 3), N (default 8000), THREADS (default: every hardware thread).
# Exit status 0 when every check passes, 1 otherwise, 2 when a tool is missing.
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-3}
n=${2:-8000}
threads=${3:-$(nproc)}
for tool in hpcc mpirun python3; do
  if ! command -v "$tool" >/dev/null; then
    echo "$tool not found: install it with 'apt-get install hpcc openmpi-bin libopenblas0-serial python3'" >&2
    exit 2
  fi
done
pb=${PEAKBENCH:-target/release/peakbench}
[ -n "${PEAKBENCH:-}" ] || cargo build --release --quiet
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

for r in $(seq "$rounds"); do
  "$pb" cpu --workload LINPACK,DGEMM,SGEMM --n "$n" --threads "$threads" --repeat 2 --warmup 1 \
    --reference --quiet --no-history --json "$tmp/pb$r.json"
  if [ "${SYSTEM_BLAS:-0}" = 1 ]; then
    "$pb" cpu --workload LINPACK,DGEMM,SGEMM --n "$n" --threads "$threads" --repeat 2 --warmup 1 \
      --blas system --quiet --no-history --json "$tmp/sys$r.json"
  fi
done

python3 - "$tmp" "$rounds" <<'PY'
import json, os, statistics, sys
tmp, rounds = sys.argv[1], int(sys.argv[2])
ok = True
def check(text, cond):
    global ok
    print(("PASS  " if cond else "FAIL  ") + text)
    ok = ok and cond
rows = {}      # workload -> [(peakbench GFLOP/s, reference GFLOP/s or None, efficiency or None)]
passed = True
for r in range(1, rounds + 1):
    for name in (f"pb{r}.json", f"sys{r}.json"):
        path = os.path.join(tmp, name)
        if not os.path.exists(path):
            continue
        for rec in json.load(open(path))["results"]:
            p = rec["params"]
            key = rec["workload"] + ("" if p.get("engine") == "built-in" else f" ({p.get('engine')})")
            ref = (rec.get("reference") or {}).get("mean")
            peak = (rec.get("peak") or {}).get("value")
            rows.setdefault(key, []).append((rec["mean"] / 1e9, ref and ref / 1e9, peak and rec["mean"] / peak))
            if rec["workload"] == "LINPACK":
                passed = passed and p.get("residual_passed") is True
print(f"{'workload':22} {'round':>5} {'peakbench GF/s':>15} {'reference GF/s':>15} {'ratio':>6} {'eff %':>6}")
for key, vals in rows.items():
    for i, (m, ref, eff) in enumerate(vals, 1):
        ratio = m / ref if ref else None
        print(f"{key:22} {i:>5} {m:>15.2f} {ref and round(ref, 2)!s:>15} {ratio and round(ratio, 3)!s:>6} {eff and round(100 * eff, 1)!s:>6}")
lin = [m / ref for m, ref, _ in rows.get("LINPACK", []) if ref]
if lin:
    med = statistics.median(lin)
    check(f"LINPACK / HPL, median of {len(lin)} rounds: {med:.3f} >= 0.95 (rounds: {', '.join(f'{x:.3f}' for x in lin)})", med >= 0.95)
else:
    check("LINPACK has hpcc's HPL figure beside it (see `peakbench reference check`)", False)
check("every LINPACK residual PASSED", passed and bool(rows.get("LINPACK")))
eff = max((e for _, _, e in rows.get("DGEMM", []) if e), default=None)
if any(k.endswith("(system)") for k in rows):
    check("the system engine ran LINPACK, DGEMM and SGEMM",
          all(f"{w} (system)" in rows for w in ("LINPACK", "DGEMM", "SGEMM")))
check(f"DGEMM best efficiency {eff and round(100 * eff, 1)} % >= 85 % of the DP peak", eff is not None and eff >= 0.85)
sys.exit(0 if ok else 1)
PY
