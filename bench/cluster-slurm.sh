#!/usr/bin/env bash
# The multi-node run under Slurm on one host: `srun -n 3 peakbench cluster run` on the one-host
# cluster of bench/slurm-one-host.sh (which installs and starts it when needed; root), then checks
# the merged result: three nodes' system information, CPU and memory points of every node, and a
# 3 × 3 pair matrix with every link measured. The ranks find rank 0 through the first host of
# the Slurm node list; all three share this machine, so they take turns at the node-local jobs.
#
# Usage: bench/cluster-slurm.sh            (OUT=/tmp/peakbench-slurm, PROFILE=a small cpu+mem one)
# Environment: OUT (output directory), PROFILE (profile name or file), NET_DURATION (default 1s),
# HPL=1 (then rank 0 runs `--hpl`: one HPL by srun in the allocation; needs hpcc, and a Slurm that
# starts Open MPI programs: SLURM_MPI_TYPE=pmix with a PMIx plugin that loads; HPL_N default 1000).
set -euo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-/tmp/peakbench-slurm}
mkdir -p "$out"
cargo build --release --quiet
bin=$PWD/target/release/peakbench
profile=${PROFILE:-$out/cpu-mem.toml}
if [[ -z ${PROFILE:-} ]]; then
  cat >"$profile" <<'TOML'
description = "cluster check: CPU DP on all threads and memory TRIAD"
[defaults]
repeat = 3
[[job]]
subsystem = "cpu"
workload = ["DP"]
threads = "all"
duration = "200ms"
[[job]]
subsystem = "mem"
workload = ["TRIAD"]
threads = "all"
duration = "200ms"
TOML
fi
rm -f "$out/fleet.json"
hpl=()
if [[ ${HPL:-0} = 1 ]]; then
  hpl=(--hpl --hpl-n "${HPL_N:-1000}")
fi
start=$SECONDS
bench/slurm-one-host.sh "$bin" cluster run --profile "$profile" "${hpl[@]}" \
  --net-duration "${NET_DURATION:-1s}" --json "$out/fleet.json" --html "$out/fleet.html" --no-history
echo "cluster-slurm: srun -n 3 took $((SECONDS - start)) s; $out/fleet.json, $out/fleet.html" >&2
if ! command -v python3 >/dev/null; then
  echo "cluster-slurm: check skipped: python3 not found (apt-get install python3)" >&2
  exit 0
fi
python3 - "$out/fleet.json" "${HPL:-0}" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
if sys.argv[2] == "1":
    h = doc["fleet"].get("hpl")
    assert h and h["launcher"] == "srun" and h["error"] is None and h["gflops"], h
    print(f"cluster-slurm: HPL by srun over {len(h['machines'])} machine(s), {h['processes']} processes, "
          f"N={h['n']}: {h['gflops']:.2f} GFLOP/s, residual {h['residual']:.2e}")
fleet = doc["fleet"]
nodes = fleet["nodes"]
assert fleet["world_size"] == 3 and len(nodes) == 3, "not 3 nodes"
for n in nodes:
    assert n["status"] == "complete", n
    assert n["identity_source"] == "slurm", n["identity_source"]
    assert n["system"] is not None, f"rank {n['rank']} has no system information"
res = doc["results"]
for r in range(3):
    for sub in ("cpu", "mem"):
        assert any(x["subsystem"] == sub and x["params"].get("node") == r
                   and "pattern" not in x["params"] for x in res), f"no {sub} point of rank {r}"
for m in fleet["matrices"]:
    cells = [v for row in m["values"] for v in row]
    assert len(m["values"]) == 3 and all(v is not None for v in cells), m
    print(f"{m['protocol']} {m['metric']} ({m['unit']}), sender/pinger in the row:")
    for row in m["values"]:
        print("   " + "  ".join(f"{v:10.4g}" for v in row))
assert {m["metric"] for m in fleet["matrices"]} == {"throughput", "latency"}
print(f"cluster-slurm: PASS — 3 nodes from Slurm, per-node CPU and memory points, "
      f"complete 3x3 matrices; {len(fleet['outliers'])} outlier values")
PY
