#!/usr/bin/env bash
# Disk acceptance benchmark: peakbench and fio (apt-get install fio; 3.33 on Debian 12) with the
# same parameters on the same file, in one run, interleaved ROUNDS times with the order
# alternating; the median run of each tool is compared (a shared virtio disk swings by 2x
# between runs, so one run proves nothing):
#   4k random read and write, QD1 psync and QD32 io_uring: IOPS >= 0.95x fio;
#   1M sequential read and write, QD1 psync and QD32 io_uring: MB/s >= 0.95x fio;
#   4k random read QD1: p50 and p99 latency within 10 % of fio's clat percentiles.
# Both tools use O_DIRECT, a 1 s ramp and RUNTIME seconds, on the same CPU (peakbench puts its
# I/O thread on the CPU that takes the disk's interrupts; fio is pinned there with
# --cpus_allowed); writes end with a sync (fio end_fsync=1). The file (SIZE, default 1G) is
# created here by fio, used by both, and removed. fio's buffers are on transparent huge pages,
# as peakbench's and as `--reference` runs it (GLIBC_TUNABLES=glibc.malloc.hugetlb=1; on 4 KiB
# pages a 1 MiB block is split in two requests by a queue of fewer than 256 segments, and fio
# read half as fast here); FIO_HUGE=0 runs fio with its malloc'd buffers as they come.
# Usage: [DIR=.] [SIZE=1G] [RUNTIME=5] [ROUNDS=7] [FIO_HUGE=1] bench/disk-vs-fio.sh
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${DIR:-.}; size=${SIZE:-1G}; runtime=${RUNTIME:-5}; rounds=${ROUNDS:-7}
tunables=${GLIBC_TUNABLES:-}
[ "${FIO_HUGE:-1}" = 0 ] || tunables=${tunables:+$tunables:}glibc.malloc.hugetlb=1
command -v fio >/dev/null || { echo "fio not found: apt-get install fio" >&2; exit 2; }
command -v python3 >/dev/null || { echo "python3 not found: apt-get install python3" >&2; exit 2; }
cargo build --release --quiet
pb=$PWD/target/release/peakbench
file=$(mktemp -p "$dir" peakbench-fio.XXXXXX)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp" "$file"' EXIT
fio --name=layout --filename="$file" --size="$size" --rw=write --bs=1M --direct=1 --end_fsync=1 --output=/dev/null
echo "fio $(fio --version), file $file ($size), $rounds interleaved rounds of ${runtime}s per tool and point"

status=0
printf '%-28s %12s %12s %7s\n' point peakbench fio ratio
run() { # label rw pbworkload bs engine depth metric
  local label=$1 rw=$2 wl=$3 bs=$4 engine=$5 depth=$6 metric=$7
  : > "$tmp/rounds.jsonl"
  local cpus=""
  for r in $(seq "$rounds"); do
    run_pb() {
      "$pb" disk --file "$file" --allow-overwrite --size "$size" --workload "$wl" --block-size "$bs" \
        --engine "$engine" --iodepth "$depth" --runtime "${runtime}s" --ramp 1s --repeat 1 --quiet --no-history \
        --json "$tmp/pb.json"
      # fio runs on the CPU peakbench chose (the one taking the disk's interrupts).
      cpus=$(python3 -c "import json,sys; print(','.join(map(str, json.load(open(sys.argv[1]))['results'][0]['params']['cpus'])))" "$tmp/pb.json")
    }
    run_fio() {
      GLIBC_TUNABLES=$tunables fio --name=cmp --filename="$file" --size="$size" --rw="$rw" --bs="$bs" --ioengine="$engine" --cpus_allowed="$cpus" \
        --iodepth="$depth" --direct=1 --time_based --runtime="$runtime" --ramp_time=1 \
        --end_fsync=1 --output-format=json --output="$tmp/fio.json"
    }
    # Alternate which tool goes first, so that a drift of the shared disk favours neither.
    if [ $((r % 2)) = 1 ] || [ -z "$cpus" ]; then run_pb; run_fio; else run_fio; run_pb; fi
    python3 - "$tmp/pb.json" "$tmp/fio.json" >> "$tmp/rounds.jsonl" <<'PY'
import json, sys
pb, fio = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
rec = {r["metric"]: r for r in pb["results"]}
job = fio["jobs"][0]
side = job["read"] if job["read"]["io_bytes"] > 0 else job["write"]
clat = side["clat_ns"]["percentile"]
print(json.dumps({
    "pb_iops": rec["iops"]["mean"], "fio_iops": side["iops"],
    "pb_mbps": rec["throughput"]["mean"] / 1e6, "fio_mbps": side["bw_bytes"] / 1e6,
    "pb_p50": rec["latency"]["percentiles"]["p50"] * 1e6, "fio_p50": clat["50.000000"] / 1000,
    "pb_p99": rec["latency"]["percentiles"]["p99"] * 1e6, "fio_p99": clat["99.000000"] / 1000,
}))
PY
  done
  python3 - "$tmp/rounds.jsonl" "$label" "$metric" <<'PY' || status=1
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
label, metric = sys.argv[2], sys.argv[3]
med = lambda k: statistics.median(r[k] for r in rows)
key, unit = ("iops", "IOPS") if metric == "iops" else ("mbps", "MB/s")
a, b = med("pb_" + key), med("fio_" + key)
print(f"{label:28} {a:12.1f} {b:12.1f} {a / b:7.3f}  {unit}, median of {len(rows)}")
ok = a / b >= 0.95
print(f"{'PASS' if ok else 'FAIL'}  {label} >= 0.95x fio")
if label == "4k randread QD1 psync":
    for p in ("p50", "p99"):
        x, y = med("pb_" + p), med("fio_" + p)
        good = abs(x / y - 1) <= 0.10
        ok &= good
        print(f"{'PASS' if good else 'FAIL'}  {label} {p}: peakbench {x:.1f} us, fio clat {y:.1f} us, ratio {x / y:.3f} (within 10 %)")
sys.exit(0 if ok else 1)
PY
}
run "4k randread QD1 psync"      randread  RR 4K psync    1  iops
run "4k randwrite QD1 psync"     randwrite WR 4K psync    1  iops
run "4k randread QD32 io_uring"  randread  RR 4K io_uring 32 iops
run "4k randwrite QD32 io_uring" randwrite WR 4K io_uring 32 iops
run "1M read QD1 psync"          read      RS 1M psync    1  throughput
run "1M write QD1 psync"         write     WS 1M psync    1  throughput
run "1M read QD32 io_uring"      read      RS 1M io_uring 32 throughput
run "1M write QD32 io_uring"     write     WS 1M io_uring 32 throughput
exit $status
