#!/usr/bin/env bash
# Brings up a ONE-HOST Slurm "cluster" on this machine (slurmctld and slurmd both on localhost, one
# node named after `hostname -s`) and runs a command under `srun -n 3 --kill-on-bad-exit=1`, so
# that peakbench's Slurm support can be exercised without a real cluster. For one host only: it
# is no way to set up a multi-node cluster, and it refuses to touch a slurm.conf it did not write.
#
# What it does, each step only when needed (so a second run is a no-op until the srun):
#   1. installs the Debian packages slurm-wlm (slurmctld, slurmd, slurm-client) and munge;
#   2. creates /etc/munge/munge.key (munge:munge, 0400) if missing;
#   3. writes /etc/slurm/slurm.conf when it is missing or carries the marker line below, and
#      otherwise stops with an error (a real cluster's config is never overwritten). The node
#      declares max(4, nproc) CPUs (SlurmdParameters=config_overrides), so `srun -n 3` starts 3
#      tasks at once even on a 2-CPU VM; ProctrackType=proctrack/linuxproc, TaskPlugin=task/none
#      (no cgroups needed), no accounting, select/cons_tres;
#   4. starts munged, slurmctld and slurmd by hand (no systemd needed) if they are not running,
#      and records the PIDs of those it started under /run/peakbench-slurm/;
#   5. waits (bounded) for the node to be idle, resuming it if it is down or drained;
#   6. runs `srun -n 3 --kill-on-bad-exit=1 COMMAND...` (default: a one-line-per-task smoke test).
# Every wait is bounded; srun gives up when the 3 CPUs are not free within $SLURM_WAIT seconds.
#
# Usage: bench/slurm-one-host.sh [COMMAND [ARG...]]   set up if needed, then srun -n 3 COMMAND
#        bench/slurm-one-host.sh --stop               stop the daemons that this script started
# Environment: NTASKS (default 3), SLURM_WAIT (seconds, default 60).
# Needs root for the setup steps (not once everything is up) and Debian's apt-get.
set -euo pipefail

marker='# written by peakbench bench/slurm-one-host.sh'
conf=/etc/slurm/slurm.conf
rundir=/run/peakbench-slurm
ntasks=${NTASKS:-3}
wait_s=${SLURM_WAIT:-60}
host=$(hostname -s)

say() { echo "slurm-one-host: $*" >&2; }
die() { say "$*"; exit 1; }
need_root() { [[ $(id -u) == 0 ]] || die "must be root to $1"; }
# alive PID NAME: PID is a running process called NAME
alive() { [[ -n $1 && $(ps -p "$1" -o comm= 2>/dev/null) == "$2" ]]; }
# wait_for SECONDS DESCRIPTION COMMAND...: poll COMMAND every 0.5 s until it succeeds
wait_for() {
  local secs=$1 what=$2 end=$((SECONDS + $1))
  shift 2
  until "$@"; do
    ((SECONDS < end)) || die "timed out after $secs s waiting for $what"
    sleep 0.5
  done
}

stop() {
  local name pid end
  for name in slurmd slurmctld munged; do # reverse order of start
    [[ -f $rundir/$name.pid ]] || continue
    pid=$(<"$rundir/$name.pid")
    if alive "$pid" "$name"; then
      say "stopping $name (pid $pid)"
      kill -TERM "$pid"
      end=$((SECONDS + 20))
      while alive "$pid" "$name" && ((SECONDS < end)); do sleep 0.2; done
      if alive "$pid" "$name"; then
        say "$name (pid $pid) still running after 20 s: killing it"
        kill -KILL "$pid" || true
      fi
    else
      say "$name (pid $pid) is not running"
    fi
    rm -f "$rundir/$name.pid"
  done
}

install_packages() {
  local missing=0 c
  for c in munged slurmctld slurmd srun sinfo scontrol; do
    command -v "$c" >/dev/null || [[ -x /usr/sbin/$c ]] || missing=1
  done
  ((missing)) || return 0
  need_root "install slurm-wlm and munge"
  say "installing slurm-wlm and munge"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q slurm-wlm munge >&2 || {
    apt-get update -q >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q slurm-wlm munge >&2
  }
}

munge_key() {
  local key=/etc/munge/munge.key
  [[ -s $key ]] && return 0
  munge_ok && return 0 # /etc/munge is 0700: a non-root user cannot see the key, but munged works
  need_root "create $key"
  say "creating $key"
  install -d -o munge -g munge -m 0700 /etc/munge
  if command -v mungekey >/dev/null; then
    mungekey --create --keyfile="$key"
  else
    dd if=/dev/urandom of="$key" bs=1024 count=1 status=none
  fi
  chown munge:munge "$key"
  chmod 0400 "$key"
}

