package plan_test

import (
	"testing"

	"github.com/haroute/haroute/mapping"
	"github.com/haroute/haroute/mapping/model"
	"github.com/haroute/haroute/mapping/plan"
)

// withListener returns in with listener files.
func withListener(in mapping.Input, l model.ListenerFiles) mapping.Input {
	in.Listener = l
	return in
}

// TestListenerFilesAtRuntime: a rotated default certificate or CRL set is a runtime update (one
// SetListenerFile each); a file that appears or goes changes the listener lines, and a changed
// client CA bundle the CA names HAProxy sends: those are reloads (ListenerChanged).
func TestListenerFilesAtRuntime(t *testing.T) {
	c := loadCerts(t)
	in := baseInput(c)
	opts := testOptions(2)
	opts.ClientTLS = model.ClientTLS{Verify: model.ClientVerifyRequired}
	def1, def2 := c.example.cert+c.example.key, c.other.cert+c.other.key
	crl1, crl2 := "-----BEGIN X509 CRL-----\nAAAA\n-----END X509 CRL-----\n", "-----BEGIN X509 CRL-----\nBBBB\n-----END X509 CRL-----\n"
	base := model.ListenerFiles{DefaultCertificate: def1, ClientCA: c.ca, ClientCRL: crl1}
	applied := plan.WithPool(translate(t, withListener(in, base), opts))

	rotated := model.ListenerFiles{DefaultCertificate: def2, ClientCA: c.ca, ClientCRL: crl2}
	desired := translate(t, withListener(in, rotated), opts)
	p := plan.Compute(applied, desired)
	checkRuntimePlan(t, applied, desired, p)
	want := []plan.Op{
		plan.SetListenerFile{File: plan.DefaultCertificateFile, PEM: def2},
		plan.SetListenerFile{File: plan.ClientCRLFile, PEM: crl2},
	}
	if len(p.Ops) != len(want) {
		t.Fatalf("rotation: want %d ops, got:\n%s", len(want), opsText(p.Ops))
	}
	for i := range want {
		if p.Ops[i] != want[i] {
			t.Errorf("op %d: %s, want %s", i, p.Ops[i], want[i])
		}
	}
	if p.Next.Listener != rotated {
		t.Error("Next does not carry the rotated listener files")
	}

	// Nothing else changed: a delta plan would not see the files; it declines and Compute plans.
	if _, ok := plan.ComputeDelta(p.Next, desired, translate(t, withListener(in, base), opts), nil, plan.Options{}); ok {
		t.Error("ComputeDelta planned a change of listener files")
	}

	for name, l := range map[string]model.ListenerFiles{
		"CRLs go":                               {DefaultCertificate: def1, ClientCA: c.ca},
		"default certificate is the renderer's": {ClientCA: c.ca, ClientCRL: crl1},
	} {
		p := plan.Compute(applied, translate(t, withListener(in, l), opts))
		if !p.NeedsReload() || p.Reason().Kind != plan.ListenerChanged {
			t.Errorf("%s: want a ListenerChanged reload, got %v / %s", name, p.Structural, opsText(p.Ops))
		}
	}
}
