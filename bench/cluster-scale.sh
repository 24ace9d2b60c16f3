#!/usr/bin/env bash
# The cluster coordinator at scale on one machine (issue 55): RANKS ranks (default 256) under
# `mpirun --oversubscribe`, network tests only and tiny (50 ms, one repetition), on loopback
# (the coordinator and every rank's server bound to 127.0.0.1). Patterns: ring and bisection
# (every rank at once), and pairs sampled to PAIR_ROUNDS rounds (default 2; 0 leaves pairs out).
# Measures: rank 0's wall time, CPU time and peak memory (the coordinator runs in it), the other
# ranks' peak memory, when the last rank joined and each network step's time (stderr lines
# timestamped as they come), and checks that the merged document holds every rank and every
# link. Needs Open MPI (apt-get install openmpi-bin); runs as root with --allow-run-as-root.
# Usage: [RANKS=256] [PAIR_ROUNDS=2] bench/cluster-scale.sh
set -euo pipefail
cd "$(dirname "$0")/.."
ranks=${RANKS:-256}; rounds=${PAIR_ROUNDS:-2}
command -v mpirun > /dev/null || { echo "needs mpirun: apt-get install openmpi-bin"; exit 2; }
[ -x /usr/bin/time ] || { echo "needs /usr/bin/time: apt-get install time"; exit 2; }
cargo build --release --quiet
pb=$PWD/target/release/peakbench
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cat > "$tmp/rank.sh" << EOF
#!/bin/bash
if [ "\$OMPI_COMM_WORLD_RANK" = 0 ]; then
  exec /usr/bin/time -f "%M %U %S %e" -o "$tmp/rank0.time" "\$@"
else
  exec /usr/bin/time -f "%M" -a -o "$tmp/ranks.rss" "\$@"
fi
EOF
chmod +x "$tmp/rank.sh"
patterns=ring,bisection
pairs=()
if [ "$rounds" -gt 0 ]; then patterns=pairs,$patterns; pairs=(--pair-rounds "$rounds"); fi
root=()
[ "$(id -u)" = 0 ] && root=(--allow-run-as-root)
ulimit -n 65536 2> /dev/null || true
start=$(date +%s.%N)
rc=0
mpirun "${root[@]}" --oversubscribe -n "$ranks" "$tmp/rank.sh" "$pb" cluster run --net-only \
    --bind 127.0.0.1 --advertise 127.0.0.1 --patterns "$patterns" "${pairs[@]}" \
    --net-duration 50ms --net-repeat 1 --join-timeout 10m --no-history --json "$tmp/c.json" \
    2>&1 > /dev/null | while IFS= read -r line; do
        printf '%s %s\n' "$(date +%s.%N)" "$line"
    done > "$tmp/log" || rc=$?
end=$(date +%s.%N)
python3 - "$tmp" "$ranks" "$start" "$end" "$rc" << 'PY'
import json, sys
tmp, ranks, start, end, rc = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4]), sys.argv[5]
lines = [l.split(' ', 1) for l in open(f'{tmp}/log', errors='replace').read().splitlines() if ' ' in l]
at = lambda pred: [float(t) for t, l in lines if pred(l)]
joined = at(lambda l: ' joined from ' in l)
steps = [(float(t), l) for t, l in lines if 'network step ' in l]
done = at(lambda l: ' done: ' in l)
rss0, user0, sys0, wall0 = open(f'{tmp}/rank0.time').read().split()
others = sorted(int(x) for x in open(f'{tmp}/ranks.rss').read().split())
doc = json.load(open(f'{tmp}/c.json'))
fleet = doc['fleet']
complete = sum(1 for n in fleet['nodes'] if n['status'] == 'complete')
patterns = {}
for r in doc['results']:
    p = r['params'].get('pattern')
    patterns[p] = patterns.get(p, 0) + 1
print(f'ranks {ranks}: mpirun exit {rc}, wall {end - start:.1f} s')
print(f'  joined: {len(joined)} ranks, the last {max(joined) - start:.1f} s after the start')
# Each step's time, to the next step's line (the last: to the first rank's end, the merge).
by = {}
for i, (t, l) in enumerate(steps):
    nxt = steps[i + 1][0] if i + 1 < len(steps) else (min(done) if done else end)
    by.setdefault(l.split('network step ')[1].split(':')[1].split()[0], []).append(nxt - t)
for p, ts in by.items():
    print(f'  {p}: {len(ts)} steps, {sum(ts):.1f} s in all, {sum(ts) / len(ts):.2f} s each (longest {max(ts):.2f} s)')
if done:
    print(f'  merged and sent: the first rank done {min(done) - start:.1f} s after the start, the last {max(done) - start:.1f} s')
print(f'  rank 0 (coordinator and a rank): peak RSS {int(rss0) / 1024:.1f} MiB, CPU {float(user0) + float(sys0):.2f} s, wall {wall0} s')
print(f'  other ranks: peak RSS median {others[len(others) // 2] / 1024:.1f} MiB, max {others[-1] / 1024:.1f} MiB ({len(others)} ranks)')
print(f'  merged: {complete} of {fleet["world_size"]} ranks complete, {len(doc["results"])} records {patterns}, notes {fleet["notes"]}')
if fleet.get('pairs_sampled'):
    print(f'  pairs sampled: {fleet["pairs_sampled"]}')
print(f'  document: {len(json.dumps(doc)) / 1e6:.1f} MB')
PY
