#!/usr/bin/env bash
# Steady points, no burst imposed: how many of them peakbench calls a burst (issue 54: none
# should be). Runs, one after the other, the CPU kernels DP, SP, INT32 and INT64 and the memory's
# COPY, SCALE, ADD and TRIAD at 1 and 2 threads, the disk's RS, WS, RR and WR (1 thread, QD 1, a
# file under DIR) and TCP and UDP THROUGHPUT over loopback at 1 and 2 streams, each REPEAT times,
# then with SUSTAIN the same CPU, memory and TCP points under `--sustain`; prints each point
# with a per-interval series, its phases, and whether its phases make a burst (the rule of
# results::phases::burst: a first phase 1.5 times as fast as every later one, ending inside a
# repetition). Then the findings
# peakbench printed that say "burst:". On a shared VM the host moves a figure by itself; a
# shift it made shows here as phases, and the note says which.
# Usage: [REPEAT=3] [SUSTAIN=4s] [DIR=/var/tmp] bench/steady-points.sh
set -euo pipefail
cd "$(dirname "$0")/.."
repeat=${REPEAT:-3}; sustain=${SUSTAIN:-4s}; dir=${DIR:-/var/tmp}
cargo build --release --quiet
pb=$PWD/target/release/peakbench
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
run() {
    local name=$1; shift
    "$pb" "$@" --repeat "$repeat" --no-history --json "$tmp/$name.json" > "$tmp/$name.txt" 2>&1 \
        || { echo "$name failed:"; tail -3 "$tmp/$name.txt"; }
}
run cpu cpu --workload DP,SP,INT32,INT64 --threads 1,2
run mem mem --workload COPY,SCALE,ADD,TRIAD --threads 1,2
run disk disk --workload RS,WS,RR,WR --threads 1 --iodepth 1 --size 256M --dir "$dir"
run net net --workload THROUGHPUT --protocol tcp,udp --streams 1,2
if [ -n "$sustain" ]; then
    run cpu-sustain cpu --workload DP,INT64 --threads 1,2 --sustain "$sustain"
    run mem-sustain mem --workload COPY,TRIAD --threads 1,2 --sustain "$sustain"
    run net-sustain net --workload THROUGHPUT --protocol tcp --streams 1,2 --sustain "$sustain"
fi
python3 - "$tmp"/*.json <<'PY'
import json, sys
points = bursts = phased = 0
for path in sys.argv[1:]:
    name = path.rsplit('/', 1)[-1][:-5]
    for r in json.load(open(path))['results']:
        if not r.get('intervals') or r['metric'] == 'latency':
            continue
        points += 1
        p = r.get('phases') or []
        burst = (len(p) >= 2 and not p[1].get('between_repetitions')
                 and all(p[0]['value'] >= 1.5 * x['value'] for x in p[1:]))
        phased += bool(p)
        bursts += burst
        params = r['params']
        label = f"{name:12} {r['workload']:10} {r['metric']:10} t={params.get('threads')} {params.get('protocol', '')} {params.get('side', '')}"
        steady = (r.get('sustain') or {}).get('steady_s')
        print(f"{label:60} {'BURST' if burst else ('phases' if p else 'steady'):7}"
              + (f" {[(x['start_s'], '%.4g' % x['value'], 'between' if x.get('between_repetitions') else '') for x in p]}" if p else '')
              + (f" steady at {steady}" if steady else ''))
print(f"{points} points with a series, {phased} with phases, {bursts} called a burst")
PY
grep -h "burst:" "$tmp"/*.txt || echo "no finding says burst"
