#!/usr/bin/env bash
# A prepared check for a machine with more cores than the development guest (issue 55): the CPU
# kernels DP and SP at 1, 2, 4 … all threads against likwid-bench, memory COPY and TRIAD at the
# same counts against likwid-bench's STREAM kernels, and LINPACK on all threads against HPL
# (hpcc), every point with its reference interleaved (`--reference`), in at most 9 minutes
# (`run --budget 8m` fits the points and the tools' runs; the probes and the start come on top).
# Where the machine's time is shorter, its card (issue 51) and the multiply against BLIS
# (issue 55) instead, each with the same carried tools.
#
#   bench/many-core.sh prepare DIR   (here) DIR gets peakbench (release build), this script,
#                                    gemm-vs-blas.sh and the reference tools unpacked from
#                                    Debian's packages (apt-get download + dpkg -x: each tool's
#                                    package and those of the shared libraries it loads, as ldd
#                                    finds them here, less the C runtime every Debian has; BLIS
#                                    where libblis4-pthread is installed), and DIR.tar.xz holds
#                                    it all to carry. TOOLS names the commands to carry (default:
#                                    the check's and the card's, those installed here).
#   DIR/many-core.sh run OUT         (there) runs the check from DIR with its tools, writes each
#                                    step's JSON and table under OUT, and prints the tables.
#   DIR/many-core.sh card OUT        (there) `peakbench card` into OUT/card (about 5 minutes).
#   DIR/many-core.sh gemm OUT        (there) gemm-vs-blas.sh, 3 rounds at N = 4000 on 1 and all
#                                    threads against the carried BLIS, into OUT/gemm.txt.
#   bench/many-core.sh run OUT       (here, or where peakbench and the tools are installed).
#
# Nothing is written outside DIR and OUT; no network address but loopback is used (the card's
# network points run on loopback).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
what=${1:-}
# The C runtime and the libraries every Debian has: never carried.
base='^(libc6|libgcc-s1|libstdc\+\+6|zlib1g|libzstd1|liblzma5|libbz2-1\.0|libtinfo6|libselinux1|libpcre2-8-0|libcrypt1)$'

# The package that installed file $1 (dpkg knows a merged /usr's files by either name); nothing
# where none did.
owner() {
    local p q
    for p in "$1" "$(readlink -f "$1")"; do
        for q in "$p" "${p#/usr}"; do
            dpkg -S "$q" 2> /dev/null | head -1 | cut -d: -f1 && return 0
        done
    done
    return 0
}

