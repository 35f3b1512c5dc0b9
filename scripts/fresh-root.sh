#!/usr/bin/env bash
# A fresh-root check: does afterburner install everything it needs by itself,
# on each Debian release users run?
#
# Makes minimal roots (mmdebstrap --variant=minbase RELEASE): Debian 12
# (bookworm) twice, once with one-line apt sources (/etc/apt/sources.list)
# and once with deb822 sources (/etc/apt/sources.list.d/debian.sources), and
# Debian 13 (trixie) once, with deb822 sources as it installs them. In each it
# copies the afterburner binary (--binary), chroots in (with /proc, /sys, /dev
# and /dev/pts mounted) and, installing nothing by hand, runs
#   (a) a tiny C experiment with every optimization word, as variants, for gcc
#       and for clang, to a finished report (autofdo on timer samples,
#       sample_event = "cpu-clock", so no PMU is needed);
#   (b) `afterburner demo --quick` (an apt source) in one of the roots (--demo-in),
#       and in the others a url source over https (GNU hello from Debian's pool);
#   (c) a cargo target (tests/fixtures/rusthot) with `pgo` and `bolt`, with the
#       Rust toolchain afterburner installs: Debian 12 (in the first layout
#       only) and Debian 13;
#   (d) on Debian 13: Go PGO from perf samples (pgo_source = "perf") on a
#       tiny Go program (Debian 12's Go, 1.19, predates PGO), and every other
#       gcc apt offers (gcc-N) reading the gcc AutoFDO profile of (a) without
#       a diagnostic and placing its samples on the hot function.
# Prints PASS/FAIL and the seconds of every step, exits non-zero on a failure.
#
# Usage: scripts/fresh-root.sh [--binary PATH] [--releases bookworm,trixie]
#                              [--layouts oneline,deb822]
#                              [--demo-in oneline|deb822|all|none] [--keep] [--dir DIR]
#   --binary   afterburner to test (default $AFTERBURNER_BIN, else target/release/afterburner;
#              build it first: cargo build --release --locked)
#   --releases which Debian releases to try, comma-separated (default bookworm,trixie)
#   --layouts  which apt source layouts to try on bookworm, comma-separated (default oneline,deb822)
#   --demo-in  where (b) runs on bookworm (default oneline: the layout afterburner must rewrite itself)
#   --keep     keep the roots and logs (default: removed, even after a failure)
#   --dir      where the roots go (default: a new directory under /var/tmp)
# Environment:
#   AFTERBURNER_ROOT_CACHE  keeps the base root tarballs and downloaded .debs between runs
#                           (default /var/cache/afterburner/fresh-root; empty: no cache)
#   FRESH_ROOT_MAX_AGE_DAYS a cached base root older than this is made again (default 7)
#   FRESH_ROOT_MIRROR       Debian mirror (default http://deb.debian.org/debian)
#   FRESH_ROOT_TIMEOUT_BASE / _EXPERIMENT / _DEMO   per-step limits in seconds (900/900/1500)
# Needs root (chroot, mount). Debian/Ubuntu host (installs mmdebstrap with apt-get if missing).
set -euo pipefail
# All in braces: bash reads the whole script before it runs any of it, so an
# edit to this file during a run does not change the run.
{

here=$(cd "$(dirname "$0")/.." && pwd)
binary=${AFTERBURNER_BIN:-$here/target/release/afterburner}
layouts=oneline,deb822
releases=bookworm,trixie
demo_in=oneline
keep=0
dir=""
while [ $# -gt 0 ]; do
  case "$1" in
    --binary) binary=$2; shift 2 ;;
    --layouts) layouts=$2; shift 2 ;;
    --releases) releases=$2; shift 2 ;;
    --demo-in) demo_in=$2; shift 2 ;;
    --keep) keep=1; shift ;;
    --dir) dir=$2; shift 2 ;;
    -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "fresh-root: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done

