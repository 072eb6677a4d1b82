package socket

import (
	"context"
	"errors"
	"reflect"
	"testing"
)

// certChain26 is HAProxy 2.6.12's answer to `show ssl cert <path>` for a file holding a leaf and the
// CA that issued it (the fixture cert.txt holds a leaf only).
const certChain26 = `Filename: /tmp/hx/router/certs/web_secure.pem
Status: Used
Serial: 3EACD069391A5780479C7D0E3BE5ECB8
notBefore: Nov 24 11:49:48 2026 GMT
notAfter: Nov 25 12:49:48 2026 GMT
Subject Alternative Name: DNS:secure.example.com, DNS:alt.example.com
Algorithm: EC256
SHA1 FingerPrint: DAB898DEBAB1F950EE2FF1B8F71D07D4C861B181
Subject: /CN=secure.example.com
Issuer: /O=haroute testbed/CN=router CA
Chain Subject: /O=haroute testbed/CN=router CA
Chain Issuer: /O=haroute testbed/CN=router CA
OCSP Response Key: 
`

// cert34 is HAProxy 3.4.7's answer for a leaf and its key in one file: the same lines as 2.6's, and
// more (file names, options) before them.
const cert34 = `Filename: /tmp/hx/conf/default_pub_keys.pem
Crt filename: /tmp/hx/conf/default_pub_keys.pem
Key filename: /tmp/hx/conf/default_pub_keys.pem
OCSP filename: /tmp/hx/conf/default_pub_keys.pem.ocsp
SCTL filename: /tmp/hx/conf/default_pub_keys.pem.sctl
Option: ocsp-update off
Option: jwt off
Status: Used
Serial: 27AF2348993B7348F6EA9F520FEC2BF8
notBefore: Nov 24 11:49:39 2026 GMT
notAfter: Nov 25 12:49:39 2026 GMT
Subject Alternative Name: DNS:default.router.test
Algorithm: EC256
SHA1 FingerPrint: F38A3A036125DC312E44333A3370D081BFDBFA7C
Subject: /CN=default.router.test
Issuer: /O=haroute testbed/CN=router CA
OCSP Response Key: 
`

func TestParseCertPaths(t *testing.T) {
	want := []string{"/tmp/hx/conf/a.pem", "/tmp/hx/conf/b.pem"}
	if got, err := ParseCertPaths(fixture(t, "certs.txt")); err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("ParseCertPaths = %q, %v", got, err)
	}
	// The transaction's "*<path>" line is not a loaded certificate; the path created by `new ssl
	// cert` is listed under "# filename" as well.
	want = append(want, "/tmp/hx/conf/n.pem")
	if got, err := ParseCertPaths(fixture(t, "certs_transaction.txt")); err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("ParseCertPaths(transaction) = %q, %v", got, err)
	}
	if got, err := ParseCertPaths("# filename\n"); err != nil || len(got) != 0 {
		t.Errorf("ParseCertPaths(no certificate) = %q, %v", got, err)
	}
	for _, bad := range []string{fixture(t, "help.txt"), "", "# transaction\n*/a.pem\n", "/a.pem\n# filename\n"} {
		if _, err := ParseCertPaths(bad); err == nil {
			t.Errorf("ParseCertPaths(%.60q) accepted", bad)
		}
	}
}

func TestParseCertDetails(t *testing.T) {
	got, err := ParseCertDetails(certChain26)
	want := CertDetails{
		CertInfo: CertInfo{
			Filename: "/tmp/hx/router/certs/web_secure.pem", Status: "Used", Serial: "3EACD069391A5780479C7D0E3BE5ECB8",
			NotBefore: "Nov 24 11:49:48 2026 GMT", NotAfter: "Nov 25 12:49:48 2026 GMT",
			SAN:         "DNS:secure.example.com, DNS:alt.example.com",
			Fingerprint: "DAB898DEBAB1F950EE2FF1B8F71D07D4C861B181", Subject: "/CN=secure.example.com",
			Issuer: "/O=haroute testbed/CN=router CA",
		},
		Algorithm:     "EC256",
		ChainSubjects: []string{"/O=haroute testbed/CN=router CA"},
		ChainIssuers:  []string{"/O=haroute testbed/CN=router CA"},
	}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("ParseCertDetails(chain) = %+v, %v; want %+v", got, err, want)
	}

	got, err = ParseCertDetails(cert34)
	if err != nil || got.Filename != "/tmp/hx/conf/default_pub_keys.pem" || got.Algorithm != "EC256" ||
		got.Subject != "/CN=default.router.test" || got.NotAfter != "Nov 25 12:49:39 2026 GMT" ||
		got.ChainSubjects != nil || got.ChainIssuers != nil {
		t.Errorf("ParseCertDetails(3.4) = %+v, %v", got, err)
	}

	if got, err := ParseCertDetails(fixture(t, "cert.txt")); err != nil || got.CertInfo != mustParseCert(t, fixture(t, "cert.txt")) {
		t.Errorf("ParseCertDetails(cert.txt) = %+v, %v; want ParseCert's fields", got, err)
	}
	if _, err := ParseCertDetails("Can't display the certificate: Not found or the certificate is a bundle!\n"); err == nil {
		t.Error("ParseCertDetails accepted the not-found answer")
	}
}

func mustParseCert(t *testing.T, reply string) CertInfo {
	t.Helper()
	c, err := ParseCert(reply)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestShowCertHelpers(t *testing.T) {
	ctx := context.Background()
	r := &scripted{replies: []string{fixture(t, "certs.txt"), certChain26}}
	paths, err := ShowCertPaths(ctx, r)
	if err != nil || len(paths) != 2 {
		t.Fatalf("ShowCertPaths = %q, %v", paths, err)
	}
	d, err := ShowCertDetails(ctx, r, `/tmp/hx/a\b.pem`)
	if err != nil || d.Algorithm != "EC256" {
		t.Errorf("ShowCertDetails = %+v, %v", d, err)
	}
	if want := []string{"show ssl cert", `show ssl cert /tmp/hx/a\\b.pem`}; !reflect.DeepEqual(r.sent, want) {
		t.Errorf("sent %q, want %q", r.sent, want)
	}

	cases := []struct {
		name  string
		reply string
		call  func(Runner) error
		want  error
	}{
		{"paths help", help, func(r Runner) error { _, err := ShowCertPaths(ctx, r); return err }, ErrUnexpectedReply},
		{"details help", help, func(r Runner) error { _, err := ShowCertDetails(ctx, r, "/x"); return err }, ErrUnexpectedReply},
		{"details unknown", "Can't display the certificate: Not found or the certificate is a bundle!\n",
			func(r Runner) error { _, err := ShowCertDetails(ctx, r, "/x"); return err }, ErrNotFound},
	}
	for _, c := range cases {
		if err := c.call(&scripted{replies: []string{c.reply}}); !errors.Is(err, c.want) {
			t.Errorf("%s: error %v, want %v", c.name, err, c.want)
		}
	}
	// A path HAProxy would read as two words, or as a second command, is refused before sending.
	for _, bad := range []string{"", "/a b.pem", "/a.pem;show info", "/a.pem\nshow info"} {
		r := &scripted{}
		if _, err := ShowCertDetails(ctx, r, bad); !errors.Is(err, ErrInvalid) || len(r.sent) != 0 {
			t.Errorf("ShowCertDetails(%q): error %v, sent %q; want ErrInvalid, nothing sent", bad, err, r.sent)
		}
	}
}
