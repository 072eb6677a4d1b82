//go:build e2e

// Package cluster holds haroute's end-to-end scenarios against a real kube-apiserver (see
// e2e/framework): one scenario per file.
package cluster

import (
	"os"
	"testing"

	"github.com/haroute/haroute/e2e/framework"
)

func TestMain(m *testing.M) {
	os.Exit(framework.Main(m))
}
