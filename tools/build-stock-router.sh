#!/usr/bin/env bash
# build-stock-router.sh OUT: the stock OpenShift router (github.com/openshift/router) for e2e/bench.
#
# OUT receives what the benchmark's StartStockRouter runs (HAROUTE_BENCH_STOCK=OUT):
#   openshift-router          the router binary (go build -mod=vendor ./cmd/openshift-router)
#   haproxy-config.template   its HAProxy template
#   reload-haproxy            its reload script
#   error-page-*.http         its error pages
#   COMMIT                    the source commit (or "unknown" for a source that is no git checkout)
#
# The source is STOCK_ROUTER_SRC (a local checkout, used as it is) when set; otherwise the pinned
# commit below, fetched from STOCK_ROUTER_REPO (default https://github.com/openshift/router) into a
# cache directory, STOCK_ROUTER_CACHE (default ${XDG_CACHE_HOME:-~/.cache}/haroute/openshift-router),
# kept for the next build. The build uses the Go toolchain the repository's Makefile exports
# (GOTOOLCHAIN) and the router's vendored modules; GO names the go command (default go).
set -euo pipefail

# The pinned commit of github.com/openshift/router (2026-08-04, "Merge pull request #815").
readonly pinned_commit=4b401a86dccc657a8a5254c2794a312241f40e87

die() {
  echo "build-stock-router: $*" >&2
  exit 1
}

if [ "$#" -ne 1 ] || [ -z "$1" ]; then
  echo "usage: $0 OUT (the directory to put openshift-router, its template, reload script and error pages in)" >&2
  exit 2
fi
out=$(mkdir -p "$1" && cd "$1" && pwd) || die "cannot create the output directory $1"
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
go=${GO:-go}
command -v "$go" >/dev/null 2>&1 || die "no go command ($go): install Go 1.21 or newer, or set GO"

# The toolchain every build of the repository uses (the Makefile's `export GOTOOLCHAIN := …`).
toolchain=$(sed -n 's/^export GOTOOLCHAIN := *//p' "$root/Makefile")
[ -n "$toolchain" ] || die "no 'export GOTOOLCHAIN := …' line in $root/Makefile"

# fetch_pinned DIR: DIR becomes a checkout of the pinned commit (cloned or fetched when missing).
fetch_pinned() {
  local dir=$1 repo=${STOCK_ROUTER_REPO:-https://github.com/openshift/router}
  command -v git >/dev/null 2>&1 || die "git is needed to fetch $repo (or set STOCK_ROUTER_SRC to a local checkout)"
  if [ ! -d "$dir/.git" ]; then
    echo "build-stock-router: cloning $repo into $dir" >&2
    rm -rf "$dir.partial"
    mkdir -p "$(dirname "$dir")"
    # Blobs are fetched for the checked-out commit only (a local repository ignores the filter).
    git clone --quiet --no-checkout --filter=blob:none "$repo" "$dir.partial" || die "git clone $repo failed"
    mv "$dir.partial" "$dir"
  fi
  if ! git -C "$dir" cat-file -e "$pinned_commit^{commit}" 2>/dev/null; then
    echo "build-stock-router: fetching $pinned_commit from $repo" >&2
    git -C "$dir" fetch --quiet "$repo" "$pinned_commit" ||
      git -C "$dir" fetch --quiet "$repo" ||
      die "cannot fetch commit $pinned_commit from $repo"
  fi
  git -C "$dir" -c advice.detachedHead=false checkout --quiet --force "$pinned_commit" ||
    die "cannot check out $pinned_commit in $dir"
}

if [ -n "${STOCK_ROUTER_SRC:-}" ]; then
  src=$(cd "$STOCK_ROUTER_SRC" 2>/dev/null && pwd) || die "STOCK_ROUTER_SRC=$STOCK_ROUTER_SRC is no directory"
else
  src=${STOCK_ROUTER_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/haroute/openshift-router}
  fetch_pinned "$src"
fi
src=$(cd "$src" && pwd -P)

conf=$src/images/router/haproxy/conf
reload=$src/images/router/haproxy/reload-haproxy
for f in "$src/cmd/openshift-router" "$src/vendor" "$conf/haproxy-config.template" "$reload"; do
  [ -e "$f" ] || die "$src is no openshift/router checkout: $f is missing"
done

commit=unknown
if [ "$(git -C "$src" rev-parse --show-toplevel 2>/dev/null)" = "$src" ]; then
  commit=$(git -C "$src" rev-parse HEAD)
fi
if [ "$commit" != "$pinned_commit" ]; then
  echo "build-stock-router: warning: $src is at $commit, not the pinned $pinned_commit" >&2
fi

echo "build-stock-router: building openshift-router at $commit with $toolchain (takes a few minutes the first time)" >&2
(cd "$src" && GOTOOLCHAIN=$toolchain GOFLAGS=-mod=vendor "$go" build -mod=vendor -o "$out/openshift-router" ./cmd/openshift-router) ||
  die "go build ./cmd/openshift-router in $src failed"

pages=("$conf"/error-page-*.http)
[ -e "${pages[0]}" ] || die "no error pages (error-page-*.http) in $conf"
install -m 0644 "$conf/haproxy-config.template" "${pages[@]}" "$out/"
install -m 0755 "$reload" "$out/reload-haproxy"
echo "$commit" >"$out/COMMIT"
echo "build-stock-router: $out holds openshift-router ($commit), haproxy-config.template, reload-haproxy and ${#pages[@]} error pages" >&2
