package clientca

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// source is the CRL state of one certificate of the bundle that has distribution points.
type source struct {
	subject string
	urls    []string
	// crl is the CRL held, nil before the first download; from is the URL it came from.
	crl  *x509.RevocationList
	from string
	// refreshAt is when crl is downloaded again.
	refreshAt time.Time
	// failures counts the attempts since the last success; retryAt is when to try again.
	failures int
	retryAt  time.Time
	lastErr  error
}

// usable tells whether the CRL held is valid at now.
func (s *source) usable(now time.Time) bool {
	return s.crl != nil && (s.crl.NextUpdate.IsZero() || now.Before(s.crl.NextUpdate))
}

// download is the result of one GET, shared by the certificates that name the same URL.
type download struct {
	crl *x509.RevocationList
	err error
}

// keepSources makes m.sources the certificates of b with distribution points, keeping the state of
// those already known.
func (m *Manager) keepSources(b *bundle) {
	next := make(map[[sha256.Size]byte]*source, len(b.withCDP))
	m.order = m.order[:0]
	for _, c := range b.withCDP {
		key := sha256.Sum256(c.Raw)
		m.order = append(m.order, key)
		if s, ok := m.sources[key]; ok {
			next[key] = s
			continue
		}
		next[key] = &source{subject: c.Subject.String(), urls: c.CRLDistributionPoints}
	}
	m.sources = next
}

// refresh downloads the CRLs that are missing or due.
func (m *Manager) refresh(ctx context.Context, b *bundle, now time.Time) {
	got := map[string]download{}
	for _, c := range b.withCDP {
		s := m.sources[sha256.Sum256(c.Raw)]
		due := s.crl == nil || !now.Before(s.refreshAt)
		if !due || now.Before(s.retryAt) {
			continue
		}
		crl, from, err := m.fetch(ctx, s, b, now, got)
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			s.failures++
			s.retryAt = m.retryTime(s, now)
			s.lastErr = err
			if s.usable(now) {
				m.log.Warn("client CA: CRL refresh failed; the CRL held is kept while valid",
					"subject", s.subject, "next_update", s.crl.NextUpdate, "retry_at", s.retryAt, "error", err)
			}
			continue
		}
		m.accept(s, crl, from, now)
	}
}

// fetch returns the first valid CRL of the distribution points of s.
func (m *Manager) fetch(ctx context.Context, s *source, b *bundle, now time.Time, got map[string]download) (*x509.RevocationList, string, error) {
	var errs []error
	for _, u := range s.urls {
		if !isHTTP(u) {
			errs = append(errs, fmt.Errorf("%s: only http distribution points are fetched", u))
			continue
		}
		d, ok := got[u]
		if !ok {
			d.crl, d.err = m.download(ctx, u)
			got[u] = d
		}
		if d.err == nil {
			d.err = m.check(d.crl, b, now, u)
		}
		if d.err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", u, d.err))
			continue
		}
		return d.crl, u, nil
	}
	return nil, "", errors.Join(errs...)
}

// isHTTP tells whether u is an http URL.
func isHTTP(u string) bool {
	p, err := url.Parse(u)
	return err == nil && strings.EqualFold(p.Scheme, "http") && p.Host != ""
}

// download GETs one CRL, PEM or DER.
func (m *Manager) download(ctx context.Context, u string) (*x509.RevocationList, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, fmt.Errorf("request: %w", err)
	}
	resp, err := m.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("download: %w", err)
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("download: unexpected HTTP status %s", resp.Status)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxCRLBytes+1))
	if err != nil {
		return nil, fmt.Errorf("download: %w", err)
	}
	if len(body) > maxCRLBytes {
		return nil, fmt.Errorf("download: CRL larger than %d bytes", maxCRLBytes)
	}
	return parseCRL(body)
}

// parseCRL parses a CRL in PEM or DER.
func parseCRL(body []byte) (*x509.RevocationList, error) {
	if block, _ := pem.Decode(body); block != nil {
		if block.Type != "X509 CRL" {
			return nil, fmt.Errorf("parse: PEM block of type %q, not X509 CRL", block.Type)
		}
		body = block.Bytes
	}
	crl, err := x509.ParseRevocationList(body)
	if err != nil {
		return nil, fmt.Errorf("parse: %w", err)
	}
	return crl, nil
}

// check refuses an expired CRL, or one whose issuer is in b but did not sign it.
func (m *Manager) check(crl *x509.RevocationList, b *bundle, now time.Time, u string) error {
	if !crl.NextUpdate.IsZero() && !now.Before(crl.NextUpdate) {
		return fmt.Errorf("CRL expired at %s", crl.NextUpdate.UTC().Format(time.RFC3339))
	}
	issuers := b.bySubject[string(crl.RawIssuer)]
	if len(issuers) == 0 {
		m.log.Warn("client CA: CRL issuer not in the bundle; its signature is left to HAProxy",
			"url", u, "issuer", crl.Issuer.String())
		return nil
	}
	var errs []error
	for _, c := range issuers {
		err := crl.CheckSignatureFrom(c)
		if err == nil {
			return nil
		}
		errs = append(errs, err)
	}
	return fmt.Errorf("CRL signature not verified by its issuer %q in the bundle: %w", crl.Issuer.String(), errors.Join(errs...))
}

