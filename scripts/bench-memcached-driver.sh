#!/usr/bin/env bash
# afterburner's memcached driver against libmemcached's memaslap (Debian:
# memcaslap), side by side on one memcached with one worker thread: 100,000
# keys of 64 bytes with values of 32 bytes loaded first, then alternating
# passes of the same length with the same 50 connections (the order of the
# clients rotates from pass to pass). Like for like by default: memaslap
# sends gets only, as the driver does (each reply parsed and checked:
# VALUE ... END, hits and misses counted). Requests are counted by the
# server (cmd_get + cmd_set), its rate over a window of SECONDS in each
# client's steady state: each client runs SECONDS + 3 s, and the window
# opens 2 s after it starts (memaslap first fills its key window with
# 51,200 sets, which its own "Run time" leaves out while its TPS counts
# them: about a second here). CPU per request is each client's whole CPU
# time over every request the server answered it. MIX=9:1 gives both clients memaslap's
# default 9:1 get/set mix instead, like for like: memaslap's cmd proportions
# 0.9 get / 0.1 set, the driver's `-r get… -r set… --mix 9:1` (each request
# draws get or set by weight; the sets write 32-byte values to the same
# 100,000 keys the gets read). Prints requests/s of
# each, the ratio afterburner / memaslap, the CPU time (user + sys) of each
# client process per 1000 requests and the ratio of the two, how busy
# memcached's process was under each client (% of a core), the 1-minute
# load average after the pass, and the medians over all passes.
# With BASELINE=/path/to/another/afterburner, that build runs in every pass
# too (columns base/s, base ratio, base cpu/1k): before and after a change,
# measured side by side (with MIX=9:1 that build must know --mix).
# Usage: [AFTERBURNER=BIN] [BASELINE=BIN] [MIX=get|9:1] scripts/bench-memcached-driver.sh [SECONDS] [PASSES]   (default get, 5 6)
set -euo pipefail
seconds=${1:-5}
passes=${2:-6}
root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=scripts/bench-common.sh
. "$root/scripts/bench-common.sh"
for tool in memcached memcaslap /usr/bin/time; do
  command -v "$tool" >/dev/null || { echo "$tool is missing: apt-get install memcached libmemcached-tools time" >&2; exit 1; }
done
# AFTERBURNER=BIN measures that build instead of building this tree.
ab=${AFTERBURNER:-}
if [ -z "$ab" ]; then
  cargo build --release --quiet --manifest-path "$root/Cargo.toml"
  ab="${CARGO_TARGET_DIR:-$root/target}/release/afterburner"
fi
mix=${MIX:-get}
# 64-byte keys: a 57-character prefix and a 7-digit number.
prefix=$(printf 'k%.0s' $(seq 57))
# The driver's requests: gets of the loaded keys, and for the mix sets of
# the same keys with 32-byte values (25 v's and the 7-digit key number).
case $mix in
  get) sets=0.0 gets=1.0 requests=(-r "get $prefix{k}") ;;
  9:1) sets=0.1 gets=0.9 requests=(-r "get $prefix{k}" -r "set $prefix{k} vvvvvvvvvvvvvvvvvvvvvvvvv{k}" --mix 9:1) ;;
  *) echo "MIX must be get or 9:1, not $mix" >&2; exit 1 ;;
esac
base=${BASELINE:-}
work=$(mktemp -d)
port=$((20000 + RANDOM % 20000))
user=()
[ "$(id -u)" -eq 0 ] && user=(-u root)
"${on_server_core[@]}" memcached -p "$port" -U 0 -l 127.0.0.1 -t 1 -m 1024 "${user[@]}" >"$work/memcached.log" 2>&1 &
server=$!
trap 'kill $server 2>/dev/null; wait $server 2>/dev/null; rm -rf "$work"' EXIT
sleep 0.5
"$ab" load "memcached://127.0.0.1:$port" -r "set $prefix{k} vvvvvvvvvvvvvvvvvvvvvvvvv{k}" \
  --var k=seq:1000000:1099999 -c 10 -n 100000 --warmup 0s >/dev/null
cat >"$work/memaslap.cnf" <<EOF
key
64 64 1
value
32 32 1
cmd
0 $sets
1 $gets
EOF

