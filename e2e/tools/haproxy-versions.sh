#!/usr/bin/env bash
# haproxy-versions.sh OUT SERIES:SUITE...
#
# Puts runnable HAProxy binaries of newer series next to the system's (Debian bookworm's 2.6) for the
# test matrix: OUT/haproxy-<series>, e.g. OUT/haproxy-3.2 from Debian sid. Each comes from Debian's own
# packages, fetched with a private apt configuration under OUT/haproxy-apt/<suite> (its own sources
# file with Debian's archive keyring, its own lists, cache and an empty dpkg status, so the machine's
# apt state is neither read nor changed). The haproxy package and the shared libraries it needs
# (followed through their Depends, libraries only) are unpacked into OUT/haproxy-root-<series>, and
# a copy of usr/sbin/haproxy gets that root's dynamic loader and library path (patchelf; --force-rpath
# so that the libraries' own dependencies resolve there too).
#
# A suite serves only its current revision, so the series is pinned, not the Debian revision: the
# script takes what the suite serves and refuses a binary whose `haproxy -v` is of another series. A
# binary that is present and runs with the right series is kept (delete it to refresh).
#
# Suites other than experimental are used alone; experimental carries haproxy only, so its libraries
# come from sid (unstable).
set -euo pipefail

if [ "$#" -lt 2 ]; then
  echo "usage: $0 OUT SERIES:SUITE..." >&2
  exit 2
fi
out=$(mkdir -p "$1" && cd "$1" && pwd)
shift

keyring=/usr/share/keyrings/debian-archive-keyring.gpg
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
arch=$(dpkg --print-architecture)
triplet=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || echo x86_64-linux-gnu)
sudo=""
[ "$(id -u)" = 0 ] || sudo=sudo

need() {
  local missing=()
  for cmd in "$@"; do command -v "$cmd" >/dev/null 2>&1 || missing+=("$cmd"); done
  [ "${#missing[@]}" = 0 ] && return 0
  echo "installing patchelf (needed: ${missing[*]})" >&2
  $sudo apt-get update -qq && $sudo apt-get install -y -qq patchelf >/dev/null
}

# first_line BIN: the first line of `BIN -v`. The output is read whole, never through `head`: under
# pipefail, a reader that exits early can make the writer die of SIGPIPE and the pipeline fail.
first_line() {
  local v
  v=$("$1" -v 2>/dev/null) || return 1
  printf '%s\n' "${v%%$'\n'*}"
}

# version_ok BIN SERIES: BIN runs and says it is SERIES.x
version_ok() {
  local line
  [ -x "$1" ] && line=$(first_line "$1") && [[ "$line" == "HAProxy version $2."* ]]
}

fetch() {
  local series=$1 suite=$2
  local bin="$out/haproxy-$series" root="$out/haproxy-root-$series" aptdir="$out/haproxy-apt/$suite"
  if version_ok "$bin" "$series"; then
    echo "$(first_line "$bin") (kept: $bin)"
    return 0
  fi
  need patchelf
  mkdir -p "$aptdir/lists/partial" "$aptdir/cache/archives/partial" "$aptdir/debs"
  : >"$aptdir/status"
  {
    echo "deb [signed-by=$keyring] $mirror $suite main"
    [ "$suite" = experimental ] && echo "deb [signed-by=$keyring] $mirror sid main"
  } >"$aptdir/sources.list"
  local apt=(-o "Dir::Etc::SourceList=$aptdir/sources.list" -o Dir::Etc::SourceParts=/dev/null
    -o "Dir::State::Lists=$aptdir/lists" -o "Dir::Cache=$aptdir/cache" -o "Dir::State::status=$aptdir/status"
    -o APT::Architecture="$arch" -o Debug::NoLocking=1 -o APT::Sandbox::User=root)
  apt-get "${apt[@]}" -qq update

  # haproxy from the suite, then the libraries it depends on, followed through library Depends only.
  local pkgs=("haproxy/$suite") queue seen=" " p deps
  queue=$(depends "haproxy/$suite")
  while [ -n "$queue" ]; do
    set -- $queue
    p=$1
    shift
    queue="$*"
    case "$seen" in *" $p "*) continue ;; esac
    seen+="$p "
    pkgs+=("$p")
    deps=$(depends "$p")
    queue="$queue $deps"
  done
  rm -rf "$aptdir/debs" "$root"
  mkdir -p "$aptdir/debs" "$root"
  (cd "$aptdir/debs" && apt-get "${apt[@]}" -qq download "${pkgs[@]}")
  for deb in "$aptdir"/debs/*.deb; do dpkg-deb -x "$deb" "$root"; done
  rm -rf "$aptdir/debs" "$aptdir/cache" "$aptdir/lists"

  local ld="$root/usr/lib/$triplet/ld-linux-x86-64.so.2"
  [ -e "$ld" ] || ld=$(find "$root" -name 'ld-linux*.so.*' -print -quit)
  [ -n "$ld" ] && [ -e "$ld" ] || { echo "no dynamic loader in $root" >&2; return 1; }
  cp "$root/usr/sbin/haproxy" "$bin.tmp"
  patchelf --set-interpreter "$ld" --force-rpath \
    --set-rpath "$root/usr/lib/$triplet:$root/lib/$triplet" "$bin.tmp"
  if ! version_ok "$bin.tmp" "$series"; then
    echo "haproxy from $suite does not run as $series.x:" >&2
    "$bin.tmp" -v >&2 || true
    rm -f "$bin.tmp"
    return 1
  fi
  mv "$bin.tmp" "$bin"
  echo "$(first_line "$bin") (from $suite: $bin)"
}

# depends PKG: the shared-library packages PKG depends on in the private configuration (names only).
depends() {
  apt-cache "${apt[@]}" show "$1" 2>/dev/null | awk '/^Depends:/ {sub(/^Depends: /, ""); print; exit}' |
    tr ',' '\n' | sed -e 's/|.*//' -e 's/(.*)//' -e 's/:any//' -e 's/[[:space:]]//g' |
    { grep -E '^(lib|zlib)' || true; } | sort -u | tr '\n' ' '
}

for spec in "$@"; do
  fetch "${spec%%:*}" "${spec#*:}"
done
