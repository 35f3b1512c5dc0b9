#!/usr/bin/env bash
# afterburner's redis driver against redis-benchmark, side by side on one
# redis-server: the same request (GET of one key), the same 50 clients, the
# same number of requests, in alternating passes. Prints requests/s of each,
# the ratio afterburner / redis-benchmark, and the CPU time (user + sys)
# each client process used, in total and per 1000 requests, and each one's
# peak resident memory. CLIENTS=10000 drives that many connections (the
# server's maxclients raised to match; needs `ulimit -Hn` above it):
# afterburner makes its connections before its clock starts, redis-benchmark
# counts its own connecting in its rate.
# Usage: [AFTERBURNER=BIN] [CLIENTS=N] scripts/bench-redis-driver.sh [REQUESTS] [PASSES]   (default 50 clients, 500000 3)
set -euo pipefail
requests=${1:-500000}
passes=${2:-3}
clients=${CLIENTS:-50}
root=$(cd "$(dirname "$0")/.." && pwd)
for tool in redis-server redis-benchmark redis-cli /usr/bin/time; do
  command -v "$tool" >/dev/null || { echo "$tool is missing: apt-get install redis-server redis-tools time" >&2; exit 1; }
done
# AFTERBURNER=BIN measures that build instead of building this tree.
ab=${AFTERBURNER:-}
if [ -z "$ab" ]; then
  cargo build --release --quiet --manifest-path "$root/Cargo.toml"
  ab="${CARGO_TARGET_DIR:-$root/target}/release/afterburner"
fi
work=$(mktemp -d)
port=$((20000 + RANDOM % 20000))
redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no --dir "$work" \
  --maxclients $((clients + 32)) >"$work/redis.log" 2>&1 &
server=$!
trap 'kill $server 2>/dev/null; wait $server 2>/dev/null; rm -rf "$work"' EXIT
for _ in $(seq 100); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.05; done
redis-cli -p "$port" set key:__rand_int__ value >/dev/null

cpu() { awk '{ printf "%.3f", $1 + $2 }' "$1"; }
rss() { awk '{ print $3 }' "$1"; }
echo "$clients clients, $requests requests a pass"
printf '%-5s %14s %14s %7s %12s %12s %14s %14s %10s %10s\n' pass "afterburner/s" "redis-bench/s" ratio "ab cpu s" "rb cpu s" "ab cpu/1k ms" "rb cpu/1k ms" "ab rss KB" "rb rss KB"
for pass in $(seq "$passes"); do
  /usr/bin/time -f "%U %S %M" -o "$work/ab.time" "$ab" load "redis://127.0.0.1:$port" \
    -r "GET key:__rand_int__" -c "$clients" -n "$requests" --warmup 0s --json "$work/ab.json" >/dev/null
  /usr/bin/time -f "%U %S %M" -o "$work/rb.time" redis-benchmark -p "$port" -t get -c "$clients" -n "$requests" -q --csv >"$work/rb.csv"
  ab_rps=$(grep -o '"achieved_rps": *[0-9.]*' "$work/ab.json" | grep -o '[0-9.]*$')
  rb_rps=$(grep '"GET"' "$work/rb.csv" | cut -d, -f2 | tr -d '"')
  ab_cpu=$(cpu "$work/ab.time"); rb_cpu=$(cpu "$work/rb.time")
  awk -v p="$pass" -v a="$ab_rps" -v b="$rb_rps" -v ac="$ab_cpu" -v bc="$rb_cpu" -v n="$requests" \
    -v am="$(rss "$work/ab.time")" -v bm="$(rss "$work/rb.time")" \
    'BEGIN { printf "%-5s %14.0f %14.0f %7.3f %12.3f %12.3f %14.4f %14.4f %10d %10d\n", p, a, b, a / b, ac, bc, ac * 1e6 / n, bc * 1e6 / n, am, bm }'
done