// accept takes a downloaded CRL unless it is not newer than the one held, and schedules the next
// download.
func (m *Manager) accept(s *source, crl *x509.RevocationList, from string, now time.Time) {
	switch {
	case s.crl == nil || newer(crl, s.crl):
		m.log.Info("client CA: CRL downloaded", "subject", s.subject, "url", from,
			"this_update", crl.ThisUpdate, "next_update", crl.NextUpdate, "revoked", len(crl.RevokedCertificateEntries))
		s.crl, s.from = crl, from
	case !bytes.Equal(crl.Raw, s.crl.Raw):
		m.log.Warn("client CA: the CRL served is not newer than the one held; kept the one held",
			"subject", s.subject, "url", from, "served_this_update", crl.ThisUpdate, "held_this_update", s.crl.ThisUpdate)
	}
	s.lastErr = nil
	s.refreshAt = m.refreshTime(s.crl, now)
	if now.Before(s.refreshAt) {
		s.failures, s.retryAt = 0, time.Time{}
		return
	}
	// Within the margin before nextUpdate and nothing newer published yet: ask again later.
	s.failures++
	s.retryAt = m.retryTime(s, now)
}

// newer tells whether a was issued after b.
func newer(a, b *x509.RevocationList) bool {
	if a.Number != nil && b.Number != nil && a.Number.Cmp(b.Number) != 0 {
		return a.Number.Cmp(b.Number) > 0
	}
	return a.ThisUpdate.After(b.ThisUpdate)
}

// refreshTime is when a CRL downloaded at now is downloaded again: a margin before its nextUpdate,
// and at the latest maxAge later.
func (m *Manager) refreshTime(crl *x509.RevocationList, now time.Time) time.Time {
	at := now.Add(m.maxAge)
	if crl.NextUpdate.IsZero() {
		return at
	}
	margin := min(max(crl.NextUpdate.Sub(crl.ThisUpdate)/10, minMargin), maxMargin)
	if t := crl.NextUpdate.Add(-margin); t.Before(at) {
		at = t
	}
	return at
}

// retryTime is when to try s again after a failure at now: after the backoff, but not after the
// nextUpdate of the CRL held while it is still ahead.
func (m *Manager) retryTime(s *source, now time.Time) time.Time {
	at := now.Add(backoff(s.failures))
	if s.crl != nil && !s.crl.NextUpdate.IsZero() && now.Before(s.crl.NextUpdate) && s.crl.NextUpdate.Before(at) {
		at = s.crl.NextUpdate
	}
	return at
}

// nextDue is when the next download is due; zero when there is no CRL to keep.
func (m *Manager) nextDue() time.Time {
	var due time.Time
	for _, key := range m.order {
		s := m.sources[key]
		at := s.retryAt
		if s.crl != nil && s.refreshAt.After(at) {
			at = s.refreshAt
		}
		if due.IsZero() || at.Before(due) {
			due = at
		}
	}
	return due
}

// unusable reports the certificates with distribution points that have no valid CRL at now.
func (m *Manager) unusable(now time.Time) error {
	var errs []error
	for _, key := range m.order {
		s := m.sources[key]
		if s.usable(now) {
			continue
		}
		err := s.lastErr
		if err == nil && s.crl != nil {
			err = fmt.Errorf("the CRL held, from %s, expired at %s", s.from, s.crl.NextUpdate.UTC().Format(time.RFC3339))
		}
		if err == nil {
			err = errors.New("not downloaded yet")
		}
		errs = append(errs, &CRLError{Subject: s.subject, URLs: s.urls, Err: err})
	}
	return errors.Join(errs...)
}

// crlContent returns the PEM of the CRLs held, each once, in bundle order, and those CRLs.
func (m *Manager) crlContent(b *bundle) ([]byte, []*x509.RevocationList) {
	var buf bytes.Buffer
	var held []*x509.RevocationList
	seen := map[[sha256.Size]byte]bool{}
	for _, c := range b.withCDP {
		s := m.sources[sha256.Sum256(c.Raw)]
		if s.crl == nil {
			continue
		}
		key := sha256.Sum256(s.crl.Raw)
		if seen[key] {
			continue
		}
		seen[key] = true
		held = append(held, s.crl)
		_ = pem.Encode(&buf, &pem.Block{Type: "X509 CRL", Bytes: s.crl.Raw})
	}
	return buf.Bytes(), held
}

// uncovered returns the subjects of the CA certificates of b that signed none of crls.
func uncovered(b *bundle, crls []*x509.RevocationList) []string {
	var out []string
	for _, c := range b.certs {
		if !c.IsCA {
			continue
		}
		covered := false
		for _, crl := range crls {
			if bytes.Equal(crl.RawIssuer, c.RawSubject) && crl.CheckSignatureFrom(c) == nil {
				covered = true
				break
			}
		}
		if !covered {
			out = append(out, c.Subject.String())
		}
	}
	return out
}
