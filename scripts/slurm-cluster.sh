#!/usr/bin/env bash
# A Slurm cluster of N nodes on this one machine, for afterburner's tests and
# for trying the Slurm engine, from Debian's munge, slurmctld and slurmd:
#
#   scripts/slurm-cluster.sh start DIR [--nodes N]  # prints `export SLURM_CONF=DIR/slurm.conf`
#   scripts/slurm-cluster.sh stop DIR               # tears down what start made
#   scripts/slurm-cluster.sh kill-node DIR NODE     # a node lost: every process on it killed
#
# Each node (node1 … nodeN, default 1) is a slurmd in a network namespace of
# its own with its own host name (a UTS namespace) and address: 198.18.X.(10+k)
# on a veth pair to a bridge that holds 198.18.X.1, the controller's address
# (198.18.0.0/15 is the range set aside for benchmark networks; X is the first
# /24 no other cluster of this script uses). A node has no default route and
# no route out: it reaches the other nodes and the controller only, and has a
# loopback of its own. slurmctld and a munged of the cluster's own (its key,
# socket, pid, log and seed files in DIR/munge) run in this namespace; the
# nodes share the machine's file system, so DIR and any work directory are
# seen by every node (`shared = true` in an experiment's [cluster]).
#
# Everything start makes is written to DIR/made (one line each, as it is made)
# and stop undoes those lines in reverse: daemons by their pid files,
# processes left in a node's namespace by `ip netns pids`, namespaces and
# links by the names recorded. A failed start stops what it had made. Needs
# root. Every wait has a deadline.
set -euo pipefail

usage() {
  echo "usage: $0 start DIR [--nodes N] | stop DIR | kill-node DIR NODE" >&2
  exit 2
}
[ $# -ge 2 ] || usage
action=$1
dir=$(realpath -m "$2")
shift 2
made=$dir/made

# Record one thing made (before anything that may fail can leave it behind).
record() { echo "$*" >>"$made"; }

# Stop the daemons whose pid files are given, all at once (each takes a
# second or more to shut down): TERM, then KILL after 5 s; wait until gone.
stop_pid_files() {
  local file pids=() pid _
  for file in "$@"; do
    [ -f "$file" ] && pids+=("$(cat "$file")")
  done
  [ ${#pids[@]} -gt 0 ] || return 0
  kill "${pids[@]}" 2>/dev/null || true
  for _ in $(seq 50); do
    any_alive "${pids[@]}" || break
    sleep 0.1
  done
  kill -9 "${pids[@]}" 2>/dev/null || true
  for _ in $(seq 50); do
    any_alive "${pids[@]}" || break
    sleep 0.1
  done
  rm -f "$@"
}

any_alive() {
  local pid
  for pid in "$@"; do kill -0 "$pid" 2>/dev/null && return 0; done
  return 1
}

# SIGKILL every process in network namespace `ns` (its own, all started
# there by this script's slurmd) until none is left, up to 10 s.
kill_namespace() {
  local ns=$1 pids
  for _ in $(seq 100); do
    pids=$(ip netns pids "$ns" 2>/dev/null || true)
    [ -n "$pids" ] || return 0
    # shellcheck disable=SC2086 # one pid a word
    kill -9 $pids 2>/dev/null || true
    sleep 0.1
  done
  echo "$0: processes still in namespace $ns after 10 s: $pids" >&2
}

stop() {
  [ -f "$made" ] || return 0
  local kind name slurm munge
  # Slurm's daemons first, together; then what is left on each node, the
  # namespaces and links (newest first); munged last, which they use.
  mapfile -t slurm < <(awk '$1 == "pidfile" && !/munged\.pid$/ { sub(/^pidfile /, ""); print }' "$made")
  mapfile -t munge < <(awk '$1 == "pidfile" && /munged\.pid$/ { sub(/^pidfile /, ""); print }' "$made")
  stop_pid_files "${slurm[@]}"
  tac "$made" | while read -r kind name; do
    case $kind in
      netns)
        kill_namespace "$name"
        ip netns del "$name" 2>/dev/null || true
        ;;
      link) ip link del "$name" 2>/dev/null || true ;;
    esac
  done
  stop_pid_files "${munge[@]}"
  rm -f "$made"
}

# Lose node `name`: its slurmd by its pid, then everything else on it (the
# job's slurmstepd and processes), as if the machine had died.
kill_node() {
  local node=$1 ns
  ns=$(awk -v n="$node" '$1 == "node" && $2 == n { print $3 }' "$made" 2>/dev/null)
  [ -n "$ns" ] || { echo "$0: $dir has no node $node (see $made)" >&2; exit 1; }
  stop_pid_files "$dir/slurmd-$node.pid"
  kill_namespace "$ns"
}

# A /24 of 198.18.0.0/15 that no other cluster uses: claimed by creating its
# bridge, which fails when another start made it first.
claim_subnet() {
  local x net addrs
  addrs=$(ip -4 -o addr show)
  for x in $(seq 0 511); do
    net="198.$((18 + x / 256)).$((x % 256))"
    case $addrs in *" $net."*) continue ;; esac
    if ip link add "ab${x}br" type bridge 2>/dev/null; then
      record link "ab${x}br"
      echo "$x $net"
      return 0
    fi
  done
  echo "$0: no free /24 in 198.18.0.0/15 for the cluster's network" >&2
  return 1
}

