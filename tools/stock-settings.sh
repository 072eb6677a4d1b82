#!/usr/bin/env bash
# stock-settings.sh: list the settings the stock OpenShift router reads (tools/stocksettings) into
# mapping/compat/testdata/stock-settings.txt, which mapping/compat's tests hold the compatibility table
# against.
#
# The sources are local checkouts, used as they are (nothing is fetched):
#   STOCK_ROUTER_SRC    github.com/openshift/router (the pinned commit: see tools/build-stock-router.sh)
#   STOCK_OPERATOR_SRC  github.com/openshift/cluster-ingress-operator (its pkg/ is enough)
# The list's header records each checkout's commit. GO names the go command (default go).
set -euo pipefail

die() {
  echo "stock-settings: $*" >&2
  exit 1
}

[ -n "${STOCK_ROUTER_SRC:-}" ] || die "set STOCK_ROUTER_SRC to a checkout of github.com/openshift/router"
[ -n "${STOCK_OPERATOR_SRC:-}" ] || die "set STOCK_OPERATOR_SRC to a checkout of github.com/openshift/cluster-ingress-operator"
[ -d "$STOCK_ROUTER_SRC" ] || die "STOCK_ROUTER_SRC=$STOCK_ROUTER_SRC: no such directory"
[ -d "$STOCK_OPERATOR_SRC" ] || die "STOCK_OPERATOR_SRC=$STOCK_OPERATOR_SRC: no such directory"

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
out=$root/mapping/compat/testdata/stock-settings.txt
go=${GO:-go}

cd "$root"
trap 'rm -f "$out.tmp"' EXIT
"$go" run ./tools/stocksettings -router "$STOCK_ROUTER_SRC" -operator "$STOCK_OPERATOR_SRC" -o "$out.tmp"
mv "$out.tmp" "$out"
echo "stock-settings: wrote ${out#"$root"/}"
