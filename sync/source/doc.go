// Package source produces the snapshots (mapping.Input) that haroute translates. LoadDir reads a folder
// of manifest files, the standalone and demo mode's stand-in for a cluster; watching the folder and the
// Kubernetes informers come later.
package source