start_munge() {
  local m=$dir/munge
  mkdir -p "$m"
  chmod 700 "$m"
  [ -s "$m/munge.key" ] || dd if=/dev/urandom of="$m/munge.key" bs=1 count=1024 status=none
  chmod 400 "$m/munge.key"
  # --force: DIR need not be open to all (munged wants every directory above
  # its socket searchable by everyone); only root uses this socket.
  record pidfile "$m/munged.pid"
  munged --force --socket="$m/munge.socket" --key-file="$m/munge.key" \
    --pid-file="$m/munged.pid" --log-file="$m/munged.log" --seed-file="$m/munged.seed"
  for _ in $(seq 50); do
    munge -n --socket="$m/munge.socket" >/dev/null 2>&1 && return 0
    sleep 0.1
  done
  echo "$0: munged did not answer within 5 s; its log:" >&2
  tail -n 20 "$m/munged.log" >&2 || true
  return 1
}

# Node k: namespace, veth pair to the bridge, address, loopback.
make_node() {
  local k=$1 x=$2 net=$3
  local ns=ab$x-node$k host=ab${x}n$k
  ip netns add "$ns"
  record netns "$ns"
  record node "node$k" "$ns"
  # The host end goes with the namespace's end when the namespace is deleted.
  ip link add "$host" type veth peer name "${host}p"
  record link "$host"
  ip link set "${host}p" netns "$ns"
  ip -n "$ns" link set "${host}p" name eth0
  ip -n "$ns" addr add "$net.$((10 + k))/24" dev eth0
  ip -n "$ns" link set eth0 up
  ip -n "$ns" link set lo up
  ip link set "$host" master "ab${x}br"
  ip link set "$host" up
}

write_conf() {
  local net=$1 nodes=$2 ctld_port=$3 host cpus mem k
  host=$(hostname -s)
  cpus=$(nproc)
  mem=$(awk '/MemTotal/ { print int($2 / 1024 * 0.9) }' /proc/meminfo)
  cat >"$dir/slurm.conf" <<EOF
# Generated by afterburner's scripts/slurm-cluster.sh: a test cluster of
# $nodes node(s) on one machine, each in a network namespace of its own.
ClusterName=afterburner-test
SlurmctldHost=$host($net.1)
SlurmctldPort=$ctld_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$dir/munge/munge.socket
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool/%n
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd-%n.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd-%n.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
MpiDefault=none
ReturnToService=2
MinJobAge=3600
SlurmctldTimeout=30
# A node that stops answering is DOWN after this many seconds (its jobs
# NODE_FAIL): short, so a test that loses a node does not wait long.
SlurmdTimeout=10
EOF
  for k in $(seq "$nodes"); do
    echo "NodeName=node$k NodeHostname=node$k NodeAddr=$net.$((10 + k)) Port=6818 CPUs=$cpus RealMemory=$mem State=UNKNOWN" >>"$dir/slurm.conf"
  done
  echo "PartitionName=test Nodes=ALL Default=YES MaxTime=INFINITE State=UP" >>"$dir/slurm.conf"
}