cache=${AFTERBURNER_ROOT_CACHE-/var/cache/afterburner/fresh-root}
max_age_days=${FRESH_ROOT_MAX_AGE_DAYS:-7}
mirror=${FRESH_ROOT_MIRROR:-http://deb.debian.org/debian}
security_mirror=${mirror%/debian}/debian-security
timeout_base=${FRESH_ROOT_TIMEOUT_BASE:-900}
timeout_experiment=${FRESH_ROOT_TIMEOUT_EXPERIMENT:-900}
timeout_demo=${FRESH_ROOT_TIMEOUT_DEMO:-1500}

[ "$(id -u)" -eq 0 ] || { echo "fresh-root: needs root (chroot, mount)" >&2; exit 2; }
[ -x "$binary" ] || { echo "fresh-root: no afterburner binary at $binary (cargo build --release --locked, or --binary PATH)" >&2; exit 2; }
binary=$(cd "$(dirname "$binary")" && pwd)/$(basename "$binary")

if [ -z "$dir" ]; then
  dir=$(mktemp -d /var/tmp/afterburner-fresh-root.XXXXXX)
else
  # It is removed at the end: never a directory that holds anything already.
  if [ -e "$dir" ] && [ -n "$(ls -A "$dir" 2>/dev/null)" ]; then
    echo "fresh-root: --dir $dir is not empty (it is removed at the end); name a new one" >&2
    exit 2
  fi
  mkdir -p "$dir"
fi
dir=$(cd "$dir" && pwd)
logs=$dir/logs
mkdir -p "$logs"

# ---------------------------------------------------------------- clean-up
mounts=()   # mount points, in the order mounted
step_pid="" # the step running now
roots=()    # roots entered, for the process sweep

# PIDs of processes whose root directory is inside one of our roots.
procs_in_roots() {
  local p r root
  for p in /proc/[0-9]*; do
    r=$(readlink "$p/root" 2>/dev/null) || continue
    for root in "${roots[@]}"; do
      case "$r" in "$root" | "$root"/*) echo "${p#/proc/}" ;; esac
    done
  done
}

kill_root_procs() {
  [ ${#roots[@]} -gt 0 ] || return 0
  local pids i
  mapfile -t pids < <(procs_in_roots)
  [ ${#pids[@]} -gt 0 ] || return 0
  echo "fresh-root: stopping processes left in the roots: ${pids[*]}" >&2
  kill -TERM "${pids[@]}" 2>/dev/null || true
  for i in $(seq 1 20); do   # 10 s for them to go
    mapfile -t pids < <(procs_in_roots)
    [ ${#pids[@]} -gt 0 ] || return 0
    sleep 0.5
  done
  kill -KILL "${pids[@]}" 2>/dev/null || true
  sleep 1
}

# Whether anything is mounted at or below $1.
mounted_below() {
  awk -v d="$1" '$5 == d || index($5, d "/") == 1 { found = 1 } END { exit !found }' /proc/self/mountinfo
}

cleanup() {
  local rc=$? i m
  set +e
  if [ -n "$step_pid" ] && kill -0 "$step_pid" 2>/dev/null; then
    kill -TERM "$step_pid"   # timeout passes it on to the step
    timeout 30 tail --pid="$step_pid" -f /dev/null
    kill -KILL "$step_pid" 2>/dev/null
  fi
  kill_root_procs
  for ((i = ${#mounts[@]} - 1; i >= 0; i--)); do
    m=${mounts[i]}
    umount "$m" 2>/dev/null || timeout 30 umount "$m" || umount -l "$m" ||
      echo "fresh-root: could not unmount $m" >&2
  done
  mounts=()
  if [ "$keep" -eq 1 ]; then
    echo "fresh-root: kept $dir (roots and logs)"
  elif mounted_below "$dir"; then
    echo "fresh-root: something is still mounted under $dir; not removing it" >&2
    rc=1
  else
    rm -rf --one-file-system "$dir"
  fi
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# ---------------------------------------------------------------- steps
results=()
failed=0
now() { date +%s; }
started=$(now)

# step NAME LIMIT COMMAND...: run it with a time limit, its output in
# $logs/NAME.log; say PASS or FAIL with the seconds it took.
step() {
  local name=$1 limit=$2 start rc secs
  shift 2
  start=$(now)
  echo "== $name (limit ${limit}s, log $logs/$name.log)"
  set +e
  # Shell functions run in a child bash (export -f below), under the limit.
  # In the background, so that a signal to this script is handled at once
  # (bash runs traps only between foreground commands).
  timeout --kill-after=30 "$limit" bash -c '"$@"' step "$@" >"$logs/$name.log" 2>&1 </dev/null &
  step_pid=$!
  wait "$step_pid"
  rc=$?
  step_pid=""
  set -e
  secs=$(($(now) - start))
  if [ $rc -eq 0 ]; then
    results+=("PASS  $name  ${secs}s")
    echo "PASS  $name  ${secs}s"
  else
    [ $rc -eq 124 ] || [ $rc -eq 137 ] && rc="$rc (timed out after ${limit}s)"
    results+=("FAIL  $name  ${secs}s  exit $rc")
    failed=1
    echo "FAIL  $name  ${secs}s  exit $rc; the end of its log:"
    tail -n 40 "$logs/$name.log" | sed 's/^/    /'
  fi
  return 0
}

# The last step passed?
last_passed() { case "${results[${#results[@]} - 1]}" in PASS*) return 0 ;; *) return 1 ;; esac; }

# ---------------------------------------------------------------- base root
ensure_mmdebstrap() {
  command -v mmdebstrap >/dev/null && return 0
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq && apt-get install -y -qq --no-install-recommends mmdebstrap
}

# base_tar RELEASE: where the release's minimal root is kept.
base_tar() {
  if [ -n "$cache" ]; then echo "$cache/$1-minbase.tar"; else echo "$dir/$1-minbase.tar"; fi
}
make_base() {   # make_base RELEASE
  local release=$1 tar fresh
  tar=$(base_tar "$release")
  if [ -n "$cache" ]; then
    mkdir -p "$cache"
    fresh=$(find "$tar" -maxdepth 0 -mtime "-$max_age_days" 2>/dev/null || true)
    if [ -n "$fresh" ]; then
      echo "cached base root: $tar ($(du -h "$tar" | cut -f1))"
      return 0
    fi
  fi
  mmdebstrap --variant=minbase --format=tar "$release" "$tar.$$.partial" "$mirror"
  mv "$tar.$$.partial" "$tar"
}

IFS=, read -r -a release_list <<<"$releases"
for release in "${release_list[@]}"; do
  case "$release" in bookworm | trixie) ;; *) echo "fresh-root: unknown release $release (bookworm or trixie)" >&2; exit 2 ;; esac
done
export mirror cache dir max_age_days
export -f ensure_mmdebstrap make_base base_tar
step install-mmdebstrap 600 ensure_mmdebstrap
if ! last_passed; then exit 1; fi
for release in "${release_list[@]}"; do
  step "$release-base-root" "$timeout_base" make_base "$release"
  if ! last_passed; then exit 1; fi
done

# ---------------------------------------------------------------- the roots
write_sources() {   # write_sources ROOT LAYOUT RELEASE
  local root=$1 layout=$2 release=$3
  rm -f "$root/etc/apt/sources.list" "$root"/etc/apt/sources.list.d/*
  case "$layout" in
    oneline)
      # As Debian 11 and older, Ubuntu 22.04 and many images write it.
      cat >"$root/etc/apt/sources.list" <<EOF
deb $mirror $release main
deb $mirror $release-updates main
deb $security_mirror $release-security main
EOF
      ;;
    deb822)
      # As the Debian 12 and 13 installers and cloud images write it: no deb-src.
      cat >"$root/etc/apt/sources.list.d/debian.sources" <<EOF
Types: deb
URIs: $mirror
Suites: $release $release-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: $security_mirror
Suites: $release-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
      ;;
  esac
}

# The tiny C experiment: a hot loop through a few functions in two files.
write_fixture() {
  local exp=$1/root/hot
  mkdir -p "$exp/src"
  cat >"$exp/src/hot.c" <<'EOF'
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

unsigned mix(unsigned acc, unsigned i);
unsigned fold(unsigned acc, unsigned i);
unsigned rare(unsigned acc, unsigned i);

typedef unsigned (*step_fn)(unsigned, unsigned);

static unsigned checksum(const char *s, size_t n) {
    unsigned h = 2166136261u;
    for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * 16777619u;
    return h;
}

int main(int argc, char **argv) {
    unsigned n = argc > 1 ? (unsigned)strtoul(argv[1], 0, 10) : 1000000u;
    step_fn steps[2] = {mix, fold};
    step_fn step = steps[argc > 2];
    char buf[64];
    unsigned acc = 1;
    for (unsigned i = 0; i < n; i++) {
        if (i % 997 != 0) {
            acc = step(acc, i);
        } else {
            acc = rare(acc, i);
            snprintf(buf, sizeof buf, "%u", acc);
            acc += checksum(buf, strlen(buf));
        }
    }
    printf("checksum %u\n", acc);
    return 0;
}
EOF
  cat >"$exp/src/steps.c" <<'EOF'
unsigned mix(unsigned acc, unsigned i) { return acc * 31u + i; }
unsigned fold(unsigned acc, unsigned i) { return (acc ^ i) >> 1; }
unsigned rare(unsigned acc, unsigned i) {
    for (unsigned k = 0; k < 64; k++) acc = acc * 7u + (i ^ k);
    return acc;
}
EOF
  printf '%s\n' '# CC, CFLAGS and LDFLAGS come from afterburner.' \
    'hot: hot.c steps.c' \
    '	$(CC) $(CFLAGS) -o $@ hot.c steps.c $(LDFLAGS)' >"$exp/src/Makefile"
  local compiler word words clang_only
  mkdir -p "$exp/all"
  {
    cat <<EOF
# Every optimization word, one variant each, with gcc and with clang (one
# experiment: one bench phase); pgo-frontend, cspgo and split-functions are
# clang's only; autofdo samples a timer (no PMU needed).
[target]
name = "hot"
source = { path = "../src" }
build = "make hot"
binaries = { hot = "hot" }
compiler = "gcc"

[[variant]]
name = "gcc"
EOF
    for compiler in gcc clang; do
      [ "$compiler" = clang ] && printf '\n[[variant]]\nname = "clang"\ncompiler = "clang"\n'
      # Every word of `optimizations!`, and those gcc lacks: tests/it/docs.rs
      # checks both lists against the binary's.
      words="pgo pgo-frontend cspgo autofdo bolt split-functions lto o3 march nosi noplt"
      clang_only="pgo-frontend cspgo split-functions"
      for word in $words; do
        if [ "$compiler" = gcc ] && [[ " $clang_only " == *" $word "* ]]; then
          continue
        fi
        printf '\n[[variant]]\nname = "%s-%s"\ncompiler = "%s"\noptimize = ["%s"]\n' "$compiler" "$word" "$compiler" "$word"
        [ "$word" = autofdo ] && echo 'sample_event = "cpu-clock"'
        # A level rather than native: callgrind (valgrind 3.19) cannot run AVX-512.
        [ "$word" = march ] && echo 'march = "x86-64-v2"'
      done
    done
    cat <<'EOF'

[[workload]]
name = "loop"
role = "both"
run = "{bin.hot} 2000000"
train_run = "{bin.hot} 100000000"

[bench]
repetitions = 3
warmup = 0
metrics = ["wall", "instructions"]
instruction_repetitions = 1
EOF
  } >"$exp/all/experiment.toml"
}

# A Go program whose hot call PGO devirtualizes, trained under perf record
# -g (pgo_source = "perf"): Go's PGO from perf samples.
write_go_experiment() {
  local exp=$1/root/go
  mkdir -p "$exp/src"
  cp "$here/tests/fixtures/gohot/main.go" "$here/tests/fixtures/gohot/go.mod" "$exp/src/"
  cat >"$exp/experiment.toml" <<'EOF'
[target]
name = "gohot"
source = { path = "src" }
build = "go build -o gohot ."
binaries = { gohot = "gohot" }
compiler = "go"

[[variant]]
name = "baseline"

[[variant]]
name = "pgo"
optimize = ["pgo"]
pgo_source = "perf"

[[workload]]
name = "loop"
run = "{bin.gohot} -n 2000000"
train_run = "{bin.gohot} -n 50000000"

[bench]
repetitions = 3
warmup = 0
metrics = ["wall", "instructions"]
instruction_repetitions = 1
EOF
}

# A cargo target (the rusthot fixture crate, no dependencies): the Rust
# toolchain apt offers in the root (Debian 12's rustc-web, Debian 13's
# rustc) and llvm-profdata of its LLVM release, installed by afterburner;
# `pgo` and `bolt` built, checked and measured.
write_rust_experiment() {
  local exp=$1/root/rust
  mkdir -p "$exp/src"
  cp -r "$here/tests/fixtures/rusthot/." "$exp/src/"
  rm -rf "$exp/src/target"
  cat >"$exp/experiment.toml" <<'EOF'
[target]
name = "rusthot"
source = { path = "src" }
cargo = { bins = ["rusthot"] }

[[variant]]
name = "baseline"

[[variant]]
name = "pgo"
optimize = ["pgo"]

[[variant]]
name = "bolt"
optimize = ["bolt"]

[[workload]]
name = "loop"
run = "{bin.rusthot} 3000000"
train_run = "{bin.rusthot} 1000000 train"

[bench]
repetitions = 3
warmup = 0
metrics = ["wall", "instructions"]
instruction_repetitions = 1
EOF
}

# gcc_readers ROOT: every gcc-N apt offers in the root reads the gcc
# AutoFDO profile of the fixture's gcc-autofdo variant with no diagnostic
# and puts samples on the hot function (main's loop). gcc 12 folds
# discriminators where 13 and later key by them: the profile is written
# for the root's default gcc, so only gccs of the same reader are asked.
gcc_readers() {
  local root=$1 profile majors m default out
  profile=$(ls -1 "$root"/root/hot/all/.afterburner/variants/gcc-autofdo/profile/gcc-autofdo/merged-*.gcov 2>/dev/null | head -n 1)
  [ -n "$profile" ] || { echo "no merged gcc AutoFDO profile under /root/hot/all"; return 1; }
  profile=${profile#"$root"}
  default=$(inroot "$root" / gcc -dumpversion | cut -d. -f1)
  mapfile -t majors < <(inroot "$root" / apt-cache pkgnames gcc- | sed -n 's/^gcc-\([0-9][0-9]*\)$/\1/p' | sort -n)
  [ "$default" -ge 13 ] || { echo "the root's gcc is $default: no other gcc of its reader to ask"; return 0; }
  for m in "${majors[@]}"; do
    [ "$m" -ge 13 ] || continue
    inroot "$root" / "DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends gcc-$m >/dev/null" || return 1
    out=$(inroot "$root" /root/hot/src "rm -f *.afdo; gcc-$m -O2 -g -gdwarf-4 -c -fdump-ipa-afdo -fauto-profile=$profile hot.c -o /dev/null 2>&1; grep -ho 'count: [0-9]*' hot.c.*afdo 2>/dev/null | sort -t' ' -k2 -n | tail -n 1")
    echo "gcc-$m: $out"
    case "$out" in *warning* | *error* | *version* | *TAG*) echo "gcc-$m said something about the profile"; return 1 ;; esac
    [ "${out##*count: }" -gt 0 ] 2>/dev/null || { echo "gcc-$m annotated no block with a count"; return 1; }
  done
}

# GNU hello from Debian's pool over https: a url source fetched with curl
# (and its certificates), built with configure and make.
write_url_experiment() {
  mkdir -p "$1/root/url"
  cat >"$1/root/url/experiment.toml" <<'EOF'
[target]
name = "hello"
source = { url = "https://deb.debian.org/debian/pool/main/h/hello/hello_2.10.orig.tar.gz", sha256 = "31e066137a962676e89f69d1b65382de95a7ef7d914b8cb956f41ea72e0f516b" }
build = "./configure >/dev/null && make -j2"
binaries = { hello = "hello" }
compiler = "gcc"

[[variant]]
name = "baseline"

[[workload]]
name = "greet"
run = "{bin.hello}"

[bench]
repetitions = 3
warmup = 0
metrics = ["wall"]
EOF
}

variants_of() {   # variants_of EXPERIMENT_FILE
  awk '/^\[\[variant\]\]/ { v = 1; next } v && /^name = / { gsub(/^name = "|"$/, ""); print; v = 0 }' "$1"
}

# inroot ROOT DIR COMMAND: run a shell command in the root, in DIR, as root,
# with a clean environment.
inroot() {
  local root=$1 cwd=$2
  shift 2
  chroot "$root" /usr/bin/env -i HOME=/root LANG=C.UTF-8 TERM=dumb \
    PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    /bin/sh -c "cd $cwd && $*"
}

# check_report ROOT EXPDIR VARIANTS...: the newest run's report.md has every variant.
check_report() {
  local root=$1 exp=$2 report v missing=()
  shift 2
  report=$(ls -1d "$root$exp"/.afterburner/runs/*/report.md 2>/dev/null | tail -n 1)
  [ -n "$report" ] || { echo "no report.md under $exp/.afterburner/runs/"; return 1; }
  echo "report: ${report#"$root"}"
  for v in "$@"; do
    grep -qF -- "\`$v\`" "$report" || missing+=("$v")   # a column: `name`
  done
  [ ${#missing[@]} -eq 0 ] || { echo "report.md lacks variants: ${missing[*]}"; return 1; }
  echo "every variant is in it: $*"
}

mount_in() {   # mount_in TARGET ARGS...: mount and remember it for the clean-up
  local target=$1
  shift
  mount "$@" "$target"
  mounts+=("$target")
}

unmount_root() {   # the mounts of one root, in reverse, after its processes
  local root=$1 i m keep_mounts=()
  kill_root_procs
  for ((i = ${#mounts[@]} - 1; i >= 0; i--)); do
    m=${mounts[i]}
    case "$m" in
      "$root"/*) timeout 30 umount "$m" || { echo "fresh-root: could not unmount $m" >&2; keep_mounts=("$m" "${keep_mounts[@]}"); } ;;
      *) keep_mounts=("$m" "${keep_mounts[@]}") ;;
    esac
  done
  mounts=("${keep_mounts[@]}")
}


export -f ensure_mmdebstrap make_base base_tar inroot check_report gcc_readers

# The shared package cache is one run's at a time (apt-get locks it): a run
# that finds it taken downloads into its roots instead.
share_debs=0
if [ -n "$cache" ]; then
  exec 9>"$cache/debs.lock"
  if flock -n 9; then
    share_debs=1
  else
    echo "fresh-root: another run holds $cache/debs.lock; packages are downloaded afresh"
  fi
fi

# run_root NAME RELEASE LAYOUT: a fresh root of RELEASE with LAYOUT's apt
# sources, and every check in it.
run_root() {
  local name=$1 release=$2 layout=$3 root=$dir/$1 compiler
  roots+=("$root")
  mkdir -p "$root"
  step "$name-unpack" 300 tar -C "$root" -xf "$(base_tar "$release")"
  last_passed || return 0
  write_sources "$root" "$layout" "$release"
  # The host's network set-up, not packages: its resolver, and the local CA
  # certificates its TLS may need (a proxy's); ca-certificates, once installed
  # in the root, takes them in.
  cp /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true
  if [ -d /usr/local/share/ca-certificates ]; then
    mkdir -p "$root/usr/local/share/ca-certificates"
    cp -a /usr/local/share/ca-certificates/. "$root/usr/local/share/ca-certificates/"
  fi
  install -m 755 "$binary" "$root/usr/local/bin/afterburner"
  mount_in "$root/proc" -t proc proc
  mount_in "$root/sys" -t sysfs sysfs
  mount_in "$root/dev" --bind /dev
  mount_in "$root/dev/pts" --bind /dev/pts
  if [ -n "$cache" ] && [ "$share_debs" -eq 1 ]; then
    # Downloaded packages are kept between runs (apt-get itself still runs
    # in the root); each release's are apart, as their versions are.
    mkdir -p "$cache/apt-archives-$release/partial"
    mount_in "$root/var/cache/apt/archives" --bind "$cache/apt-archives-$release"
  fi
  echo "root $name: $root ($(sed -n 's/^deb //p' "$root/etc/apt/sources.list" 2>/dev/null | head -n 1)$(ls "$root"/etc/apt/sources.list.d/ 2>/dev/null))"

  write_fixture "$root"
  mapfile -t variants < <(variants_of "$root/root/hot/all/experiment.toml")
  step "$name-all-words" "$timeout_experiment" inroot "$root" /root/hot/all afterburner run experiment.toml
  step "$name-all-words-report" 60 check_report "$root" /root/hot/all "${variants[@]}"

  if [ "$release" = trixie ] || [ "$layout" = "${layout_list[0]}" ]; then
    write_rust_experiment "$root"
    step "$name-rust-pgo-bolt" "$timeout_experiment" inroot "$root" /root/rust afterburner run experiment.toml
    step "$name-rust-pgo-bolt-report" 60 check_report "$root" /root/rust baseline pgo bolt
  fi

  if [ "$release" = trixie ]; then
    step "$name-gcc-readers" 900 gcc_readers "$root"
    write_go_experiment "$root"
    step "$name-go-pgo-perf" "$timeout_experiment" inroot "$root" /root/go afterburner run experiment.toml
    step "$name-go-pgo-perf-report" 60 check_report "$root" /root/go baseline pgo
  fi

  if [ "$demo_in" = all ] || { [ "$release" = bookworm ] && [ "$demo_in" = "$layout" ]; }; then
    step "$name-demo" "$timeout_demo" inroot "$root" /root afterburner demo --quick
    step "$name-demo-report" 60 check_report "$root" /root/afterburner-demo baseline pgo
  else
    # Where the demo (an apt source) does not run: a url source over https.
    write_url_experiment "$root"
    step "$name-url-source" "$timeout_experiment" inroot "$root" /root/url afterburner run experiment.toml
    step "$name-url-source-report" 60 check_report "$root" /root/url baseline
  fi
  unmount_root "$root"
}

IFS=, read -r -a layout_list <<<"$layouts"
for layout in "${layout_list[@]}"; do
  case "$layout" in oneline | deb822) ;; *) echo "fresh-root: unknown layout $layout" >&2; exit 2 ;; esac
done
for release in "${release_list[@]}"; do
  case "$release" in
    bookworm) for layout in "${layout_list[@]}"; do run_root "$layout" bookworm "$layout"; done ;;
    trixie) run_root trixie trixie deb822 ;;
  esac
done

echo
echo "fresh-root summary ($(($(now) - started))s in all):"
printf '  %s\n' "${results[@]}"
if [ "$failed" -ne 0 ]; then
  echo "fresh-root: FAIL"
  exit 1
fi
echo "fresh-root: PASS"
exit 0
}
