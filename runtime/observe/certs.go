package observe

import (
	"cmp"
	"context"
	"crypto/sha1"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/haroute/haroute/mapping/model"
	"github.com/haroute/haroute/mapping/render"
	"github.com/haroute/haroute/runtime/socket"
)

// markerPrefix starts the text that stands in for a PEM HAProxy does not hold as applied. It is no
// PEM, so a comparison with the applied PEM always sees a difference.
const markerPrefix = "# haroute observed: "

// certMarker stands in for the PEM of a live certificate whose fingerprint is not the applied one.
func certMarker(fingerprint string) string {
	if fingerprint == "" {
		return markerPrefix + "live certificate of unknown fingerprint\n"
	}
	return markerPrefix + "live certificate sha1 " + fingerprint + "\n"
}

// caMarker stands in for the PEM of a live CA file whose certificate count is not the applied one.
func caMarker(count int) string {
	return markerPrefix + "live CA file with " + strconv.Itoa(count) + " certificate(s)\n"
}

// isMarker reports whether pem is a marker of Observe.
func isMarker(pem string) bool { return strings.HasPrefix(pem, markerPrefix) }

// leafSHA1 returns the SHA-1 fingerprint (upper-case hex, as HAProxy shows it) of the first
// certificate of a PEM bundle, or "" when it holds none.
func leafSHA1(bundle string) string {
	rest := []byte(bundle)
	for {
		var b *pem.Block
		b, rest = pem.Decode(rest)
		if b == nil {
			return ""
		}
		if b.Type == "CERTIFICATE" {
			sum := sha1.Sum(b.Bytes)
			return strings.ToUpper(hex.EncodeToString(sum[:]))
		}
	}
}

// countCertificates returns the number of CERTIFICATE blocks of a PEM bundle.
func countCertificates(bundle string) int {
	n := 0
	rest := []byte(bundle)
	for {
		var b *pem.Block
		b, rest = pem.Decode(rest)
		if b == nil {
			return n
		}
		if b.Type == "CERTIFICATE" {
			n++
		}
	}
}

// normalizeFingerprint makes "bf:ad:…" and "BFAD…" comparable.
func normalizeFingerprint(fp string) string {
	return strings.ToUpper(strings.ReplaceAll(strings.TrimSpace(fp), ":", ""))
}

// crtListLine is one parsed line of `show ssl crt-list <file>`.
type crtListLine struct {
	Path string
	ALPN string
	SNI  []string
}

// parseCrtListLine parses "<path> [<ssl options>] [<sni filter>...]"; HAProxy 2.6 shows the options
// as e.g. "[alpn h2,http/1.1 ]". Of the options only alpn is kept.
func parseCrtListLine(line string) (crtListLine, error) {
	var l crtListLine
	line = strings.TrimSpace(line)
	rest := line
	l.Path, rest, _ = strings.Cut(rest, " ")
	if l.Path == "" {
		return l, fmt.Errorf("empty crt-list line")
	}
	rest = strings.TrimSpace(rest)
	if strings.HasPrefix(rest, "[") {
		end := strings.Index(rest, "]")
		if end < 0 {
			return l, fmt.Errorf("crt-list line %q: unterminated options", line)
		}
		opts := strings.Fields(rest[1:end])
		for i := 0; i < len(opts); i++ {
			if opts[i] == "alpn" && i+1 < len(opts) {
				l.ALPN = opts[i+1]
				i++
			}
		}
		rest = rest[end+1:]
	}
	l.SNI = strings.Fields(rest)
	slices.Sort(l.SNI)
	return l, nil
}

// observeCertificates replaces the certificates of obs with the ones of the live crt-list.
func observeCertificates(ctx context.Context, r socket.Runner, obs *model.Config, paths render.RuntimePaths) error {
	lines, err := socket.ShowCrtList(ctx, r, paths.CertList)
	if errors.Is(err, socket.ErrNotFound) && len(obs.Certificates) == 0 {
		return nil
	}
	if errors.Is(err, socket.ErrNotFound) {
		return fmt.Errorf("%w: HAProxy has no crt-list %s: %v", ErrStructuralDrift, paths.CertList, err)
	}
	if err != nil {
		return fmt.Errorf("crt-list %s: %w", paths.CertList, err)
	}
	live := map[string]crtListLine{}
	for _, line := range lines {
		l, err := parseCrtListLine(line)
		if err != nil {
			return fmt.Errorf("crt-list %s: %w", paths.CertList, err)
		}
		if path.Dir(l.Path) != paths.CertDir {
			continue // not a Route certificate (e.g. a template's own)
		}
		if _, dup := live[path.Base(l.Path)]; !dup {
			live[path.Base(l.Path)] = l
		}
	}
	var certs []model.Certificate
	for _, c := range obs.Certificates {
		l, ok := live[c.Name]
		if !ok {
			continue
		}
		delete(live, c.Name)
		fp, _, err := socket.ShowCert(ctx, r, l.Path)
		if err != nil {
			return fmt.Errorf("certificate %s: %w", c.Name, err)
		}
		c.SNI, c.ALPN = l.SNI, l.ALPN
		if normalizeFingerprint(fp) != leafSHA1(c.PEM) {
			c.PEM = certMarker(normalizeFingerprint(fp))
		}
		certs = append(certs, c)
	}
	for name, l := range live {
		fp, _, err := socket.ShowCert(ctx, r, l.Path)
		if err != nil && !errors.Is(err, socket.ErrNotFound) {
			return fmt.Errorf("certificate %s: %w", name, err)
		}
		certs = append(certs, model.Certificate{Name: name, PEM: certMarker(normalizeFingerprint(fp)), SNI: l.SNI, ALPN: l.ALPN})
	}
	slices.SortFunc(certs, func(a, b model.Certificate) int { return cmp.Compare(a.Name, b.Name) })
	obs.Certificates = certs
	return nil
}

