#!/usr/bin/env bash
# Checks C2C against a stand-alone ping-pong: a C program (below, compiled with gcc -O2 into a
# temporary directory) pins two threads to CPUs A and B and bounces one 128-byte-aligned cache
# line between them as C2C does (the first writes an odd number and waits for the next even
# one), then prints the mean round trip in ns over ROUNDS rounds of TRIPS round trips. The
# script runs it and `peakbench mem --workload C2C --cpus A,B` in turns, ROUNDS times each.
#
# Usage: bench/c2c-check.sh [A B]     (default CPUs 0 1; ROUNDS=3, TRIPS=2000000)
set -euo pipefail
cd "$(dirname "$0")/.."
a=${1:-0}
b=${2:-1}
rounds=${ROUNDS:-3}
trips=${TRIPS:-2000000}
command -v gcc >/dev/null || { echo "c2c-check: needs gcc (apt-get install gcc)"; exit 2; }
cargo build --release --quiet
bin=$PWD/target/release/peakbench
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cat >"$tmp/pingpong.c" <<'C'
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static _Alignas(128) _Atomic uint64_t line;
static uint64_t trips;
static int cpus[2];

static void pin(int cpu) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    if (pthread_setaffinity_np(pthread_self(), sizeof set, &set) != 0) {
        perror("pin");
        exit(1);
    }
}

static uint64_t await_parity(uint64_t parity) {
    uint64_t v;
    while (((v = atomic_load_explicit(&line, memory_order_acquire)) & 1) != parity)
        __builtin_ia32_pause();
    return v;
}

static void *pong(void *arg) {
    (void)arg;
    pin(cpus[1]);
    for (uint64_t t = 0; t < trips; t++)
        atomic_store_explicit(&line, await_parity(1) + 1, memory_order_release);
    return NULL;
}

int main(int argc, char **argv) {
    if (argc != 4) return 2;
    cpus[0] = atoi(argv[1]);
    cpus[1] = atoi(argv[2]);
    trips = strtoull(argv[3], NULL, 10);
    atomic_store(&line, 0);
    pthread_t th;
    pthread_create(&th, NULL, pong, NULL);
    pin(cpus[0]);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (uint64_t t = 0; t < trips; t++)
        atomic_store_explicit(&line, await_parity(0) + 1, memory_order_release);
    await_parity(0);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    pthread_join(th, NULL);
    double ns = (t1.tv_sec - t0.tv_sec) * 1e9 + (t1.tv_nsec - t0.tv_nsec);
    printf("%.2f\n", ns / trips);
    return 0;
}
C
gcc -O2 -pthread -o "$tmp/pingpong" "$tmp/pingpong.c"
for ((i = 1; i <= rounds; i++)); do
  c=$("$tmp/pingpong" "$a" "$b" "$trips")
  p=$("$bin" mem --workload C2C --cpus "$a,$b" --no-history --json - --quiet 2>/dev/null |
    python3 -c 'import json,sys; r=[x for x in json.load(sys.stdin)["results"] if x["params"]["from_cpu"]=='"$a"']; print("%.2f" % (r[0]["mean"]*1e9))')
  echo "round $i: CPU $a -> $b round trip: stand-alone ping-pong $c ns, peakbench C2C $p ns"
done
