#!/usr/bin/env bash
# A/A trials: bench an experiment whose variants are the same program N
# times and count the *reports* that claim any difference ("faster" or
# "slower" on any metric), the primary comparisons that do, and the
# metrics that do. With the secondary metrics corrected for their number,
# at most 5% of reports should claim anything.
#
#   scripts/aa-trials.sh EXPERIMENT TRIALS [BUSY_EVERY]
#
# BUSY_EVERY=K: every K-th trial runs beside a CPU hog (one busy shell
# loop per CPU, started here and stopped by its PID), as a build beside a
# benchmark would. Needs target/release/afterburner (cargo build --release).
# Prints one line per trial and a summary.
set -euo pipefail
cd "$(dirname "$0")/.."
experiment=$1
trials=$2
busy_every=${3:-0}
bin=${AFTERBURNER:-target/release/afterburner}
work=$(mktemp -d)
hogs=()
stop_hogs() {
  for pid in "${hogs[@]}"; do kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; done
  hogs=()
}
trap 'stop_hogs; rm -rf "$work"' EXIT
timeout 1800 "$bin" build "$experiment" --workdir "$work" >/dev/null
reports=0 claiming=0 primary_claims=0 metrics=0 metric_claims=0
for i in $(seq 1 "$trials"); do
  busy=no
  if [ "$busy_every" -gt 0 ] && [ $((i % busy_every)) -eq 0 ]; then
    busy=yes
    for _ in $(seq 1 "$(nproc)"); do (while :; do :; done) & hogs+=($!); done
  fi
  out=$(timeout 900 "$bin" bench "$experiment" --workdir "$work" 2>/dev/null) || { stop_hogs; echo "trial $i: bench failed" >&2; exit 1; }
  stop_hogs
  results=$(printf '%s\n' "$out" | sed -n 's/^results: //p')
  line=$(python3 - "$results" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
cs = r["comparisons"]
claims = [c for c in cs if c["verdict"] in ("faster", "slower")]
primary = [c for c in claims if c.get("primary")]
names = ",".join(f'{c["metric"]}={c["verdict"]}' for c in claims) or "-"
print(len(cs), len(claims), len(primary), names)
PY
)
  read -r n claims primary names <<<"$line"
  reports=$((reports + 1)); metrics=$((metrics + n)); metric_claims=$((metric_claims + claims))
  [ "$claims" -gt 0 ] && claiming=$((claiming + 1))
  primary_claims=$((primary_claims + primary))
  echo "trial $i (busy: $busy): $n comparisons, $claims claimed ($names)"
done
echo "reports claiming any difference: $claiming of $reports; primary comparisons claiming: $primary_claims of $reports; metric verdicts claiming: $metric_claims of $metrics"