write_conf() {
  local cpus mem_mb new
  cpus=$(nproc)
  ((cpus >= 4)) || cpus=4
  mem_mb=$(awk '/^MemTotal:/ {printf "%d", $2 / 1024 * 0.9}' /proc/meminfo)
  new=$(cat <<EOF
$marker
# One-host Slurm: controller and the only compute node are this machine ($host).
ClusterName=peakbench
SlurmctldHost=$host(127.0.0.1)
SlurmUser=slurm
AuthType=auth/munge
StateSaveLocation=/var/lib/slurm/slurmctld
SlurmdSpoolDir=/var/lib/slurm/slurmd
SlurmctldPidFile=/run/slurmctld.pid
SlurmdPidFile=/run/slurmd.pid
SlurmctldLogFile=/var/log/slurm/slurmctld.log
SlurmdLogFile=/var/log/slurm/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=none
SwitchType=switch/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/none
ReturnToService=2
# Declare more CPUs than the hardware has, so that srun -n 3 fits on a 2-CPU machine.
SlurmdParameters=config_overrides
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus Sockets=1 CoresPerSocket=$cpus ThreadsPerCore=1 RealMemory=$mem_mb State=UNKNOWN
PartitionName=debug Nodes=$host Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES
EOF
)
  if [[ -e $conf ]]; then
    grep -qxF "$marker" "$conf" ||
      die "$conf exists and was not written by this script: refusing to overwrite it (one-host test setups only)"
    [[ $(<"$conf") == "$new" ]] && return 0
    if pgrep -x slurmctld >/dev/null; then
      say "warning: rewriting $conf while slurmctld runs: restart the daemons (--stop, then rerun)"
    fi
  fi
  need_root "write $conf"
  say "writing $conf"
  install -d -m 0755 /etc/slurm
  printf '%s\n' "$new" >"$conf"
  chmod 0644 "$conf"
}

# start NAME PIDFILE COMMAND...: start a self-daemonizing daemon, record its PID
start() {
  local name=$1 pidfile=$2 pid
  shift 2
  need_root "start $name"
  say "starting $name"
  rm -f "$pidfile"
  "$@" || die "$name failed to start (see its log)"
  wait_for 15 "$name's pid file $pidfile" test -s "$pidfile"
  pid=$(<"$pidfile")
  wait_for 5 "$name (pid $pid) to be running" alive "$pid" "$name"
  mkdir -p "$rundir"
  echo "$pid" >"$rundir/$name.pid"
}

munge_ok() { munge -n 2>/dev/null | unmunge >/dev/null 2>&1; }
ctld_ok() { scontrol ping 2>/dev/null | grep -q 'is UP'; }

start_daemons() {
  if ! munge_ok; then
    if ! pgrep -x munged >/dev/null; then
      need_root "start munged"
      install -d -o munge -g munge -m 0755 /run/munge # tmpfiles.d is systemd's job; do it here
      install -d -o munge -g munge -m 0700 /var/log/munge /var/lib/munge
      # --force: get past a stale socket left by a munged that died
      start munged /run/munge/munged.pid runuser -u munge -- /usr/sbin/munged --force
    fi
    wait_for 15 "munge to work (munge -n | unmunge)" munge_ok
  fi
  if ! pgrep -x slurmctld >/dev/null; then
    need_root "start slurmctld"
    install -d -o slurm -g slurm -m 0755 /var/lib/slurm /var/lib/slurm/slurmctld /var/log/slurm
    start slurmctld /run/slurmctld.pid /usr/sbin/slurmctld
  fi
  wait_for 30 "slurmctld to answer (scontrol ping)" ctld_ok
  if ! pgrep -x slurmd >/dev/null; then
    need_root "start slurmd"
    install -d -m 0755 /var/lib/slurm/slurmd
    start slurmd /run/slurmd.pid /usr/sbin/slurmd
  fi
}

wait_idle() {
  local end=$((SECONDS + wait_s)) state="" resumed=-100
  while :; do
    state=$(sinfo -h -n "$host" -o %T 2>/dev/null | head -n 1)
    case $state in
      idle | mixed) return 0 ;;
      down* | drain* | fail* | *drain)
        if ((SECONDS - resumed >= 5)); then
          say "node $host is $state: resuming it"
          scontrol update nodename="$host" state=resume 2>/dev/null || true
          resumed=$SECONDS
        fi
        ;;
    esac
    ((SECONDS < end)) || die "node $host not idle after $wait_s s (state: ${state:-unknown}); see /var/log/slurm/"
    sleep 0.5
  done
}

case ${1:-} in
  --stop) stop; exit 0 ;;
  -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
  --) shift ;;
esac

install_packages
munge_key
write_conf
start_daemons
wait_idle

if (($# == 0)); then
  set -- sh -c 'echo "task $SLURM_PROCID of $SLURM_NTASKS (local $SLURM_LOCALID, step $SLURM_STEP_ID) on $(hostname -s) in job $SLURM_JOB_ID"'
fi
exec srun -n "$ntasks" --kill-on-bad-exit=1 --immediate="$wait_s" "$@"
