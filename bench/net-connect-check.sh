#!/usr/bin/env bash
# Checks CONNECT against a stand-alone connect loop (netperf's TCP_CRR is not in Debian's
# archive): a C program (below, compiled with gcc -O2 into a temporary directory) runs a server
# thread that accepts, reads a 1-byte request, writes a 1-byte response and closes, and a client
# that connects, writes, reads the response and the close, and closes, for SECS seconds; it
# prints connections per second and the mean connection in µs. The script runs it and
# `peakbench net --workload CONNECT` (one stream, 1-byte messages, over loopback) in turns,
# ROUNDS times each.
#
# Usage: bench/net-connect-check.sh        (ROUNDS=3 SECS=3)
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${ROUNDS:-3}
secs=${SECS:-3}
command -v gcc >/dev/null || { echo "net-connect-check: needs gcc (apt-get install gcc)"; exit 2; }
cargo build --release --quiet
bin=$PWD/target/release/peakbench
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cat >"$tmp/crr.c" <<'C'
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static int listener;

static void *serve(void *arg) {
    (void)arg;
    for (;;) {
        int c = accept(listener, NULL, NULL);
        if (c < 0) continue;
        int one = 1;
        setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        char b;
        if (read(c, &b, 1) == 1) (void)!write(c, &b, 1);
        close(c);
    }
    return NULL;
}

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

int main(int argc, char **argv) {
    double secs = argc > 1 ? atof(argv[1]) : 3;
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    listener = socket(AF_INET, SOCK_STREAM, 0);
    socklen_t len = sizeof a;
    if (bind(listener, (struct sockaddr *)&a, sizeof a) || listen(listener, 128) ||
        getsockname(listener, (struct sockaddr *)&a, &len)) {
        perror("listen");
        return 1;
    }
    pthread_t t;
    pthread_create(&t, NULL, serve, NULL);
    long n = 0;
    double start = now(), end = start + secs;
    while (now() < end) {
        int s = socket(AF_INET, SOCK_STREAM, 0);
        if (connect(s, (struct sockaddr *)&a, sizeof a)) { perror("connect"); return 1; }
        int one = 1;
        setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        char b = 7, r;
        if (write(s, &b, 1) != 1 || read(s, &r, 1) != 1) { perror("transaction"); return 1; }
        while (read(s, &r, 1) > 0) {}
        close(s);
        n++;
    }
    double took = now() - start;
    printf("%.0f %.2f\n", n / took, took / n * 1e6);
    return 0;
}
C
gcc -O2 -pthread -o "$tmp/crr" "$tmp/crr.c"
echo "CONNECT over loopback, one stream, 1-byte request and response, ${secs}s per run"
printf '%-6s %14s %12s %14s %12s %8s\n' round 'loop conn/s' 'loop µs' 'peakbench/s' 'peakbench µs' ratio
for i in $(seq "$rounds"); do
    read -r lrate lus < <("$tmp/crr" "$secs")
    "$bin" net --workload CONNECT --protocol tcp --duration "${secs}s" --omit 1s --repeat 1 \
        --quiet --no-history --json "$tmp/pb.json" 2>/dev/null
    read -r prate pus < <(python3 - "$tmp/pb.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
rate = next(r["mean"] for r in d["results"] if r["metric"] == "rate")
whole = next(r["mean"] for r in d["results"]
             if r["metric"] == "latency" and r["params"].get("phase") == "whole connection")
print(f"{rate:.0f} {whole * 1e6:.2f}")
PY
)
    python3 -c "print(f'{$i:<6} {$lrate:14.0f} {$lus:12.2f} {$prate:14.0f} {$pus:12.2f} {$prate/$lrate:8.3f}')"
done
