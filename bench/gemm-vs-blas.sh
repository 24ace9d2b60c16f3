#!/usr/bin/env bash
# peakbench's DGEMM and SGEMM against BLIS or OpenBLAS (pthread) on the same instruction set, in
# rounds interleaved on the same machine (issue 55): each round runs peakbench's built-in
# multiply (`--isa ISA`), then the library through `--blas system --blas-library` with its
# kernels for a core of that instruction set, at N and each of THREADS.
#   LIBRARY=blis (the default): Debian's libblis4-pthread with the configuration CONFIG (skx
#     for AVX-512, haswell or zen3 for AVX2), asked with BLIS_ARCH_TYPE (its number in BLIS
#     0.8 and 0.9), and refused unless BLIS reports that configuration: BLIS 0.9 runs generic
#     code on a CPU it does not know (a Zen 5), which is no reference.
#   LIBRARY=openblas: OpenBLAS (pthread) with OPENBLAS_CORETYPE=CONFIG (SkylakeX, Haswell).
# Prints every round's GFLOP/s and ratio (peakbench / library) and the median ratio of each
# point; exits 1 where a median is below 1.0 (the library faster), 2 where something is missing.
# Needs: apt-get install libblis4-pthread (or libopenblas0-pthread) python3
# Usage: [ISA=avx512] [LIBRARY=blis] [CONFIG=skx] [BLAS_LIB=FILE] bench/gemm-vs-blas.sh [ROUNDS] [N]
#   [THREADS]
#   ROUNDS (default 3), N (default 4000), THREADS (default 1,2); ISA avx512 by default, CONFIG
#   by default the ISA's: skx or haswell for BLIS, SkylakeX or Haswell for OpenBLAS; BLAS_LIB the
#   library's file where it is not installed (one carried: bench/many-core.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-3}
n=${2:-4000}
threads=${3:-1,2}
isa=${ISA:-avx512}
library=${LIBRARY:-blis}
case "$library:$isa" in
  blis:avx512) config=${CONFIG:-skx} ;;
  blis:*) config=${CONFIG:-haswell} ;;
  openblas:avx512) config=${CONFIG:-SkylakeX} ;;
  openblas:*) config=${CONFIG:-Haswell} ;;
  *) echo "LIBRARY is blis or openblas, not $library" >&2; exit 2 ;;
esac
if [ "$library" = blis ]; then
  lib=${BLAS_LIB:-$(ls /usr/lib/*/libblis.so.4 2> /dev/null | head -1 || true)}
  # arch_t's order in BLIS 0.8 and 0.9 (bli_type_defs.h); checked below by the name BLIS reports.
  case "$config" in
    skx) env=(BLIS_ARCH_TYPE=0) ;;
    haswell) env=(BLIS_ARCH_TYPE=3) ;;
    zen3) env=(BLIS_ARCH_TYPE=6) ;;
    zen2) env=(BLIS_ARCH_TYPE=7) ;;
    *) echo "CONFIG for BLIS is skx, haswell, zen3 or zen2, not $config" >&2; exit 2 ;;
  esac
  expect="BLIS $config"
  install=libblis4-pthread
else
  lib=${BLAS_LIB:-$(ls /usr/lib/*/openblas-pthread/libopenblas.so.0 2> /dev/null | head -1 || true)}
  env=(OPENBLAS_CORETYPE="$config")
  expect=""
  install=libopenblas0-pthread
fi
if [ -z "$lib" ] || [ ! -e "$lib" ] || ! command -v python3 > /dev/null; then
  echo "needs $library and python3: apt-get install $install python3" >&2
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
  env "${env[@]}" "$pb" "${common[@]}" --blas system --blas-library "$lib" --json "$tmp/lib$r.json"
done
python3 - "$tmp" "$rounds" "$isa" "$library $config ($lib)" "$expect" << 'PY'
import json, statistics, sys
tmp, rounds, isa, lib, expect = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]
ratios = {}
print(f"peakbench --isa {isa} / {lib}, GFLOP/s (CV %)")
for r in range(1, rounds + 1):
    fig = {}
    for eng in ("pb", "lib"):
        for rec in json.load(open(f"{tmp}/{eng}{r}.json"))["results"]:
            if rec["metric"] == "throughput":
                key = (rec["workload"], rec["params"].get("threads"))
                fig[eng, key] = (rec["mean"] / 1e9, 100 * rec["cv"], rec["params"].get("micro_kernel"))
    if expect and any(v[2] != expect for (e, _), v in fig.items() if e == "lib"):
        got = sorted({v[2] for (e, _), v in fig.items() if e == "lib"})
        print(f"the library ran {got}, not {expect}: no reference", file=sys.stderr)
        sys.exit(2)
    cells = []
    for key in sorted({k for _, k in fig}):
        (p, pcv, pk), (o, ocv, ok) = fig["pb", key], fig["lib", key]
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
