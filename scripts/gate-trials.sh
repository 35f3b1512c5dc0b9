#!/usr/bin/env bash
# The CI gate calibrated: how often `afterburner check --rev` passes an
# unchanged program (A/A: its false alarms), and how often it catches a 5%
# and a 2x regression (its power), at 3, 5 and 10 repetitions, on the
# divide fixture with wall time as the headline.
#
# Each trial is a repository of its own: the fixture committed, then the
# working tree left unchanged (A/A), its loop made 5% longer, or doubled;
# `check --rev HEAD` builds both and runs them interleaved. Every other A/A
# trial runs with a CPU hog (`yes`) on the machine, started before the
# check, stopped after it.
#
# Usage: scripts/gate-trials.sh [TRIALS_AA] [TRIALS_EFFECT] [REPETITIONS...]
#   defaults: 40 A/A trials, 10 per effect, repetitions 3 5 10
# Environment: AFTERBURNER (the binary, default target/release/afterburner),
#   GATE_FLAGS (more options for every check, e.g. "--budget 2m": rounds
#   go on past the repetitions until each case passes or fails)
# Prints one line per (effect, repetitions): trials, passed, failed,
# inconclusive; the A/A false-alarm rate is failed / trials, the power
# failed / trials.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
bin=${AFTERBURNER:-$here/target/release/afterburner}
aa=${1:-40}
per_effect=${2:-10}
shift $(($# > 2 ? 2 : $#))
reps=("$@")
[ ${#reps[@]} -gt 0 ] || reps=(3 5 10)
[ -x "$bin" ] || { echo "no afterburner at $bin (cargo build --release)" >&2; exit 2; }
work=$(mktemp -d /tmp/gate-trials.XXXXXX)
hog=""
trap '[ -n "$hog" ] && kill "$hog" 2>/dev/null; rm -rf "$work"' EXIT

# repo DIR REPS: the divide fixture committed in DIR.
repo() {
  local dir=$1 r=$2
  mkdir -p "$dir"
  cp -r "$here/tests/fixtures/divide" "$dir/src"
  cat >"$dir/afterburner.toml" <<EOF
[target]
name = "divide"
source = { path = "src" }
build = "make"
binaries = { divide = "divide" }

[[variant]]
name = "divides"

[[workload]]
name = "loop"
role = "bench"
run = "{bin.divide} 3000000 7"

[bench]
repetitions = $r
warmup = 1
metrics = ["wall"]
EOF
  printf '.afterburner/\n' >"$dir/.gitignore"
  git -C "$dir" init -q
  git -C "$dir" add .
  git -C "$dir" -c user.name=t -c user.email=t@t commit -qm before
}

# trial EFFECT REPS HOG: the exit status of one check.
trial() {
  local effect=$1 r=$2 with_hog=$3 dir status
  dir=$(mktemp -d "$work/t.XXXXXX")
  repo "$dir" "$r"
  case "$effect" in
    none) ;;
    5%) sed -i 's/i < n;/i < n + n \/ 20;/' "$dir/src/divide.c" ;;
    2x) sed -i 's/i < n;/i < 2 * n;/' "$dir/src/divide.c" ;;
  esac
  if [ "$with_hog" = 1 ]; then
    yes >/dev/null &
    hog=$!
  fi
  set +e
  (cd "$dir" && "$bin" check --rev HEAD ${GATE_FLAGS:-} >"$dir/check.log" 2>&1)
  status=$?
  set -e
  if [ -n "$hog" ]; then
    kill "$hog" 2>/dev/null || true
    wait "$hog" 2>/dev/null || true
    hog=""
  fi
  rm -rf "$dir"
  echo "$status"
}

printf '%-7s %4s %6s %6s %6s %12s\n' effect reps trials passed failed inconclusive
for effect in none 5% 2x; do
  for r in "${reps[@]}"; do
    n=$per_effect
    [ "$effect" = none ] && n=$aa
    passed=0 failed=0 undecided=0 other=0
    for i in $(seq 1 "$n"); do
      with_hog=0
      [ "$effect" = none ] && [ $((i % 2)) -eq 0 ] && with_hog=1
      case $(trial "$effect" "$r" "$with_hog") in
        0) passed=$((passed + 1)) ;;
        1) failed=$((failed + 1)) ;;
        3) undecided=$((undecided + 1)) ;;
        *) other=$((other + 1)) ;;
      esac
    done
    printf '%-7s %4s %6s %6s %6s %12s%s\n' "$effect" "$r" "$n" "$passed" "$failed" "$undecided" \
      "$([ $other -gt 0 ] && echo "  ($other errors)")"
  done
done
