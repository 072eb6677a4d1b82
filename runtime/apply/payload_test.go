package apply

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/haroute/haroute/mapping/plan"
	"github.com/haroute/haroute/mapping/render"
	"github.com/haroute/haroute/runtime/socket"
)

// pemBlocks returns n PEM blocks of about size bytes each.
func pemBlocks(n, size int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "-----BEGIN CERTIFICATE-----\n%s\n-----END CERTIFICATE-----\n", strings.Repeat(string(rune('A'+i%26)), size))
	}
	return b.String()
}

// TestLongPEMs: a CA bundle longer than a payload may be goes in parts where HAProxy can append to a
// CA file (2.7+) and whole where payloads may exceed tune.bufsize (3.4+); where neither holds (2.6),
// and for a certificate on 2.6–3.3, the op fails before anything is sent for it, so the caller's
// reload loads the file instead of HAProxy dropping the connection half-way.
func TestLongPEMs(t *testing.T) {
	next := testConfig()
	paths, err := render.PathsFor(next, dir)
	if err != nil {
		t.Fatal(err)
	}
	limit := maxPayload(next.Settings.BufSize)
	ca, cert := next.CAFiles[0], next.Certificates[0]
	ca.PEM = pemBlocks(40, 1500) // about 61 kB: 4 parts of at most limit (16.5 kB)
	cert.PEM = pemBlocks(12, 1500) + "-----BEGIN PRIVATE KEY-----\nK\n-----END PRIVATE KEY-----\n"
	caPath := "/h/router/cacerts/ns:r.ca.pem"
	cases := []struct {
		ver       string
		op        plan.Op
		verbs     []string // the commands sent after show info, by their first three words
		unsupport bool
	}{
		{"2.6.12", plan.SetCAFile{CA: ca}, nil, true},
		{"3.0.11", plan.SetCAFile{CA: ca}, []string{"set ssl ca-file", "add ssl ca-file", "add ssl ca-file", "add ssl ca-file", "commit ssl ca-file"}, false},
		{"3.4.7", plan.SetCAFile{CA: ca}, []string{"set ssl ca-file", "commit ssl ca-file"}, false},
		{"3.2.26", plan.SetCertificate{Cert: cert}, nil, true},
		{"3.4.7", plan.SetCertificate{Cert: cert}, []string{"set ssl cert", "commit ssl cert"}, false},
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("%s %T", c.ver, c.op), func(t *testing.T) {
			f := &fakeHAProxy{ver: c.ver}
			_, err := Apply(context.Background(), f, next, paths, dir, []plan.Op{c.op})
			if c.unsupport != errors.Is(err, socket.ErrUnsupported) || (c.unsupport && !errors.Is(err, ErrReloadRequired)) {
				t.Fatalf("Apply: %v; want ErrUnsupported and ErrReloadRequired: %v", err, c.unsupport)
			}
			var verbs []string
			var sent strings.Builder
			for _, cmd := range f.sent[1:] {
				w := strings.Fields(cmd)
				verbs = append(verbs, strings.Join(w[:3], " "))
				if strings.HasPrefix(cmd, "set ssl ca-file") || strings.HasPrefix(cmd, "add ssl ca-file") {
					if !strings.Contains(cmd, caPath+" <<\n") {
						t.Errorf("%.80q does not name %s", cmd, caPath)
					}
					_, body, _ := strings.Cut(cmd, "\n")
					if len(body)+1 > limit && !strings.HasPrefix(c.ver, "3.4") {
						t.Errorf("a payload of %d bytes, over the limit of %d", len(body)+1, limit)
					}
					sent.WriteString(body + "\n")
				}
			}
			if strings.Join(verbs, ",") != strings.Join(c.verbs, ",") {
				t.Errorf("sent %q, want %q", verbs, c.verbs)
			}
			if _, ok := c.op.(plan.SetCAFile); ok && c.verbs != nil && sent.String() != ca.PEM {
				t.Errorf("the parts sent do not add up to the bundle (%d of %d bytes)", sent.Len(), len(ca.PEM))
			}
		})
	}
}

func TestSplitPEMRefusesOversizedBlock(t *testing.T) {
	if _, err := socket.SplitPEM(pemBlocks(1, 3000), 1000); !errors.Is(err, socket.ErrInvalid) {
		t.Errorf("SplitPEM of a 3 kB block under a 1 kB limit: %v, want ErrInvalid", err)
	}
	parts, err := socket.SplitPEM("junk before\n"+pemBlocks(3, 100)+"trailing text\n", 250)
	if err != nil || len(parts) != 3 || !strings.HasPrefix(parts[0], "junk before\n-----BEGIN") || !strings.HasSuffix(parts[2], "-----END CERTIFICATE-----\ntrailing text\n") {
		t.Errorf("SplitPEM = %q, %v; want 3 parts with the text around the blocks kept", parts, err)
	}
}