prepare() {
    local dir=$1
    mkdir -p "$dir"
    dir=$(cd "$dir" && pwd)
    (cd "$here/.." && cargo build --release --quiet)
    cp "$here/many-core.sh" "$here/gemm-vs-blas.sh" "$dir/"
    # Without its symbols: half the size to carry.
    strip -o "$dir/peakbench" "$here/../target/release/peakbench"
    local tmp
    tmp=$(mktemp -d)
    trap 'rm -rf "$tmp"' RETURN
    local pkgs=() bin path lib
    local tools=${TOOLS:-likwid-bench hpcc mpirun sysbench fio iperf3 sockperf qperf}
    for bin in $tools; do
        path=$(command -v "$bin" || true)
        if [ -z "$path" ]; then
            echo "prepare: $bin is not installed here ('peakbench reference check' names its package); not carried"
            continue
        fi
        pkgs+=("$(owner "$path")")
        while read -r lib; do
            pkgs+=("$(owner "$lib")")
        done < <(ldd "$path" | awk '$2 == "=>" && $3 ~ /^\// {print $3}')
    done
    # mpirun's plugins and help files (loaded at run time, not linked).
    command -v mpirun > /dev/null && pkgs+=(libopenmpi3 openmpi-common openmpi-bin)
    # BLIS for the multiply's reference (a library, loaded by `--blas-library`).
    dpkg -s libblis4-pthread > /dev/null 2>&1 && pkgs+=(libblis4-pthread)
    mapfile -t pkgs < <(printf '%s\n' "${pkgs[@]}" | sed 's/:amd64$//' | grep -v '^$' | sort -u | grep -Ev "$base")
    echo "prepare: carrying ${pkgs[*]}"
    (cd "$tmp" && apt-get download "${pkgs[@]}" > /dev/null)
    for deb in "$tmp"/*.deb; do dpkg -x "$deb" "$dir/root"; done
    # What no tool loads: the packages' documentation, and BLIS's copy of itself as libblas.
    rm -rf "$dir/root/usr/share/doc" "$dir/root/usr/share/man" \
        "$dir/root/usr/lib/x86_64-linux-gnu/blis-pthread/libblas.so"*
    # Libraries Debian chooses by alternatives (libblas.so.3, liblapack.so.3): named as here.
    for bin in $tools; do
        path=$(command -v "$bin" || true)
        [ -n "$path" ] || continue
        ldd "$path" | awk '$2 == "=>" && $3 ~ /^\// {print $1, $3}' | while read -r soname lib; do
            local want="$dir/root/usr/lib/x86_64-linux-gnu/$soname" real
            real=$(readlink -f "$lib")
            if [ ! -e "$want" ] && [ -e "$dir/root$real" ]; then
                ln -s "$(realpath --relative-to="$(dirname "$want")" "$dir/root$real")" "$want"
            fi
        done
    done
    # Commands Debian chooses by alternatives (mpirun): named as here.
    for bin in $tools; do
        path=$(command -v "$bin" || true)
        [ -n "$path" ] || continue
        local real want="$dir/root/usr/bin/$bin"
        real=$(readlink -f "$path")
        if [ ! -e "$want" ] && [ -e "$dir/root$real" ]; then
            ln -s "$(realpath --relative-to="$dir/root/usr/bin" "$dir/root$real")" "$want"
        fi
    done
    # One file to carry (the device takes 64 MiB at most): unpack it there with tar -xJf.
    tar -C "$(dirname "$dir")" -cJf "$dir.tar.xz" "$(basename "$dir")"
    du -sh "$dir" "$dir.tar.xz"
}

# peakbench ($pb) and the carried tools on PATH, where DIR has them.
pb=
tools_env() {
    pb=${PB:-}
    if [ -z "$pb" ]; then
        if [ -x "$here/peakbench" ]; then pb=$here/peakbench; else pb=$here/../target/release/peakbench; fi
    fi
    if [ -d "$here/root" ]; then
        # usr/sbin: likwid-bench refuses to start without its access daemon on PATH; lib: the
        # packages that ship their libraries outside /usr (libtirpc3, which fio loads).
        export PATH="$here/root/usr/bin:$here/root/usr/sbin:$PATH"
        export LD_LIBRARY_PATH="$here/root/usr/lib/x86_64-linux-gnu:$here/root/lib/x86_64-linux-gnu:$here/root/usr/lib/x86_64-linux-gnu/openmpi/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
        # Open MPI relocated: its plugins and help files under the carried prefix.
        export OPAL_PREFIX="$here/root/usr"
    fi
}

# The machine's card, as `peakbench card` writes it (the fixture of tests/fixtures/machines/).
card() {
    local out=${1:?give the output directory}
    mkdir -p "$out"
    tools_env
    COLUMNS=100 "$pb" reference check > "$out/reference-check.txt" 2>&1 || true
    local start rc=0
    start=$(date +%s)
    COLUMNS=100 "$pb" card --no-history --dir "$out/card" > "$out/card.txt" 2>&1 || rc=$?
    echo "== card: exit $rc in $(($(date +%s) - start)) s"
    tail -40 "$out/card.txt"
}

# DGEMM and SGEMM against BLIS at 1 and all threads (gemm-vs-blas.sh, its AVX-512 or AVX2 kernels
# as the CPU has them).
gemm() {
    local out=${1:?give the output directory}
    mkdir -p "$out"
    tools_env
    local lib isa=avx2 config=haswell rc=0
    lib=$(ls "$here"/root/usr/lib/x86_64-linux-gnu/blis-pthread/libblis.so.4 \
        /usr/lib/*/libblis.so.4 2> /dev/null | head -1 || true)
    if grep -qw avx512f /proc/cpuinfo; then isa=avx512 config=skx; fi
    PEAKBENCH=$pb BLAS_LIB=$lib ISA=$isa CONFIG=$config \
        "$here/gemm-vs-blas.sh" 3 4000 "1,$(nproc)" 2>&1 | tee "$out/gemm.txt" || rc=$?
    echo "== gemm: exit $rc"
}

run() {
    local out=${1:?give the output directory}
    mkdir -p "$out"
    tools_env
    local cpus threads n
    cpus=$(nproc)
    threads=1
    n=2
    while [ "$n" -lt "$cpus" ]; do threads="$threads,$n"; n=$((n * 2)); done
    [ "$cpus" -gt 1 ] && threads="$threads,$cpus"
    echo "many-core: $cpus CPUs, threads $threads, peakbench $("$pb" --version)"
    COLUMNS=100 "$pb" reference check > "$out/reference-check.txt" 2>&1 || true
    echo "the tools peakbench finds: $out/reference-check.txt"
    # One profile under `run --budget`: the reference tools' runs are fitted with the points'
    # (each tool once a point, none longer than a 40th of the budget, where the time asks it).
    cat > "$out/many-core.toml" << TOML
description = "many-core check: CPU kernels and STREAM kernels at 1..all threads, LINPACK on all"

[defaults]
repeat = 3

[[job]]
subsystem = "cpu"
workload = ["DP", "SP"]
threads = "$threads"
duration = "200ms"

[[job]]
subsystem = "mem"
workload = ["COPY", "TRIAD"]
threads = "$threads"

[[job]]
subsystem = "cpu"
workload = ["LINPACK"]
threads = "$cpus"
TOML
    local start rc=0
    start=$(date +%s)
    timeout 560 "$pb" run --profile "$out/many-core.toml" --budget 8m --reference --no-history \
        --json "$out/many-core.json" 2> "$out/many-core.err" > /dev/null || rc=$?
    echo "== many-core: exit $rc in $(($(date +%s) - start)) s"
    grep -E "^peakbench run|^job " "$out/many-core.err" | head -20
    if [ -s "$out/many-core.json" ]; then
        COLUMNS=100 "$pb" report "$out/many-core.json" | tee "$out/many-core.txt"
    else
        tail -5 "$out/many-core.err"
    fi
}

case "$what" in
    prepare) prepare "${2:?give the directory to fill}" ;;
    run) run "${2:-many-core-out}" ;;
    card) card "${2:-many-core-out}" ;;
    gemm) gemm "${2:-many-core-out}" ;;
    *) echo "usage: $0 prepare DIR | run OUT | card OUT | gemm OUT"; exit 2 ;;
esac
