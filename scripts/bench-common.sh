# shellcheck shell=bash
# Shared by scripts/bench-*-driver.sh (sourced, not run): where the server
# and the clients run, the CPU time a client used, a process's CPU time so
# far, and the medians of the rows each pass printed.

# PIN=1 (on two cores or more): the server on the last core and every
# client on the first, so that a client never takes the server's core and
# a server that one client saturates and the other does not tells them
# apart. Unset, both share all cores as the scheduler likes.
on_server_core=()
on_client_core=()
if [ "${PIN:-0}" = 1 ]; then
  cores=$(nproc)
  [ "$cores" -ge 2 ] || { echo "PIN=1 needs two cores; this machine has $cores" >&2; exit 1; }
  on_server_core=(taskset -c $((cores - 1)))
  on_client_core=(taskset -c 0)
  echo "pinned: the server on core $((cores - 1)), the clients on core 0"
fi

# User + system seconds from a `/usr/bin/time -f "%U %S"` file.
cpu() { awk '{ printf "%.3f", $1 + $2 }' "$1"; }

# User + system seconds process PID has used so far (from /proc/PID/stat).
proc_cpu() {
  awk -v hz="$(getconf CLK_TCK)" '{ sub(/^.*\) /, ""); printf "%.3f", ($12 + $13) / hz }' "/proc/$1/stat"
}

# Print the median of every column of FILE but the first (the pass) and
# the last (the load average), each in the format of FORMATS (one printf
# format a column, in order, the first column's included).
medians() {
  awk -v formats="$2" '{ for (i = 2; i < NF; i++) v[i, NR] = $i; cols = NF - 1 }
    END {
      split(formats, f, " ")
      printf f[1], "med"
      for (i = 2; i <= cols; i++) {
        n = 0; for (r = 1; r <= NR; r++) a[++n] = v[i, r]
        for (x = 2; x <= n; x++) { t = a[x]; for (y = x - 1; y >= 1 && a[y] > t; y--) a[y + 1] = a[y]; a[y + 1] = t }
        m = n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
        printf " " f[i], m
      }
      printf "\n"
    }' "$1"
}

# Wait up to 10 s for a TCP port on 127.0.0.1 to accept connections.
wait_port() {
  for _ in $(seq 200); do
    (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0
    sleep 0.05
  done
  echo "nothing listens on 127.0.0.1:$1 after 10 s" >&2
  return 1
}