wait_idle() {
  local nodes=$1 idle
  for _ in $(seq 150); do
    idle=$(sinfo -h -N -o '%N %T' 2>/dev/null | awk '$2 == "idle"' | wc -l)
    [ "$idle" -eq "$nodes" ] && return 0
    sleep 0.2
  done
  echo "$0: $idle of $nodes node(s) idle after 30 s; sinfo says:" >&2
  sinfo -N >&2 || true
  return 1
}

# The EXIT trap of start: a start that fails stops what it made.
failed_start() {
  [ "$1" -eq 0 ] && return 0
  echo "$0: start failed; stopping what it made" >&2
  stop
}

start() {
  local nodes=1
  while [ $# -gt 0 ]; do
    case $1 in
      --nodes) [ $# -ge 2 ] || usage; nodes=$2; shift 2 ;;
      *) usage ;;
    esac
  done
  [[ $nodes =~ ^[1-9][0-9]?$ ]] || { echo "$0: --nodes wants 1 to 99, not $nodes" >&2; exit 2; }
  [ "$(id -u)" -eq 0 ] || { echo "$0: the test cluster needs root (network namespaces; slurmd runs jobs as their user)" >&2; exit 1; }
  for tool in munge munged slurmctld slurmd sbatch sinfo ip nsenter unshare; do
    command -v "$tool" >/dev/null || { echo "$0: $tool not found: apt-get install munge slurmctld slurmd slurm-client iproute2 util-linux" >&2; exit 1; }
  done
  case $dir in *[[:space:]]*) echo "$0: slurm.conf cannot name paths with spaces: choose a DIR without, not $dir" >&2; exit 2 ;; esac
  [ ! -s "$made" ] || { echo "$0: $dir holds a cluster already ($made): stop it first" >&2; exit 1; }
  mkdir -p "$dir/state"
  : >"$made"
  trap 'failed_start $?' EXIT
  start_munge
  local claim x net k
  claim=$(claim_subnet)
  read -r x net <<<"$claim"
  ip addr add "$net.1/24" dev "ab${x}br"
  ip link set "ab${x}br" up
  for k in $(seq "$nodes"); do make_node "$k" "$x" "$net"; done
  # A free port for the controller here: another cluster keeps its own.
  # (Each slurmd has its namespace's ports to itself.)
  local ctld_port
  ctld_port=$(python3 -c 'import socket
s = socket.socket(); s.bind(("", 0)); print(s.getsockname()[1])')
  write_conf "$net" "$nodes" "$ctld_port"
  export SLURM_CONF=$dir/slurm.conf
  record pidfile "$dir/slurmctld.pid"
  if ! slurmctld -f "$SLURM_CONF"; then
    echo "$0: slurmctld did not start; its log:" >&2
    tail -n 20 "$dir/slurmctld.log" >&2 || true
    exit 1
  fi
  for k in $(seq "$nodes"); do
    mkdir -p "$dir/spool/node$k"
    record pidfile "$dir/slurmd-node$k.pid"
    # nsenter, not `ip netns exec`, which remounts /sys for the namespace
    # and so hides /sys/fs/cgroup from slurmd.
    # shellcheck disable=SC2016 # the inner shell expands its own arguments
    if ! nsenter --net="/run/netns/ab$x-node$k" unshare --uts sh -c \
      'hostname "$1" && exec slurmd -f "$2" -N "$1"' sh "node$k" "$SLURM_CONF"; then
      echo "$0: slurmd of node$k did not start; its log:" >&2
      tail -n 20 "$dir/slurmd-node$k.log" >&2 || true
      exit 1
    fi
  done
  if ! wait_idle "$nodes"; then
    tail -n 20 "$dir/slurmctld.log" "$dir"/slurmd-node*.log >&2 || true
    exit 1
  fi
  echo "export SLURM_CONF=$SLURM_CONF"
}

case $action in
  start) start "$@" ;;
  stop) [ $# -eq 0 ] || usage; stop ;;
  kill-node) [ $# -eq 1 ] || usage; kill_node "$1" ;;
  *) usage ;;
esac
