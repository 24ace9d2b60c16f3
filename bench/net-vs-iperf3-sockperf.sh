#!/usr/bin/env bash
# Network acceptance benchmark: peakbench against iperf3 3.12 and sockperf 3.7 (apt-get install
# iperf3 sockperf iproute2) with matching parameters, in one run, over
#   loopback (127.0.0.1), and
#   a veth pair between two network namespaces that this script creates (root; addresses
#   10.232.0.1/24 and 10.232.0.2/24 inside those namespaces only) and removes on exit.
# Points (each tool's median over ROUNDS interleaved runs, the order alternating; the VM is
# noisy):
#   TCP 1 and 2 streams, 128 KiB writes: receiver goodput >= 0.95x iperf3 (-l 128K -P N);
#   UDP 1400 B at full rate: receiver goodput >= 0.95x iperf3 -u -b 0 -l 1400, loss of both shown;
#   ping-pong 64 B, TCP and UDP: p50 round trip <= 1.1x sockperf ping-pong --full-rtt.
# Throughput rows also show peakbench with --busy-poll 0 (receivers that sleep at once, as
# iperf3's does), for comparison only.
# Servers run in the first namespace, clients in the second (on loopback both in this one);
# every server is pinned to CPU 0 and every client to CPU 1 (taskset), the same for all tools:
# on a VM a cross-CPU wake-up costs ~60 us more than one on the same CPU, so unpinned
# round trips measure where the scheduler happened to put the two processes.
# Usage: [DURATION=5] [ROUNDS=5] [MODES="loopback veth"] [ONLY=throughput|latency] bench/net-vs-iperf3-sockperf.sh
set -euo pipefail
cd "$(dirname "$0")/.."
dur=${DURATION:-5}; rounds=${ROUNDS:-5}; modes=${MODES:-loopback veth}; only=${ONLY:-}
for tool in iperf3 sockperf python3; do
  command -v $tool >/dev/null || { echo "$tool not found: apt-get install iperf3 sockperf python3" >&2; exit 2; }
done
cargo build --release --quiet
pb=$PWD/target/release/peakbench
tmp=$(mktemp -d)
nsa=pbbenchA; nsb=pbbenchB
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  ip netns del $nsa 2>/dev/null || true
  ip netns del $nsb 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT
echo "$(iperf3 --version | head -1); $(sockperf --version 2>&1 | head -1); ${rounds} interleaved rounds of ${dur}s (+1s omitted) per tool and point"
status=0

start() { # background a server, remember its pid
  "$@" >/dev/null 2>&1 &
  pids+=($!)
}

median_compare() { # label file key_pb key_ref rule(ge95|le110) unit
  python3 - "$@" <<'PY' || status=1
import json, statistics, sys
label, path, kp, kr, rule, unit = sys.argv[1:7]
rows = [json.loads(l) for l in open(path)]
med = lambda k: statistics.median(r[k] for r in rows)
a, b = med(kp), med(kr)
extra = ""
if "pb_busy0" in rows[0]:
    extra += f"  (peakbench --busy-poll 0: {med('pb_busy0'):.1f}, ratio {med('pb_busy0') / b:.3f})"
if "pb_loss" in rows[0]:
    extra += f"  loss: peakbench {med('pb_loss'):.2f} %, iperf3 {med('ref_loss'):.2f} %"
ratio = a / b
ok = ratio >= 0.95 if rule == "ge95" else ratio <= 1.10
want = ">= 0.95x" if rule == "ge95" else "<= 1.10x"
print(f"{'PASS' if ok else 'FAIL'}  {label:34} peakbench {a:10.1f}  reference {b:10.1f} {unit:7} ratio {ratio:6.3f} ({want}, median of {len(rows)}){extra}")
sys.exit(0 if ok else 1)
PY
}

