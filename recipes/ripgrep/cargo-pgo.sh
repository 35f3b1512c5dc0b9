#!/bin/sh
# cargo-pgo's own optimized ripgrep, the anchor recipes/ripgrep.toml runs
# beside afterburner's builds (its `cargo-pgo` variant is this binary,
# prebuilt): cargo-pgo from crates.io, ripgrep's crate from crates.io (its
# checksum checked against the registry's index), `cargo pgo build`, the
# training of train.sh, `cargo pgo optimize build`. Run it once before the
# recipe (it writes recipes/ripgrep/cargo-pgo/rg):
#   sh recipes/ripgrep/cargo-pgo.sh
# llvm-profdata of rustc's LLVM release must be installed (`afterburner
# doctor` names it: llvm-N); it is put first on the PATH, where cargo-pgo
# looks after rustup's llvm-tools.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
name=ripgrep
version=14.1.1
cargo_pgo_version=0.3.0
train_tree=${TRAIN_TREE:-/usr/include}
work=$here/cargo-pgo/work
mkdir -p "$work"

CARGO_INSTALL_ROOT=$here/cargo-pgo/tools cargo install --locked --quiet "cargo-pgo@$cargo_pgo_version"
export PATH="$here/cargo-pgo/tools/bin:$PATH"
llvm=$(rustc -vV | sed -n 's/^LLVM version: \([0-9][0-9]*\).*/\1/p')
[ -x "/usr/lib/llvm-$llvm/bin/llvm-profdata" ] && export PATH="/usr/lib/llvm-$llvm/bin:$PATH"

crate=$work/$name-$version.crate
if [ ! -d "$work/$name-$version" ]; then
  sum=$(curl -fsS "https://index.crates.io/ri/pg/$name" | grep "\"vers\": *\"$version\"" |
    sed -n 's/.*"cksum": *"\([0-9a-f]*\)".*/\1/p')
  curl -fsSL -o "$crate" "https://static.crates.io/crates/$name/$name-$version.crate"
  echo "$sum  $crate" | sha256sum -c --quiet
  tar -C "$work" -xzf "$crate"
fi
cd "$work/$name-$version"
host=$(rustc -vV | sed -n 's/^host: //p')
export CARGO_TARGET_DIR=$work/target
cargo pgo build -- --bin rg
sh "$here/train.sh" "$CARGO_TARGET_DIR/$host/release/rg" "$train_tree"
cargo pgo optimize build -- --bin rg
mkdir -p "$here/cargo-pgo"
cp "$CARGO_TARGET_DIR/$host/release/rg" "$here/cargo-pgo/rg"
echo "cargo-pgo's ripgrep: $here/cargo-pgo/rg"