// parseCAFiles parses `show ssl ca-file`: "# filename", then "<path> - <n> certificate(s)" per file.
func parseCAFiles(reply string) (map[string]int, error) {
	lines := strings.Split(strings.TrimRight(reply, "\n"), "\n")
	if len(lines) == 0 || strings.TrimSpace(lines[0]) != "# filename" {
		return nil, fmt.Errorf("no \"# filename\" header")
	}
	out := map[string]int{}
	for _, l := range lines[1:] {
		if strings.TrimSpace(l) == "" {
			continue
		}
		name, rest, ok := strings.Cut(l, " - ")
		count, _, ok2 := strings.Cut(rest, " ")
		n, err := strconv.Atoi(count)
		if !ok || !ok2 || err != nil {
			return nil, fmt.Errorf("malformed CA file line %q", l)
		}
		out[name] = n
	}
	return out, nil
}

// observeCAFiles checks the CA files that servers of obs's backends verify with (HAProxy loads a CA
// file only when a server uses it, or when it was stored at runtime): a file HAProxy does not hold is
// dropped from obs, one with another number of certificates gets a marker. Files under the CA
// directory that HAProxy holds but applied does not know are added with a marker. CA files no server
// uses are left as applied has them. (HAProxy 2.6 cannot show one CA file whose name holds a colon,
// as every Route's does, so the count of the listing is what is compared.)
func observeCAFiles(ctx context.Context, r socket.Runner, obs *model.Config, paths render.RuntimePaths) error {
	used := map[string]bool{}
	for _, b := range obs.Backends {
		if b.TLS != nil && len(b.Servers) > 0 {
			used[b.TLS.CAFile] = true
		}
	}
	if len(used) == 0 && len(obs.CAFiles) == 0 {
		return nil
	}
	const cmd = "show ssl ca-file"
	reply, err := r.Command(ctx, cmd)
	if err != nil {
		return fmt.Errorf("%s: %w", cmd, err)
	}
	live, err := parseCAFiles(reply)
	if err != nil {
		return &socket.CommandError{Command: cmd, Reply: reply, Err: fmt.Errorf("%w: %v", socket.ErrUnexpectedReply, err)}
	}
	var cas []model.CAFile
	known := map[string]bool{}
	for _, ca := range obs.CAFiles {
		known[ca.Name] = true
		n, loaded := live[path.Join(paths.CADir, ca.Name)]
		switch {
		case !used[ca.Name]:
		case !loaded:
			continue
		case n != countCertificates(ca.PEM):
			ca.PEM = caMarker(n)
		}
		cas = append(cas, ca)
	}
	for p, n := range live {
		if path.Dir(p) == paths.CADir && !known[path.Base(p)] {
			cas = append(cas, model.CAFile{Name: path.Base(p), PEM: caMarker(n)})
		}
	}
	slices.SortFunc(cas, func(a, b model.CAFile) int { return cmp.Compare(a.Name, b.Name) })
	obs.CAFiles = cas
	return nil
}

// observeListener checks the default certificate of the listener files (when applied has one): a
// live certificate whose fingerprint is not the applied one gets a marker, which a repair replaces
// with `set ssl cert`. The client CA and CRLs are not observed: HAProxy shows neither's content in a
// form to compare on every version.
func observeListener(ctx context.Context, r socket.Runner, obs *model.Config, paths render.RuntimePaths) error {
	pemData := obs.Listener.DefaultCertificate
	if pemData == "" || paths.DefaultCertificate == "" {
		return nil
	}
	fp, _, err := socket.ShowCert(ctx, r, paths.DefaultCertificate)
	if err != nil {
		return fmt.Errorf("default certificate: %w", err)
	}
	if normalizeFingerprint(fp) != leafSHA1(pemData) {
		obs.Listener.DefaultCertificate = certMarker(normalizeFingerprint(fp))
	}
	return nil
}
