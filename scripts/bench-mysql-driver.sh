#!/usr/bin/env bash
# afterburner's mysql driver against sysbench's oltp_point_select
# (--db-driver=mysql, libmariadb), side by side on one MariaDB server
# started here (Debian's mariadbd: a data directory from
# mariadb-install-db in a temp dir, a private port on loopback): the
# sbtest1 table of TABLE_SIZE rows that `sysbench oltp_point_select
# prepare` makes, the same statement (`SELECT c FROM sbtest1 WHERE id=?`,
# prepared once a client, ids drawn uniformly), the same CLIENTS clients
# over TCP, passes of the same length, alternating (the order rotates from
# pass to pass). Prints queries/s of each, the ratio afterburner /
# sysbench, each client process's CPU time (user + sys) per 1000 queries
# and the ratio of the two, the 1-minute load average after the pass, and
# the medians over all passes.
# With BASELINE=/path/to/another/afterburner, that build runs in every
# pass too.
# Usage: [AFTERBURNER=BIN] [BASELINE=BIN] [CLIENTS=N] [TABLE_SIZE=N] scripts/bench-mysql-driver.sh [SECONDS] [PASSES]   (default 8 clients, 10000 rows, 10 4)
set -euo pipefail
seconds=${1:-10}
passes=${2:-4}
clients=${CLIENTS:-8}
rows=${TABLE_SIZE:-10000}
root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=scripts/bench-common.sh
. "$root/scripts/bench-common.sh"
for tool in /usr/sbin/mariadbd mariadb-install-db mariadb sysbench /usr/bin/time; do
  command -v "$tool" >/dev/null || { echo "$tool is missing: apt-get install mariadb-server mariadb-client sysbench time" >&2; exit 1; }
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
# As root, MariaDB runs as its own user (it refuses root without --user).
as_mysql=()
if [ "$(id -u)" -eq 0 ]; then
  chmod 755 "$work"
  chown mysql:mysql "$data"
  as_mysql=(setpriv --reuid=mysql --regid=mysql --init-groups --)
fi
"${as_mysql[@]}" mariadb-install-db --no-defaults --auth-root-authentication-method=normal \
  --skip-test-db --datadir="$data" >"$work/install.log" 2>&1 ||
  { cat "$work/install.log" >&2; exit 1; }
"${as_mysql[@]}" /usr/sbin/mariadbd --no-defaults --datadir="$data" --socket="$data/mysqld.sock" \
  --pid-file="$data/mysqld.pid" --port="$port" --bind-address=127.0.0.1 --skip-name-resolve \
  --max-connections=$((clients * 2 + 32)) --innodb-buffer-pool-size=128M >"$work/mariadb.log" 2>&1 &
server=$!
trap 'kill $server 2>/dev/null; wait $server 2>/dev/null; rm -rf "$work"' EXIT
sql() { mariadb --no-defaults --socket="$data/mysqld.sock" -uroot -N -B -e "$1"; }
for _ in $(seq 300); do sql 'SELECT 1' >/dev/null 2>&1 && break; sleep 0.2; done
sql "CREATE DATABASE sbtest; CREATE USER sb@'127.0.0.1' IDENTIFIED BY 'pw'; GRANT ALL ON sbtest.* TO sb@'127.0.0.1'"
conn=(--db-driver=mysql --mysql-host=127.0.0.1 --mysql-port="$port" --mysql-user=sb --mysql-password=pw --mysql-db=sbtest
  --tables=1 --table-size="$rows")
sysbench oltp_point_select "${conn[@]}" prepare >"$work/prepare.log" 2>&1 || { cat "$work/prepare.log" >&2; exit 1; }
url="mysql://sb:pw@127.0.0.1:$port/sbtest"

# One pass of client NAME (ab, base or sb); leaves "queries/s queries
# cpu-seconds" in $work/NAME.res.
client() {
  if [ "$1" = sb ]; then
    /usr/bin/time -f "%U %S" -o "$work/sb.time" sysbench oltp_point_select "${conn[@]}" \
      --threads="$clients" --time="$seconds" --report-interval=0 run >"$work/sb.out" 2>&1
    n=$(awk '/^ +queries:/ { print $2 }' "$work/sb.out")
    rps=$(awk '/^ +queries:/ { gsub(/[(]/, "", $3); print $3 }' "$work/sb.out")
    [ -n "$rps" ] || { echo "sysbench printed no queries:" >&2; cat "$work/sb.out" >&2; exit 1; }
  else
    bin=$ab
    [ "$1" = base ] && bin=$base
    /usr/bin/time -f "%U %S" -o "$work/$1.time" "$bin" load "$url" \
      -r "SELECT c FROM sbtest1 WHERE id={k}" --var "k=uniform:1:$rows" -c "$clients" -d "${seconds}s" \
      --warmup 0s --json "$work/$1.json" >/dev/null
    # The summary's fields come first; the time series repeats the names.
    rps=$(grep -o '"achieved_rps": *[0-9.]*' "$work/$1.json" | head -1 | grep -o '[0-9.]*$')
    n=$(grep -o '"requests": *[0-9]*' "$work/$1.json" | head -1 | grep -o '[0-9]*$')
  fi
  echo "$rps $n $(cpu "$work/$1.time")" >"$work/$1.res"
}

names=(ab sb)
header=$(printf '%-5s %14s %11s %7s %13s %13s %9s' pass "afterburner/s" "sysbench/s" ratio "ab cpu/1k ms" "sb cpu/1k ms" "cpu ratio")
formats="%-5s %14.0f %11.0f %7.3f %13.4f %13.4f %9.3f"
if [ -n "$base" ]; then
  names+=(base)
  header+=$(printf ' %10s %10s %14s' "base/s" "base ratio" "base cpu/1k ms")
  formats+=" %10.0f %10.3f %14.4f"
fi
echo "$clients clients, ${seconds} s a pass, $rows rows, MariaDB $(sql 'SELECT VERSION()')"
printf '%s %6s\n' "$header" load
for pass in $(seq "$passes"); do
  k=$(((pass - 1) % ${#names[@]}))
  for c in "${names[@]:$k}" "${names[@]:0:$k}"; do client "$c"; done
  read -r ab_rps ab_n ab_cpu <"$work/ab.res"
  read -r s_rps s_n s_cpu <"$work/sb.res"
  line=$(awk -v p="$pass" -v a="$ab_rps" -v b="$s_rps" -v ac="$ab_cpu" -v bc="$s_cpu" -v an="$ab_n" -v bn="$s_n" \
    'BEGIN { x = ac * 1e6 / an; y = bc * 1e6 / bn; printf "%-5s %14.0f %11.0f %7.3f %13.4f %13.4f %9.3f", p, a, b, a / b, x, y, x / y }')
  if [ -n "$base" ]; then
    read -r b_rps b_n b_cpu <"$work/base.res"
    line+=$(awk -v a="$b_rps" -v b="$s_rps" -v c="$b_cpu" -v n="$b_n" \
      'BEGIN { printf " %10.0f %10.3f %14.4f", a, a / b, c * 1e6 / n }')
  fi
  printf '%s %6s\n' "$line" "$(cut -d' ' -f1 /proc/loadavg)" | tee -a "$work/rows"
done
medians "$work/rows" "$formats"
