#!/usr/bin/env bash
# Checks network figures against ceilings imposed on a veth pair between two network namespaces
# it creates (pbvethA, pbvethB; 10.232.0.1 and .2) and removes on exit, root only:
#
# - both ways at once: each veth end's egress is limited by a token bucket (tc tbf, RATE,
#   default 200mbit, queueing at most 20 ms); peakbench THROUGHPUT one way, --reverse, and
#   --bidir, and iperf3 --bidir where iperf3 is 3.7 or later, ROUNDS times each. Prints each
#   way's goodput and the ratios: bidir sum / (one way + reverse), bidir each way / its one-way
#   run, peakbench / iperf3.
# - latency under load: LATENCY (TCP, 64-byte messages) with 0, 1 and 2 bulk streams beside
#   it (--load 0,1,2): the round trips' mean, p50 and p99, and the bulk streams' goodput; the
#   token bucket's queue shows in the loaded round trips.
# - connections: CONNECT (one stream, 1-byte request and response) across the pair.
#
# Usage: bench/net-veth-check.sh        (RATE=200mbit ROUNDS=3 SECS=3)
set -euo pipefail
cd "$(dirname "$0")/.."
rate=${RATE:-200mbit}
rounds=${ROUNDS:-3}
secs=${SECS:-3}
[ "$(id -u)" = 0 ] || { echo "net-veth-check: needs root (network namespaces)"; exit 2; }
command -v tc >/dev/null || { echo "net-veth-check: needs tc (apt-get install iproute2)"; exit 2; }
cargo build --release --quiet
bin=$PWD/target/release/peakbench
tmp=$(mktemp -d)
a=pbvethA b=pbvethB
cleanup() {
    [ -n "${srv:-}" ] && kill "$srv" 2>/dev/null || true
    [ -n "${isrv:-}" ] && kill "$isrv" 2>/dev/null || true
    ip netns del $a 2>/dev/null || true
    ip netns del $b 2>/dev/null || true
    rm -rf "$tmp"
}
trap cleanup EXIT
ip netns add $a
ip netns add $b
ip link add pbva netns $a type veth peer name pbvb netns $b
ip -n $a addr add 10.232.0.1/24 dev pbva
ip -n $b addr add 10.232.0.2/24 dev pbvb
for ns in $a $b; do ip -n $ns link set lo up; done
ip -n $a link set pbva up
ip -n $b link set pbvb up
ip netns exec $a tc qdisc add dev pbva root tbf rate "$rate" burst 64kb latency 20ms
ip netns exec $b tc qdisc add dev pbvb root tbf rate "$rate" burst 64kb latency 20ms
# Without a token (PEAKBENCH_TOKEN), --no-token: only this script's namespaces reach the veth
# address.
open=; [ -n "${PEAKBENCH_TOKEN:-}" ] || open=--no-token
ip netns exec $a "$bin" net serve --bind 10.232.0.1 $open --idle-timeout 5s 2>/dev/null &
srv=$!
sleep 0.5
# Goodput in Mbit/s of the receiver records of JSON file $1 whose direction contains $2.
mbps() {
    python3 - "$1" "$2" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for r in d["results"]:
    p = r["params"]
    if r["metric"] == "throughput" and p.get("side") == "receiver" and p.get("direction") == sys.argv[2]:
        print(f'{r["mean"] / 1e6:.2f}')
PY
}
pb() {
    ip netns exec $b "$bin" net --server 10.232.0.1 --workload THROUGHPUT --protocol tcp \
        --duration "${secs}s" --omit 1s --repeat 1 --quiet --no-history --json "$tmp/out.json" \
        "$@" 2>"$tmp/err" || { cat "$tmp/err"; exit 1; }
}
have_iperf=no
if command -v iperf3 >/dev/null && iperf3 --help 2>&1 | grep -q -- --bidir; then
    have_iperf=yes
    ip netns exec $a iperf3 -s -B 10.232.0.1 -p 5399 >/dev/null 2>&1 &
    isrv=$!
    sleep 0.3
