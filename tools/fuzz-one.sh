#!/bin/sh
# fuzz-one.sh GO PKG TARGET FUZZTIME MINIMIZE: one `go test -fuzz` run of TARGET in PKG.
#
# Go's fuzz coordinator before Go 1.27 can fail a run whose -fuzztime ends while a worker is still
# busy, with "context deadline exceeded" and no failing input (go.dev/issue/75804); a loaded 2-core
# machine makes it likely with short runs. Such a run, and only such a run (nothing written to
# testdata/fuzz, no other failure), is run once more; a second failure of any kind fails.
set -u
go=$1 pkg=$2 name=$3 fuzztime=$4 minimize=$5
log=$(mktemp)
trap 'rm -f "$log"' EXIT
run() {
	"$go" test -run '^$' -fuzz "^$name\$" -fuzztime "$fuzztime" -fuzzminimizetime "$minimize" "$pkg" >"$log" 2>&1
	status=$?
	cat "$log"
	return $status
}
run && exit 0
if grep -q 'context deadline exceeded' "$log" && ! grep -q 'Failing input written' "$log" &&
	[ "$(grep -c -- '--- FAIL' "$log")" -eq 1 ]; then
	echo "fuzz-one: $name hit the -fuzztime deadline race of Go's fuzz coordinator (go.dev/issue/75804), no failing input: running it once more"
	run && exit 0
fi
exit 1
