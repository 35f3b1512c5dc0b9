#!/usr/bin/env bash
# afterburner's memcached driver against libmemcached's memaslap (Debian:
# memcaslap), side by side on one memcached with one worker thread: 100,000
# keys of 64 bytes with values of 32 bytes loaded first, then alternating
# passes of the same length with the same 50 connections. memaslap sends its
# default 9:1 get/set mix over those keys; the driver sends gets only, each
# reply parsed and checked (VALUE ... END). Prints requests/s of each, the
# ratio afterburner / memaslap, and the CPU time (user + sys) of each client
# process, per 1000 requests.
# Usage: scripts/bench-memcached-driver.sh [SECONDS] [PASSES]   (default 5 6)
set -euo pipefail
seconds=${1:-5}
passes=${2:-6}
root=$(cd "$(dirname "$0")/.." && pwd)
for tool in memcached memcaslap /usr/bin/time; do
  command -v "$tool" >/dev/null || { echo "$tool is missing: apt-get install memcached libmemcached-tools time" >&2; exit 1; }
done
cargo build --release --quiet --manifest-path "$root/Cargo.toml"
ab="$root/target/release/afterburner"
work=$(mktemp -d)
port=$((20000 + RANDOM % 20000))
user=()
[ "$(id -u)" -eq 0 ] && user=(-u root)
memcached -p "$port" -U 0 -l 127.0.0.1 -t 1 -m 1024 "${user[@]}" >"$work/memcached.log" 2>&1 &
server=$!
trap 'kill $server 2>/dev/null; wait $server 2>/dev/null; rm -rf "$work"' EXIT
sleep 0.5
# 64-byte keys: a 57-character prefix and a 7-digit number.
prefix=$(printf 'k%.0s' $(seq 57))
"$ab" load "memcached://127.0.0.1:$port" -r "set $prefix{k} vvvvvvvvvvvvvvvvvvvvvvvvv{k}" \
  --var k=seq:1000000:1099999 -c 10 -n 100000 --warmup 0s >/dev/null
cat >"$work/memaslap.cnf" <<'EOF'
key
64 64 1
value
32 32 1
cmd
0 0.1
1 0.9
EOF

cpu() { awk '{ printf "%.3f", $1 + $2 }' "$1"; }
printf '%-5s %14s %14s %7s %14s %14s\n' pass "afterburner/s" "memaslap/s" ratio "ab cpu/1k ms" "ms cpu/1k ms"
for pass in $(seq "$passes"); do
  /usr/bin/time -f "%U %S" -o "$work/ab.time" "$ab" load "memcached://127.0.0.1:$port" \
    -r "get $prefix{k}" --var k=uniform:1000000:1099999 -c 50 -d "${seconds}s" --warmup 0s \
    --json "$work/ab.json" >/dev/null
  /usr/bin/time -f "%U %S" -o "$work/ms.time" memcaslap -s "127.0.0.1:$port" -T 1 -c 50 \
    -t "${seconds}s" -F "$work/memaslap.cnf" >"$work/ms.out" 2>&1
  ab_rps=$(grep -o '"achieved_rps": *[0-9.]*' "$work/ab.json" | grep -o '[0-9.]*$')
  ab_n=$(grep -o '"requests": *[0-9]*' "$work/ab.json" | head -1 | grep -o '[0-9]*$')
  ms_rps=$(awk '/^Run time/ { for (i = 1; i <= NF; i++) if ($i == "TPS:") print $(i + 1) }' "$work/ms.out" | tail -1)
  ms_n=$(awk '/^Run time/ { for (i = 1; i <= NF; i++) if ($i == "Ops:") print $(i + 1) }' "$work/ms.out" | tail -1)
  [ -n "$ms_rps" ] || { echo "memaslap printed no TPS:" >&2; cat "$work/ms.out" >&2; exit 1; }
  awk -v p="$pass" -v a="$ab_rps" -v b="$ms_rps" -v ac="$(cpu "$work/ab.time")" -v bc="$(cpu "$work/ms.time")" \
    -v an="$ab_n" -v bn="$ms_n" \
    'BEGIN { printf "%-5s %14.0f %14.0f %7.3f %14.4f %14.4f\n", p, a, b, a / b, ac * 1e6 / an, bc * 1e6 / bn }'
done
