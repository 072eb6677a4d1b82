package socket

import (
	"context"
	"fmt"
	"strings"
)

// Read-only helpers for a view of the live HAProxy (inspect/dataplane): the list of loaded
// certificates, and everything `show ssl cert <path>` tells about one of them. Like the other
// helpers they check the reply and return a *CommandError otherwise.

// ShowCertPaths returns the paths of the certificates HAProxy holds (`show ssl cert` without a path),
// in HAProxy's order. The "# transaction" section HAProxy prints while a `set ssl cert` is not yet
// committed is left out: its path is a pending change, not a loaded certificate (a certificate
// created by `new ssl cert` is listed under "# filename" too as soon as it exists).
func ShowCertPaths(ctx context.Context, r Runner) ([]string, error) {
	const cmd = "show ssl cert"
	reply, err := r.Command(ctx, cmd)
	if err != nil {
		return nil, err
	}
	paths, err := ParseCertPaths(reply)
	if err != nil {
		return nil, parseError(cmd, reply, err)
	}
	return paths, nil
}

// ParseCertPaths parses `show ssl cert`: an optional "# transaction" section ("*<path>" lines), then
// the "# filename" section with one path per line; it returns the paths of the "# filename" section.
// An empty section (no certificate loaded) is an empty list; a reply without the "# filename" header,
// or with a line outside a known section, is refused.
func ParseCertPaths(reply string) ([]string, error) {
	var out []string
	section, seenFilename := "", false
	for _, l := range splitLines(reply) {
		if name, ok := strings.CutPrefix(l, "# "); ok {
			section = name
			seenFilename = seenFilename || name == "filename"
			continue
		}
		switch section {
		case "filename":
			out = append(out, l)
		case "transaction":
		default:
			return nil, fmt.Errorf("show ssl cert: line %q outside a known section", l)
		}
	}
	if !seenFilename {
		return nil, fmt.Errorf("show ssl cert: no \"# filename\" line")
	}
	return out, nil
}

// CertDetails is everything haroute reads from `show ssl cert <path>`: CertInfo, and the lines
// CertInfo leaves out.
type CertDetails struct {
	CertInfo
	// Algorithm is the key's algorithm and size, e.g. "EC256" or "RSA2048".
	Algorithm string
	// ChainSubjects and ChainIssuers list the subject and the issuer of every further certificate of
	// the file (intermediates, or a bundled CA), in file order; empty when the file holds the leaf
	// only.
	ChainSubjects []string
	ChainIssuers  []string
}

// ParseCertDetails parses `show ssl cert <path>` ("Name: value" lines; HAProxy repeats "Chain
// Subject" and "Chain Issuer" once per chain certificate). It refuses what ParseCert refuses.
// Checked on 2.6, 3.0, 3.2 and 3.4: 3.4 adds lines (Crt filename, Option: …) that are ignored.
func ParseCertDetails(reply string) (CertDetails, error) {
	info, err := ParseCert(reply)
	if err != nil {
		return CertDetails{}, err
	}
	d := CertDetails{CertInfo: info}
	for _, l := range splitLines(reply) {
		name, value, ok := strings.Cut(l, ":")
		if !ok {
			continue
		}
		value = strings.TrimSpace(value)
		switch name {
		case "Algorithm":
			if d.Algorithm == "" {
				d.Algorithm = value
			}
		case "Chain Subject":
			d.ChainSubjects = append(d.ChainSubjects, value)
		case "Chain Issuer":
			d.ChainIssuers = append(d.ChainIssuers, value)
		}
	}
	return d, nil
}

// ShowCertDetails returns what `show ssl cert <certPath>` tells about a loaded certificate.
// ErrNotFound when the path is not loaded.
func ShowCertDetails(ctx context.Context, r Runner, certPath string) (CertDetails, error) {
	cmd, err := line("show", "ssl", "cert", certPath)
	if err != nil {
		return CertDetails{}, err
	}
	reply, err := r.Command(ctx, cmd)
	if err != nil {
		return CertDetails{}, err
	}
	d, err := ParseCertDetails(reply)
	if err != nil {
		return CertDetails{}, parseError(cmd, reply, err)
	}
	return d, nil
}
