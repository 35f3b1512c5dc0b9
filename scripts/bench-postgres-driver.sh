#!/usr/bin/env bash
# afterburner's postgres driver against pgbench's built-in select-only
# script (`pgbench -S -M prepared`), side by side on one PostgreSQL server
# started here (initdb into a temp dir, a private port on loopback, fsync
# off): pgbench_accounts of SCALE × 100,000 rows from `pgbench -i`, the
# same statement (`SELECT abalance FROM pgbench_accounts WHERE aid = $1`,
# prepared once a client, aids drawn uniformly), the same CLIENTS clients
# over TCP (pgbench with as many threads), passes of the same length,
# alternating (the order rotates from pass to pass). Prints queries/s of
# each, the ratio afterburner / pgbench, each client process's CPU time
# (user + sys) per 1000 queries and the ratio of the two, the 1-minute
# load average after the pass, and the medians over all passes.
# With BASELINE=/path/to/another/afterburner, that build runs in every
# pass too.
# Usage: [AFTERBURNER=BIN] [BASELINE=BIN] [CLIENTS=N] [SCALE=N] scripts/bench-postgres-driver.sh [SECONDS] [PASSES]   (default 8 clients, scale 1, 10 4)
set -euo pipefail
seconds=${1:-10}
passes=${2:-4}
clients=${CLIENTS:-8}
scale=${SCALE:-1}
root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=scripts/bench-common.sh
. "$root/scripts/bench-common.sh"
bin=$(printf '%s\n' /usr/lib/postgresql/*/bin | sort -V | tail -1)
for tool in "$bin/initdb" "$bin/postgres" "$bin/psql" "$bin/pgbench" /usr/bin/time; do
  [ -x "$tool" ] || { echo "$tool is missing: apt-get install postgresql postgresql-contrib time" >&2; exit 1; }
done
# AFTERBURNER=BIN measures that build instead of building this tree.
ab=${AFTERBURNER:-}
if [ -z "$ab" ]; then
  cargo build --release --quiet --manifest-path "$root/Cargo.toml"
  ab="${CARGO_TARGET_DIR:-$root/target}/release/afterburner"
fi
base=${BASELINE:-}
work=$(mktemp -d)
port=$((20000 + RANDOM % 20000))
data="$work/data"
mkdir "$data"
# As root, PostgreSQL runs as its own user (it refuses root).
as_pg=()
if [ "$(id -u)" -eq 0 ]; then
  chmod 755 "$work"
  chown postgres:postgres "$data"
  as_pg=(setpriv --reuid=postgres --regid=postgres --init-groups --)
fi
"${as_pg[@]}" "$bin/initdb" -A trust -U postgres -D "$data" >"$work/initdb.log" 2>&1 ||
  { cat "$work/initdb.log" >&2; exit 1; }
"${as_pg[@]}" "$bin/postgres" -D "$data" -p "$port" -k "$data" -c listen_addresses=127.0.0.1 \
  -c fsync=off -c max_connections=$((clients * 2 + 32)) >"$work/postgres.log" 2>&1 &
server=$!
trap 'kill $server 2>/dev/null; wait $server 2>/dev/null; rm -rf "$work"' EXIT
for _ in $(seq 200); do
  "$bin/psql" -h 127.0.0.1 -p "$port" -U postgres -tAc 'SELECT 1' >/dev/null 2>&1 && break
  sleep 0.1
done
"$bin/pgbench" -h 127.0.0.1 -p "$port" -U postgres -i -s "$scale" postgres >"$work/init.log" 2>&1 ||
  { cat "$work/init.log" >&2; exit 1; }
url="postgres://postgres@127.0.0.1:$port/postgres"

# One pass of client NAME (ab, base or pg); leaves "queries/s queries
# cpu-seconds" in $work/NAME.res.
client() {
  if [ "$1" = pg ]; then
    /usr/bin/time -f "%U %S" -o "$work/pg.time" "$bin/pgbench" -h 127.0.0.1 -p "$port" -U postgres \
      -S -M prepared -c "$clients" -j "$clients" -T "$seconds" postgres >"$work/pg.out" 2>&1
    n=$(awk -F': ' '/^number of transactions actually processed/ { split($2, a, "/"); print a[1] }' "$work/pg.out")
    rps=$(awk '/^tps = / { print $3; exit }' "$work/pg.out")
    [ -n "$rps" ] || { echo "pgbench printed no tps:" >&2; cat "$work/pg.out" >&2; exit 1; }
  else
    b=$ab
    [ "$1" = base ] && b=$base
    /usr/bin/time -f "%U %S" -o "$work/$1.time" "$b" load "$url" \
      -r "SELECT abalance FROM pgbench_accounts WHERE aid = {k}" --var "k=uniform:1:$((scale * 100000))" \
      -c "$clients" -d "${seconds}s" --warmup 0s --json "$work/$1.json" >/dev/null
    # The summary's fields come first; the time series repeats the names.
    rps=$(grep -o '"achieved_rps": *[0-9.]*' "$work/$1.json" | head -1 | grep -o '[0-9.]*$')
    n=$(grep -o '"requests": *[0-9]*' "$work/$1.json" | head -1 | grep -o '[0-9]*$')
  fi
  echo "$rps $n $(cpu "$work/$1.time")" >"$work/$1.res"
}

names=(ab pg)
header=$(printf '%-5s %14s %11s %7s %13s %13s %9s' pass "afterburner/s" "pgbench/s" ratio "ab cpu/1k ms" "pg cpu/1k ms" "cpu ratio")
formats="%-5s %14.0f %11.0f %7.3f %13.4f %13.4f %9.3f"
if [ -n "$base" ]; then
  names+=(base)
  header+=$(printf ' %10s %10s %14s' "base/s" "base ratio" "base cpu/1k ms")
  formats+=" %10.0f %10.3f %14.4f"
fi
echo "$clients clients, ${seconds} s a pass, scale $scale, $("$bin/postgres" --version)"
printf '%s %6s\n' "$header" load
for pass in $(seq "$passes"); do
  k=$(((pass - 1) % ${#names[@]}))
  for c in "${names[@]:$k}" "${names[@]:0:$k}"; do client "$c"; done
  read -r ab_rps ab_n ab_cpu <"$work/ab.res"
  read -r p_rps p_n p_cpu <"$work/pg.res"
  line=$(awk -v p="$pass" -v a="$ab_rps" -v b="$p_rps" -v ac="$ab_cpu" -v bc="$p_cpu" -v an="$ab_n" -v bn="$p_n" \
    'BEGIN { x = ac * 1e6 / an; y = bc * 1e6 / bn; printf "%-5s %14.0f %11.0f %7.3f %13.4f %13.4f %9.3f", p, a, b, a / b, x, y, x / y }')
  if [ -n "$base" ]; then
    read -r b_rps b_n b_cpu <"$work/base.res"
    line+=$(awk -v a="$b_rps" -v b="$p_rps" -v c="$b_cpu" -v n="$b_n" \
      'BEGIN { printf " %10.0f %10.3f %14.4f", a, a / b, c * 1e6 / n }')
  fi
  printf '%s %6s\n' "$line" "$(cut -d' ' -f1 /proc/loadavg)" | tee -a "$work/rows"
done
medians "$work/rows" "$formats"
