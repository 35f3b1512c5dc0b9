#!/usr/bin/env bash
# afterburner's http driver against wrk (one thread), side by side on one
# nginx worker (`worker_processes 1`, started here on loopback with its own
# config in a temp dir) serving a static file of 100 bytes: the same GET,
# the same 50 connections, passes of the same length, alternating (the
# order of the clients rotates from pass to pass). Prints requests/s of
# each, the ratio afterburner / wrk, the CPU time (user + sys) each client
# process used per 1000 requests and the ratio of the two, the share of a
# core nginx's worker was busy during each client's pass, the 1-minute
# load average after the pass, and the medians over all passes.
# With BASELINE=/path/to/another/afterburner, that build runs in every
# pass too (columns base/s, base ratio, base cpu/1k).
# Usage: [AFTERBURNER=BIN] [BASELINE=BIN] [CLIENTS=N] scripts/bench-http-driver.sh [SECONDS] [PASSES]   (default 5 6)
set -euo pipefail
seconds=${1:-5}
passes=${2:-6}
clients=${CLIENTS:-50}
root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=scripts/bench-common.sh
. "$root/scripts/bench-common.sh"
for tool in nginx wrk /usr/bin/time; do
  command -v "$tool" >/dev/null || { echo "$tool is missing: apt-get install nginx-light wrk time" >&2; exit 1; }
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
# nginx's worker may run as nobody: let it read the files.
chmod 755 "$work"
mkdir "$work/www"
head -c 100 /dev/zero | tr '\0' x >"$work/www/index.html"
cat >"$work/nginx.conf" <<CONF
worker_processes 1;
daemon off;
pid $work/nginx.pid;
error_log $work/error.log;
events { worker_connections $((clients + 64)); }
http {
  access_log off;
  keepalive_requests 100000000;
  server {
    listen 127.0.0.1:$port;
    root $work/www;
  }
}
CONF
"${on_server_core[@]}" nginx -p "$work" -c "$work/nginx.conf" -e "$work/error.log" &
server=$!
trap 'kill $server 2>/dev/null; wait $server 2>/dev/null; rm -rf "$work"' EXIT
wait_port "$port"
# The one worker: the master's child.
worker=""
for _ in $(seq 100); do
  worker=$(tr -d ' ' <"/proc/$server/task/$server/children" 2>/dev/null || true)
  [ -n "$worker" ] && break
  sleep 0.05
done
[ -n "$worker" ] || { echo "nginx started no worker: $(cat "$work/error.log")" >&2; exit 1; }
url="http://127.0.0.1:$port/index.html"

# One pass of client NAME (ab, base or wrk); leaves "requests/s requests
# cpu-seconds nginx-busy" in $work/NAME.res.
client() {
  local before after
  before=$(proc_cpu "$worker")
  if [ "$1" = wrk ]; then
    /usr/bin/time -f "%U %S" -o "$work/wrk.time" "${on_client_core[@]}" wrk -t1 -c "$clients" -d "${seconds}s" "$url" >"$work/wrk.out"
    rps=$(awk '/^Requests\/sec:/ { print $2 }' "$work/wrk.out")
    n=$(awk '/requests in/ { print $1 }' "$work/wrk.out")
    [ -n "$rps" ] || { echo "wrk printed no Requests/sec:" >&2; cat "$work/wrk.out" >&2; exit 1; }
    if grep -q 'Non-2xx\|Socket errors' "$work/wrk.out"; then
      echo "wrk saw errors:" >&2; cat "$work/wrk.out" >&2; exit 1
    fi
  else
    bin=$ab
    [ "$1" = base ] && bin=$base
    /usr/bin/time -f "%U %S" -o "$work/$1.time" "${on_client_core[@]}" "$bin" load "$url" -c "$clients" -d "${seconds}s" \
      --warmup 0s --json "$work/$1.json" >/dev/null
    # The summary's fields come first; the time series repeats the names.
    rps=$(grep -o '"achieved_rps": *[0-9.]*' "$work/$1.json" | head -1 | grep -o '[0-9.]*$')
    n=$(grep -o '"requests": *[0-9]*' "$work/$1.json" | head -1 | grep -o '[0-9]*$')
  fi
  after=$(proc_cpu "$worker")
  echo "$rps $n $(cpu "$work/$1.time") $(awk -v a="$before" -v b="$after" -v s="$seconds" 'BEGIN { printf "%.0f", (b - a) * 100 / s }')" >"$work/$1.res"
}

names=(ab wrk)
header=$(printf '%-5s %14s %10s %7s %13s %13s %9s %7s %7s' pass "afterburner/s" "wrk/s" ratio "ab cpu/1k ms" "wrk cpu/1k ms" "cpu ratio" "ngx ab%" "ngx wrk%")
formats="%-5s %14.0f %10.0f %7.3f %13.4f %13.4f %9.3f %7.0f %7.0f"
if [ -n "$base" ]; then
  names+=(base)
  header+=$(printf ' %10s %10s %14s' "base/s" "base ratio" "base cpu/1k ms")
  formats+=" %10.0f %10.3f %14.4f"
fi
echo "$clients connections, ${seconds} s a pass, nginx worker pid $worker"
printf '%s %6s\n' "$header" load
for pass in $(seq "$passes"); do
  k=$(((pass - 1) % ${#names[@]}))
  for c in "${names[@]:$k}" "${names[@]:0:$k}"; do client "$c"; done
  read -r ab_rps ab_n ab_cpu ab_ngx <"$work/ab.res"
  read -r w_rps w_n w_cpu w_ngx <"$work/wrk.res"
  line=$(awk -v p="$pass" -v a="$ab_rps" -v b="$w_rps" -v ac="$ab_cpu" -v bc="$w_cpu" -v an="$ab_n" -v bn="$w_n" -v an2="$ab_ngx" -v bn2="$w_ngx" \
    'BEGIN { x = ac * 1e6 / an; y = bc * 1e6 / bn; printf "%-5s %14.0f %10.0f %7.3f %13.4f %13.4f %9.3f %7d %7d", p, a, b, a / b, x, y, x / y, an2, bn2 }')
  if [ -n "$base" ]; then
    read -r b_rps b_n b_cpu _ <"$work/base.res"
    line+=$(awk -v a="$b_rps" -v b="$w_rps" -v c="$b_cpu" -v n="$b_n" \
      'BEGIN { printf " %10.0f %10.3f %14.4f", a, a / b, c * 1e6 / n }')
  fi
  printf '%s %6s\n' "$line" "$(cut -d' ' -f1 /proc/loadavg)" | tee -a "$work/rows"
done
medians "$work/rows" "$formats"