throughput() { # mode label proto streams size ref-args...
  local label=$1 proto=$2 streams=$3 size=$4; shift 4
  : > "$tmp/rounds.jsonl"
  for r in $(seq "$rounds"); do
    run_pb() {
      $cli "$pb" net --server "$ip" --workload THROUGHPUT --protocol "$proto" --streams "$streams" \
        --message-size "$size" --duration "${dur}s" --omit 1s --repeat 1 --quiet --no-history --json "$tmp/pb.json"
      # The same with receivers that sleep at once, as iperf3's does (shown, not judged).
      $cli "$pb" net --server "$ip" --workload THROUGHPUT --protocol "$proto" --streams "$streams" \
        --message-size "$size" --duration "${dur}s" --omit 1s --repeat 1 --quiet --no-history \
        --busy-poll 0 --json "$tmp/pb0.json"
    }
    run_ref() {
      $cli iperf3 -c "$ip" -t "$dur" -O 1 -l "$size" -P "$streams" -J "$@" > "$tmp/ref.json"
    }
    if [ $((r % 2)) = 1 ]; then run_pb; run_ref "$@"; else run_ref "$@"; run_pb; fi
    python3 - "$tmp/pb.json" "$tmp/ref.json" "$tmp/pb0.json" >> "$tmp/rounds.jsonl" <<'PY'
import json, sys
pb, ref, pb0 = (json.load(open(p)) for p in sys.argv[1:4])
rec = lambda m, side=None, doc=pb: next(r for r in doc["results"] if r["metric"] == m and (side is None or r["params"].get("side") == side))
end = ref["end"]
row = {"pb": rec("throughput", "receiver")["mean"] / 1e6, "ref": end["sum_received"]["bits_per_second"] / 1e6,
       "pb_busy0": rec("throughput", "receiver", pb0)["mean"] / 1e6}
if "lost_percent" in end.get("sum", {}):
    row["pb_loss"] = rec("loss")["mean"]
    row["ref_loss"] = end["sum"]["lost_percent"]
print(json.dumps(row))
PY
  done
  median_compare "$mode $label" "$tmp/rounds.jsonl" pb ref ge95 Mbit/s
}

latency() { # label proto
  local label=$1 proto=$2 flag="" port=11111
  if [ "$proto" = tcp ]; then flag=--tcp; else port=11112; fi
  : > "$tmp/rounds.jsonl"
  for r in $(seq "$rounds"); do
    run_pb() {
      $cli "$pb" net --server "$ip" --workload LATENCY --protocol "$proto" --message-size 64 \
        --duration "${dur}s" --omit 1s --repeat 1 --quiet --no-history --json "$tmp/pb.json"
    }
    run_ref() {
      $cli sockperf ping-pong $flag -i "$ip" -p $port -m 64 -t "$dur" --full-rtt > "$tmp/ref.txt" 2>&1
    }
    if [ $((r % 2)) = 1 ]; then run_pb; run_ref; else run_ref; run_pb; fi
    python3 - "$tmp/pb.json" "$tmp/ref.txt" >> "$tmp/rounds.jsonl" <<'PY'
import json, re, sys
pb = json.load(open(sys.argv[1]))
lat = next(r for r in pb["results"] if r["metric"] == "latency")
text = open(sys.argv[2]).read()
m = re.search(r"percentile 50\.000 =\s*([0-9.]+)", text)
if not m:
    sys.exit("sockperf printed no p50:\n" + text)
print(json.dumps({"pb": lat["percentiles"]["p50"] * 1e6, "ref": float(m.group(1))}))
PY
  done
  median_compare "$mode $label" "$tmp/rounds.jsonl" pb ref le110 us
}

for mode in $modes; do
  # Without a token (PEAKBENCH_TOKEN) peakbench serves loopback only, unless told
  # (--no-token) to serve the veth address: only this script's namespaces reach it.
  cli="taskset -c 1"; srv="taskset -c 0"; ip=127.0.0.1; open=
  if [ "$mode" = veth ]; then
    if [ "$(id -u)" != 0 ] || ! command -v ip >/dev/null; then
      echo "SKIPPED veth: needs root and ip (apt-get install iproute2)"; continue
    fi
    ip netns add $nsa; ip netns add $nsb
    ip link add pbvA netns $nsa type veth peer name pbvB netns $nsb
    ip -n $nsa addr add 10.232.0.1/24 dev pbvA; ip -n $nsa link set pbvA up; ip -n $nsa link set lo up
    ip -n $nsb addr add 10.232.0.2/24 dev pbvB; ip -n $nsb link set pbvB up; ip -n $nsb link set lo up
    srv="ip netns exec $nsa taskset -c 0"; cli="ip netns exec $nsb taskset -c 1"; ip=10.232.0.1
    [ -n "${PEAKBENCH_TOKEN:-}" ] || open=--no-token
  fi
  start $srv "$pb" net serve --bind "$ip" $open
  start $srv iperf3 -s -B "$ip"
  start $srv sockperf server --tcp -i "$ip" -p 11111
  start $srv sockperf server -i "$ip" -p 11112
  sleep 1
  if [ "$only" != latency ]; then
    throughput "TCP 1 stream 128K" tcp 1 128K
    throughput "TCP 2 streams 128K" tcp 2 128K
    throughput "UDP 1400 B full rate" udp 1 1400 -u -b 0
  fi
  if [ "$only" != throughput ]; then
    latency "TCP ping-pong 64 B p50" tcp
    latency "UDP ping-pong 64 B p50" udp
  fi
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  pids=()
  if [ "$mode" = veth ]; then ip netns del $nsa; ip netns del $nsb; fi
done
exit $status
