#!/usr/bin/env bash
# A race against the full run it stands in for, at several seeds: for each
# seed, `afterburner run` (every candidate for [bench] repetitions rounds)
# and `afterburner race` (the candidates decided slower than the leader
# dropped after each look), in alternating order so drift favours neither.
# Then, per seed: the full run's fastest candidate (lowest mean of the
# headline), the race's pick (its winner, or its leader when it tied or ran
# out), whether the pick is the fastest or within the race's equivalence
# margin of it in the full run, and the race's run time over the full run's.
#
# Usage: scripts/race-acceptance.sh EXPERIMENT WORKDIR [SEEDS...]
#   (default seeds 1 2 3 4 5; builds and profiles are made once, in WORKDIR)
# Environment: AFTERBURNER (default target/release/afterburner)
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
bin=${AFTERBURNER:-$here/target/release/afterburner}
experiment=$1 workdir=$2
shift 2
seeds=("$@")
[ ${#seeds[@]} -gt 0 ] || seeds=(1 2 3 4 5)
"$bin" build "$experiment" --workdir "$workdir" >/dev/null
"$bin" train "$experiment" --workdir "$workdir" >/dev/null
latest() { ls -d "$workdir"/runs/*/ | sort | tail -n 1; }
pairs=$(mktemp)
trap 'rm -f "$pairs"' EXIT
for s in "${seeds[@]}"; do
  seeded=$(mktemp --suffix=.toml -p "$(dirname "$experiment")")
  sed "s/^\[bench\]$/[bench]\nseed = $s/" "$experiment" >"$seeded"
  if [ $((s % 2)) -eq 1 ]; then order=(run race); else order=(race run); fi
  for command in "${order[@]}"; do
    "$bin" "$command" "$seeded" --workdir "$workdir" >/dev/null 2>&1
    echo "$s $command $(latest)" >>"$pairs"
  done
  rm -f "$seeded"
done
python3 - "$pairs" <<'PY'
import json, sys, collections
runs = collections.defaultdict(dict)
for line in open(sys.argv[1]):
    seed, command, path = line.split()
    runs[seed][command] = path
def walls(path):
    out = collections.defaultdict(list)
    for line in open(path + "/raw.jsonl"):
        r = json.loads(line)
        if not r["warmup"] and r["kind"] == "timing" and r.get("wall_ns"):
            out[r["variant"]].append(r["wall_ns"] / 1e9)
    return out
good = cheap = 0
print("seed  full best      race outcome  pick          pick/best  race s / full s")
for seed, pair in sorted(runs.items()):
    full, race = walls(pair["run"]), json.load(open(pair["race"] + "/results.json"))["race"]
    means = {v: sum(x) / len(x) for v, x in full.items()}
    best = min(means, key=means.get)
    pick = race["survivors"][0] if race["outcome"] == "winner" else race["leader"]
    ratio = means[pick] / means[best]
    ok = pick == best or ratio <= 1 + race["equivalence"]
    share = race["cost"]["seconds"] / sum(sum(x) for x in full.values())
    good += ok; cheap += ok and share <= 1 / 3
    note = "" if ok else "  (not the best)"
    print(f"{seed:>4}  {best:<13} {race['outcome']:<9} {pick:<13} {ratio:9.3f}  {share:6.2f}{note}")
print(f"{good} of {len(runs)} seeds: the pick is the full run's best or within the margin; {cheap} of them at a third of its run time or less")
PY
