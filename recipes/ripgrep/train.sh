#!/bin/sh
# The searches ripgrep is trained on, one file for both afterburner's
# training workload (recipes/ripgrep.toml) and cargo-pgo's training
# (cargo-pgo.sh), so the two profiles come from the very same runs:
#   train.sh RG TREE
# Single-threaded (--threads 1) like the bench, on C headers; the bench
# searches another tree with other patterns.
set -eu
rg=$1
tree=$2
"$rg" --threads 1 -c 'struct [a-z_]+ \{' "$tree" >/dev/null
"$rg" --threads 1 -c -i 'define\s+\w+_MAX\b' "$tree" >/dev/null
"$rg" --threads 1 -c -w 'unsigned' "$tree" >/dev/null
"$rg" --threads 1 -c -F 'include' "$tree" >/dev/null
"$rg" --threads 1 -c '0x[0-9a-fA-F]{8}' "$tree" >/dev/null
