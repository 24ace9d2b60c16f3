#!/usr/bin/env bash
# peakbench's DGEMM and SGEMM against OpenBLAS (pthread) on the same instruction set, in rounds
# interleaved on the same machine (issue 55): each round runs peakbench's built-in multiply
# (`--isa ISA`), then OpenBLAS through `--blas system --blas-library` with its kernels for a
# core of that instruction set (OPENBLAS_CORETYPE, Haswell for AVX2), at N and each of THREADS.
# Prints every round's GFLOP/s and ratio (peakbench / OpenBLAS) and the median ratio of each
# point; exits 1 where a median is below 1.0 (OpenBLAS faster), 2 where something is missing.
# For a CPU that BLIS has no configuration for (Zen 5 in BLIS 0.9), OpenBLAS's AVX2 kernels are
# the nearest tuned library to the AVX2-only cores the issue measured against BLIS.
# Needs: apt-get install libopenblas0-pthread python3
# Usage: [ISA=avx2] [CORETYPE=Haswell] bench/gemm-vs-openblas.sh [ROUNDS] [N] [THREADS]
#   ROUNDS (default 3), N (default 4000), THREADS (default 1,2).
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-3}
n=${2:-4000}
threads=${3:-1,2}
isa=${ISA:-avx2}
coretype=${CORETYPE:-Haswell}
lib=$(ls /usr/lib/*/openblas-pthread/libopenblas.so.0 2> /dev/null | head -1 || true)
if [ -z "$lib" ] || ! command -v python3 > /dev/null; then
  echo "needs OpenBLAS (pthread) and python3: apt-get install libopenblas0-pthread python3" >&2
  exit 2
fi
pb=${PEAKBENCH:-target/release/peakbench}
[ -n "${PEAKBENCH:-}" ] || cargo build --release --quiet
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
common=(cpu --workload DGEMM,SGEMM --n "$n" --threads "$threads" --repeat 2 --warmup 1 --quiet
  --no-history)
for r in $(seq "$rounds"); do
  "$pb" "${common[@]}" --isa "$isa" --json "$tmp/pb$r.json"
  OPENBLAS_CORETYPE=$coretype "$pb" "${common[@]}" --blas system --blas-library "$lib" \
    --json "$tmp/ob$r.json"
done
python3 - "$tmp" "$rounds" "$isa" "$coretype" << 'PY'
import json, statistics, sys
tmp, rounds, isa, core = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
ratios = {}
print(f"peakbench --isa {isa} / OpenBLAS {core}, GFLOP/s (CV %)")
for r in range(1, rounds + 1):
    fig = {}
    for eng in ("pb", "ob"):
        for rec in json.load(open(f"{tmp}/{eng}{r}.json"))["results"]:
            if rec["metric"] == "throughput":
                key = (rec["workload"], rec["params"].get("threads"))
                fig[eng, key] = (rec["mean"] / 1e9, 100 * rec["cv"], rec["params"].get("micro_kernel"))
    cells = []
    for key in sorted({k for _, k in fig}):
        (p, pcv, pk), (o, ocv, ok) = fig["pb", key], fig["ob", key]
        ratios.setdefault(key, []).append(p / o)
        cells.append(f"{key[0]} {key[1]}t {p:.1f} ({pcv:.1f}) / {o:.1f} ({ocv:.1f}) = {p / o:.3f}")
    print(f"round {r}: " + " | ".join(cells))
    if r == 1:
        kernels = sorted({(k[0], v[2]) for (e, k), v in fig.items()})
        print("  kernels: " + ", ".join(f"{w} {k}" for w, k in kernels))
low = False
for key, vals in sorted(ratios.items()):
    med = statistics.median(vals)
    low = low or med < 1.0
    print(f"{key[0]} {key[1]} thread(s): median {med:.3f} ({', '.join(f'{v:.3f}' for v in vals)})")
sys.exit(1 if low else 0)
PY
