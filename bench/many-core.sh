#!/usr/bin/env bash
# A prepared check for a machine with more cores than the development guest (issue 55): the CPU
# kernels DP and SP at 1, 2, 4 … all threads against likwid-bench, memory COPY and TRIAD at the
# same counts against likwid-bench's STREAM kernels, and LINPACK on all threads against HPL
# (hpcc), every point with its reference interleaved (`--reference`), in at most 9 minutes
# (`run --budget 8m` fits the points and the tools' runs; the probes and the start come on top).
#
#   bench/many-core.sh prepare DIR   (here) DIR gets peakbench (release build), this script and
#                                    the reference tools unpacked from Debian's packages
#                                    (apt-get download + dpkg -x: each tool's package and those
#                                    of the shared libraries it loads, as ldd finds them here,
#                                    less the C runtime every Debian has), and DIR.tar.xz holds
#                                    it all to carry (about 16 MB; unpacked, about 96 MB).
#   DIR/many-core.sh run OUT         (there) runs the check from DIR with its tools, writes each
#                                    step's JSON and table under OUT, and prints the tables.
#   bench/many-core.sh run OUT       (here, or where peakbench and the tools are installed).
#
# Nothing is written outside DIR and OUT; no network address but loopback is used (none is:
# these are CPU and memory points).
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
    cp "$here/../target/release/peakbench" "$here/many-core.sh" "$dir/"
    local tmp
    tmp=$(mktemp -d)
    trap 'rm -rf "$tmp"' RETURN
    local pkgs=() bin path lib
    for bin in likwid-bench hpcc mpirun; do
        path=$(command -v "$bin" || true)
        if [ -z "$path" ]; then
            echo "prepare: $bin is not installed here (apt-get install likwid hpcc openmpi-bin); not carried"
            continue
        fi
        pkgs+=("$(owner "$path")")
        while read -r lib; do
            pkgs+=("$(owner "$lib")")
        done < <(ldd "$path" | awk '$2 == "=>" && $3 ~ /^\// {print $3}')
    done
    # mpirun's plugins and help files (loaded at run time, not linked).
    command -v mpirun > /dev/null && pkgs+=(libopenmpi3 openmpi-common openmpi-bin)
    mapfile -t pkgs < <(printf '%s\n' "${pkgs[@]}" | sed 's/:amd64$//' | grep -v '^$' | sort -u | grep -Ev "$base")
    echo "prepare: carrying ${pkgs[*]}"
    (cd "$tmp" && apt-get download "${pkgs[@]}" > /dev/null)
    for deb in "$tmp"/*.deb; do dpkg -x "$deb" "$dir/root"; done
    # Libraries Debian chooses by alternatives (libblas.so.3, liblapack.so.3): named as here.
    for bin in likwid-bench hpcc; do
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
    for bin in likwid-bench hpcc mpirun; do
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

run() {
    local out=${1:?give the output directory}
    mkdir -p "$out"
    local pb=${PB:-}
    if [ -z "$pb" ]; then
        if [ -x "$here/peakbench" ]; then pb=$here/peakbench; else pb=$here/../target/release/peakbench; fi
    fi
    if [ -d "$here/root" ]; then
        export PATH="$here/root/usr/bin:$PATH"
        export LD_LIBRARY_PATH="$here/root/usr/lib/x86_64-linux-gnu:$here/root/usr/lib/x86_64-linux-gnu/openmpi/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
        # Open MPI relocated: its plugins and help files under the carried prefix.
        export OPAL_PREFIX="$here/root/usr"
    fi
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
    *) echo "usage: $0 prepare DIR | run OUT"; exit 2 ;;
esac
