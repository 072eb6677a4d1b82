//go:build e2e

package cluster

import (
	"crypto/x509"
	"fmt"

	"github.com/haroute/haroute/internal/testkit"
)

// verifyLeaf checks that the certificate resp came with verifies for host against ca.
func verifyLeaf(resp *testkit.Response, ca *testkit.CA, host string) error {
	leaf := resp.Leaf()
	if leaf == nil {
		return fmt.Errorf("no server certificate")
	}
	if _, err := leaf.Verify(x509.VerifyOptions{Roots: ca.Pool(), DNSName: host}); err != nil {
		return fmt.Errorf("served certificate (subject %q, serial %s) does not verify for %s: %w", leaf.Subject, leaf.SerialNumber, host, err)
	}
	return nil
}