# cmd_get + cmd_set of the server so far: every request it answered,
# counted the same way for every client. memaslap's count so holds the
# sets with which it first fills its key window (-w: 1k keys a connection
# here, 51,200 sets) besides its gets, as its own TPS does: it spends the
# start of its run on them.
served() {
  local line total=0
  exec 3<>"/dev/tcp/127.0.0.1/$port"
  printf 'stats\r\nquit\r\n' >&3
  while read -r line <&3; do
    case $line in
      "STAT cmd_get "* | "STAT cmd_set "*) line=${line%$'\r'}; total=$((total + ${line##* })) ;;
    esac
  done
  exec 3<&-
  echo "$total"
}
# How long after a client starts its measured window opens.
lead=2
# One pass of client NAME (ab, base or ms); leaves "requests/s requests
# cpu-seconds server-busy%" in $work/NAME.res: the rate the server counted
# over the steady window, the requests it answered over the whole run, and
# how busy memcached's process was over the window.
client() {
  local before after pid t0 t1 w0 w1 busy0 busy1 run=$((seconds + lead + 1))
  before=$(served)
  if [ "$1" = ms ]; then
    /usr/bin/time -f "%U %S" -o "$work/ms.time" "${on_client_core[@]}" memcaslap -s "127.0.0.1:$port" -T 1 -c 50 -w 1k \
      -t "${run}s" -F "$work/memaslap.cnf" >"$work/ms.out" 2>&1 &
  else
    bin=$ab
    [ "$1" = base ] && bin=$base
    /usr/bin/time -f "%U %S" -o "$work/$1.time" "${on_client_core[@]}" "$bin" load "memcached://127.0.0.1:$port" \
      "${requests[@]}" --var k=uniform:1000000:1099999 -c 50 -d "${run}s" --warmup 0s \
      --json "$work/$1.json" >/dev/null &
  fi
  pid=$!
  sleep "$lead"
  t0=$(date +%s.%N) w0=$(served) busy0=$(proc_cpu "$server")
  sleep "$seconds"
  t1=$(date +%s.%N) w1=$(served) busy1=$(proc_cpu "$server")
  wait "$pid" || { echo "client $1 failed" >&2; cat "$work/ms.out" >&2 2>/dev/null; exit 1; }
  after=$(served)
  awk -v w=$((w1 - w0)) -v n=$((after - before)) -v t0="$t0" -v t1="$t1" -v c="$(cpu "$work/$1.time")" -v b0="$busy0" -v b1="$busy1" \
    'BEGIN { t = t1 - t0; printf "%.1f %d %s %.0f\n", w / t, n, c, (b1 - b0) * 100 / t }' >"$work/$1.res"
}

clients=(ab ms)
header=$(printf '%-5s %14s %14s %7s %14s %14s %9s %6s %6s' pass "afterburner/s" "memaslap/s" ratio "ab cpu/1k ms" "ms cpu/1k ms" "cpu ratio" "mc ab%" "mc ms%")
formats="%-5s %14.0f %14.0f %7.3f %14.4f %14.4f %9.3f %6.0f %6.0f"
if [ -n "$base" ]; then
  clients+=(base)
  header+=$(printf ' %10s %10s %14s' "base/s" "base ratio" "base cpu/1k ms")
  formats+=" %10.0f %10.3f %14.4f"
fi
echo "the mix: $mix (memaslap: sets $sets, gets $gets; the driver: ${requests[*]})"
printf '%s %6s\n' "$header" load
for pass in $(seq "$passes"); do
  k=$(((pass - 1) % ${#clients[@]}))
  for c in "${clients[@]:$k}" "${clients[@]:0:$k}"; do client "$c"; done
  read -r ab_rps ab_n ab_cpu ab_busy <"$work/ab.res"
  read -r ms_rps ms_n ms_cpu ms_busy <"$work/ms.res"
  line=$(awk -v p="$pass" -v a="$ab_rps" -v b="$ms_rps" -v ac="$ab_cpu" -v bc="$ms_cpu" -v an="$ab_n" -v bn="$ms_n" \
    -v ab="$ab_busy" -v mb="$ms_busy" \
    'BEGIN { x = ac * 1e6 / an; y = bc * 1e6 / bn; printf "%-5s %14.0f %14.0f %7.3f %14.4f %14.4f %9.3f %6.0f %6.0f", p, a, b, a / b, x, y, x / y, ab, mb }')
  if [ -n "$base" ]; then
    read -r b_rps b_n b_cpu _ <"$work/base.res"
    line+=$(awk -v a="$b_rps" -v b="$ms_rps" -v c="$b_cpu" -v n="$b_n" \
      'BEGIN { printf " %10.0f %10.3f %14.4f", a, a / b, c * 1e6 / n }')
  fi
  printf '%s %6s\n' "$line" "$(cut -d' ' -f1 /proc/loadavg)" | tee -a "$work/rows"
done
medians "$work/rows" "$formats"
