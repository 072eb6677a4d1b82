//go:build e2e

// Package image tests haroute's container image from the outside, as a cluster would run it: it
// builds the repository's Dockerfile with podman (FROM scratch, so nothing is pulled from a
// registry), checks that the image holds the static binary alone and runs as uid 65532, then runs
// its entrypoint with no network, a read-only root and no capabilities: `version`, and
// `run --once` on a manifest folder mounted read-only.
//
// The tests run as root with podman and runc on PATH and need bin/haroute-static: `make image-check`
// installs both from Debian's packages and builds the binary first. They use no haroute package:
// what is tested is the image, not the code in it.
package image
