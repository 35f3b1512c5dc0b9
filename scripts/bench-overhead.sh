#!/usr/bin/env bash
# afterburner's timing against hyperfine -N, side by side in one run:
#  1. overhead: the mean each tool reports for a trivial command (`true`),
#     and the harness's own wall time per run; ratio afterburner / hyperfine;
#  2. agreement: mean and σ for a ~20 ms CPU-bound command from both tools.
# Usage: scripts/bench-overhead.sh [RUNS]   (default 200)
set -euo pipefail
runs=${1:-200}
root=$(cd "$(dirname "$0")/.." && pwd)
command -v hyperfine >/dev/null || { echo "installing hyperfine"; apt-get install -y -qq hyperfine >/dev/null; }
cargo build --release --quiet --manifest-path "$root/Cargo.toml"
ab="$root/target/release/afterburner"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp -a "$root/tests/fixtures/hotpath" "$work/src"
(cd "$work/src" && CC=gcc CFLAGS=-O2 make -s)
busy="$work/src/hotpath 4000000"
cat > "$work/afterburner.toml" <<TOML
[target]
name = "overhead"
source = { path = "src" }
build = "make"
binaries = { hotpath = "hotpath" }

[[workload]]
name = "true"
run = "true"

[[workload]]
name = "busy"
run = "{bin.hotpath} 4000000"

[bench]
repetitions = $runs
warmup = 3
metrics = ["wall"]
seed = 1
TOML
"$ab" build "$work/afterburner.toml" 2>/dev/null

# Alternate the tools twice so drift on this machine hits both alike.
for pass in 1 2; do
  start=$(date +%s.%N)
  "$ab" bench "$work/afterburner.toml" >/dev/null 2>&1
  end=$(date +%s.%N)
  echo "$start $end" > "$work/ab-$pass.time"
  cp "$(ls -d "$work"/.afterburner/runs/* | tail -1)/results.json" "$work/ab-$pass.json"
  start=$(date +%s.%N)
  hyperfine -N --runs "$runs" --warmup 3 --export-json "$work/hf-$pass.json" true "$busy" >/dev/null 2>&1
  end=$(date +%s.%N)
  echo "$start $end" > "$work/hf-$pass.time"
done

python3 - "$work" "$runs" <<'PY'
import json, sys, statistics
work, runs = sys.argv[1], int(sys.argv[2])
def ab(p, name):
    r = json.load(open(f"{work}/ab-{p}.json"))
    m = next(m for m in r["measurements"] if m["workload"] == name and m["metric"]["name"] == "wall")
    return m["summary"]["mean"], m["summary"]["stddevp"]
def hf(p, i):
    r = json.load(open(f"{work}/hf-{p}.json"))["results"][i]
    return r["mean"], statistics.pstdev(r["times"])
def elapsed(tool, p):
    a, b = map(float, open(f"{work}/{tool}-{p}.time").read().split())
    return a, b
print(f"{runs} runs per command, 3 warmup, two alternating passes per tool\n")
print(f"{'':32} {'afterburner':>14} {'hyperfine -N':>14} {'ratio':>7}")
for p in (1, 2):
    (am, as_), (hm, hs) = ab(p, "true"), hf(p, 0)
    print(f"pass {p}: `true` mean           {am*1e6:11.1f} µs {hm*1e6:11.1f} µs {am/hm:7.3f}")
    print(f"pass {p}: `true` σ              {as_*1e6:11.1f} µs {hs*1e6:11.1f} µs")
    (am, as_), (hm, hs) = ab(p, "busy"), hf(p, 1)
    print(f"pass {p}: hotpath mean          {am*1e3:11.3f} ms {hm*1e3:11.3f} ms {am/hm:7.3f}")
    print(f"pass {p}: hotpath σ             {as_*1e3:11.3f} ms {hs*1e3:11.3f} ms")
    a0, a1 = elapsed("ab", p); h0, h1 = elapsed("hf", p)
    # Per run of both commands, including warmup: the harness's whole cost.
    n = 2 * (runs + 3)
    print(f"pass {p}: harness wall per run  {(a1-a0)/n*1e3:11.3f} ms {(h1-h0)/n*1e3:11.3f} ms {(a1-a0)/(h1-h0):7.3f}")
PY
