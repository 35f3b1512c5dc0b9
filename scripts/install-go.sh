#!/usr/bin/env bash
# Make a Go that can build with PGO (1.21 or newer) available, for .ci/run
# and fresh machines: the PATH's `go` when it is new enough; else Debian's
# /usr/lib/go-1.2x/bin/go or /usr/local/go/bin/go; else, on Debian 12
# (whose golang-go is 1.19), golang-1.23 or golang-1.22 from
# bookworm-backports, adding that suite first (with the Signed-By and
# mirror of the existing Debian entry) when apt lacks it. Needs root (or
# sudo) only to install.
#
# GO_LOCAL (default /usr/local/go) is where a go.dev install is looked for;
# GO_LOCAL= ignores one, to test the install on a machine that has it.
#
# Prints the directory to put first on PATH (nothing when the PATH's go
# will do); exits 1 saying why when no Go >= 1.21 can be had.
set -euo pipefail
minimum=21

minor() { "$1" version 2>/dev/null | sed -n 's/.*go1\.\([0-9][0-9]*\).*/\1/p'; }
new_enough() { local m; m=$(minor "$1"); [ -n "$m" ] && [ "$m" -ge "$minimum" ]; }

# A Go >= 1.21 off the PATH, newest Debian package first.
installed_dir() {
  local d
  for d in $(ls -d /usr/lib/go-1.* 2>/dev/null | sort -t. -k2,2nr) ${GO_LOCAL-/usr/local/go}; do
    if [ -x "$d/bin/go" ] && new_enough "$d/bin/go"; then echo "$d/bin"; return 0; fi
  done
  return 1
}

if command -v go >/dev/null && new_enough "$(command -v go)"; then exit 0; fi
installed_dir && exit 0

. /etc/os-release
if [ "${ID:-}" != debian ] || [ "${VERSION_CODENAME:-}" != bookworm ]; then
  echo "no Go 1.21 or newer here, and this is not Debian 12 (${PRETTY_NAME:-unknown}): install Go from https://go.dev/dl" >&2
  exit 1
fi
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
sources=(/etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources)
if ! grep -qs '^[^#]*bookworm-backports' "${sources[@]}"; then
  # The Debian archive's entry: its mirror and keyring (deb822 first).
  uri="" key=""
  if [ -f /etc/apt/sources.list.d/debian.sources ]; then
    read -r uri key < <(awk '
      /^[ \t]*$/ { if (u != "" && s ~ /(^| )bookworm( |$)/) { print u, k; exit } u = ""; s = ""; k = "" }
      /^URIs:/ { u = $2 } /^Suites:/ { s = $0 } /^Signed-By:/ { k = $2 }
      END { if (u != "" && s ~ /(^| )bookworm( |$)/) print u, k }' /etc/apt/sources.list.d/debian.sources) || true
  fi
  if [ -z "$uri" ] && [ -f /etc/apt/sources.list ]; then
    line=$(grep -E '^deb[[:space:]].*[[:space:]]bookworm[[:space:]]' /etc/apt/sources.list | grep -v 'cdrom:' | head -n1 || true)
    key=$(sed -n 's/.*signed-by=\([^] ]*\).*/\1/p' <<<"$line")
    uri=$(sed -e 's/\[[^]]*\]//' <<<"$line" | awk '{print $2}')
  fi
  uri=${uri:-http://deb.debian.org/debian}
  [ -n "$key" ] || [ ! -f /usr/share/keyrings/debian-archive-keyring.gpg ] || key=/usr/share/keyrings/debian-archive-keyring.gpg
  echo "adding bookworm-backports ($uri) to apt's sources" >&2
  {
    printf 'Types: deb\nURIs: %s\nSuites: bookworm-backports\nComponents: main\n' "$uri"
    [ -z "$key" ] || printf 'Signed-By: %s\n' "$key"
  } | $sudo tee /etc/apt/sources.list.d/afterburner-backports.sources >/dev/null
fi
export DEBIAN_FRONTEND=noninteractive
lock=(-o DPkg::Lock::Timeout=600)
$sudo apt-get "${lock[@]}" update -qq >&2
for package in golang-1.23 golang-1.22; do
  if $sudo apt-get "${lock[@]}" install -y -qq --no-install-recommends -t bookworm-backports "$package" >&2; then
    break
  fi
done
installed_dir && exit 0
echo "no Go 1.21 or newer: installing golang-1.23 or golang-1.22 from bookworm-backports failed" >&2
exit 1