fi
echo "tbf $rate on each veth end's egress; ${secs}s per run after a 1s warm-up"
printf '%-6s %10s %10s %10s %10s %10s %8s %8s %8s\n' round one-way reverse 'bidir c→s' 'bidir s→c' 'bidir sum' 'sum/1+1' 'c→s/1' 's→c/1'
for i in $(seq "$rounds"); do
    pb; one=$(mbps "$tmp/out.json" "client to server")
    pb --reverse; rev=$(mbps "$tmp/out.json" "server to client (--reverse)")
    pb --bidir
    bc=$(mbps "$tmp/out.json" "client to server, both ways at once (--bidir)")
    bs=$(mbps "$tmp/out.json" "server to client, both ways at once (--bidir)")
    bsum=$(mbps "$tmp/out.json" "both ways at once, summed (--bidir)")
    python3 -c "print(f'{$i:<6} {$one:10.2f} {$rev:10.2f} {$bc:10.2f} {$bs:10.2f} {$bsum:10.2f} {$bsum/($one+$rev):8.3f} {$bc/$one:8.3f} {$bs/$rev:8.3f}')"
    if [ $have_iperf = yes ]; then
        ip netns exec $b iperf3 -c 10.232.0.1 -p 5399 --bidir -t "$secs" -O 1 -J >"$tmp/iperf.json"
        python3 - "$tmp/iperf.json" "$bsum" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
e = d["end"]
up = e["sum_received"]["bits_per_second"] / 1e6
down = e["sum_received_bidir_reverse"]["bits_per_second"] / 1e6
pb = float(sys.argv[2])
print(f'       iperf3 --bidir: c→s {up:.2f}, s→c {down:.2f}, sum {up + down:.2f} Mbit/s; peakbench / iperf3 {pb / (up + down):.3f}')
PY
    fi
done
[ $have_iperf = yes ] || echo "iperf3 with --bidir (3.7 or later) not installed: no iperf3 comparison"
echo
echo "LATENCY under load (TCP, 64 B), ${secs}s per point after a 1s warm-up"
printf '%-6s %6s %10s %10s %10s %14s\n' round load 'mean µs' 'p50 µs' 'p99 µs' 'load Mbit/s'
for i in $(seq "$rounds"); do
    ip netns exec $b "$bin" net --server 10.232.0.1 --workload LATENCY --protocol tcp \
        --message-size 64 --load 0,1,2 --duration "${secs}s" --omit 1s --repeat 1 --quiet \
        --no-history --json "$tmp/lat.json" 2>"$tmp/err" || { cat "$tmp/err"; exit 1; }
    python3 - "$tmp/lat.json" "$i" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for r in d["results"]:
    p = r["params"]
    if r["metric"] != "latency":
        continue
    q = r["percentiles"] or {}
    load = p.get("load_goodput_bps")
    print(f'{sys.argv[2]:<6} {p["load_streams"]:6} {r["mean"] * 1e6:10.1f} {q.get("p50", 0) * 1e6:10.1f} '
          f'{q.get("p99", 0) * 1e6:10.1f} {load / 1e6 if load else 0:14.1f}')
PY
done
echo
echo "CONNECT across the pair (one stream, 1 B), ${secs}s per run after a 1s warm-up"
for i in $(seq "$rounds"); do
    ip netns exec $b "$bin" net --server 10.232.0.1 --workload CONNECT --duration "${secs}s" \
        --omit 1s --repeat 1 --quiet --no-history --json "$tmp/crr.json" 2>"$tmp/err" \
        || { cat "$tmp/err"; exit 1; }
    python3 - "$tmp/crr.json" "$i" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
rate = next(r["mean"] for r in d["results"] if r["metric"] == "rate")
ph = {r["params"]["phase"]: r["mean"] * 1e6 for r in d["results"] if r["metric"] == "latency"}
lost = d["results"][0]["params"].get("lost")
print(f'{sys.argv[2]:<6} {rate:10.0f} connections/s, whole {ph["whole connection"]:.1f} µs, connect {ph["connect"]:.1f} µs, lost {lost}')
PY
done
