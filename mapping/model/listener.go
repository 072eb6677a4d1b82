package model

import (
	"errors"
	"fmt"
	"regexp"
)

// ListenerFiles are the router-wide TLS files of the terminating listeners (fe_sni, fe_no_sni): the
// default certificate and, for mutual TLS, the client CA bundle and its revocation lists. Unlike the
// settings they change while the router runs (the Secret or ConfigMap behind them is updated in
// place), and HAProxy takes a new content at runtime: `set ssl cert`, `set ssl ca-file` and
// `set ssl crl-file`, each committed. Only a ClientCRL that appears or disappears changes the listener
// lines, and needs a reload.
type ListenerFiles struct {
	// DefaultCertificate is the PEM bundle (certificate, chain, key) served when no Route certificate
	// matches; empty: the renderer's (render.Options.DefaultCertificatePEM).
	DefaultCertificate string `json:"defaultCertificate,omitempty" yaml:"defaultCertificate,omitempty"`
	// ClientCA is the PEM bundle of the CAs that sign client certificates (ClientTLS.Verify set).
	ClientCA string `json:"clientCA,omitempty" yaml:"clientCA,omitempty"`
	// ClientCRL are the PEM revocation lists of those CAs; empty: none is checked.
	ClientCRL string `json:"clientCRL,omitempty" yaml:"clientCRL,omitempty"`
}

// Validate checks that the files can be written and sent as runtime payloads: PEM without blank
// lines (a blank line ends a payload), a client CA exactly when client certificates are verified, and
// CRLs only with a client CA.
func (l ListenerFiles) Validate(c ClientTLS) error {
	var errs []error
	for _, f := range []struct{ what, pem string }{
		{"default certificate", l.DefaultCertificate}, {"client CA", l.ClientCA}, {"client CRL", l.ClientCRL},
	} {
		if f.pem != "" && HasBlankLine(f.pem) {
			errs = append(errs, fmt.Errorf("%s: PEM contains a blank line", f.what))
		}
	}
	switch {
	case c.Verify != "" && l.ClientCA == "":
		errs = append(errs, errors.New("client certificates are verified, but there is no client CA"))
	case c.Verify == "" && (l.ClientCA != "" || l.ClientCRL != ""):
		errs = append(errs, errors.New("a client CA or CRL without client certificate verification"))
	}
	return errors.Join(errs...)
}

// ClientTLS is mutual TLS on the terminating listeners (ROUTER_MUTUAL_TLS_AUTH and friends): the
// zero value asks for no client certificate.
type ClientTLS struct {
	// Verify is ClientVerifyOptional or ClientVerifyRequired; empty: no client certificate asked.
	Verify string `json:"verify,omitempty" yaml:"verify,omitempty"`
	// Filter is a regular expression (PCRE, as HAProxy's -m reg) that the subject DN of the client
	// certificate must match (ROUTER_MUTUAL_TLS_AUTH_FILTER); requests that do not are denied.
	Filter string `json:"filter,omitempty" yaml:"filter,omitempty"`
}

// Client certificate policies (ClientTLS.Verify).
const (
	ClientVerifyOptional = "optional"
	ClientVerifyRequired = "required"
)

// MaxClientFilter bounds the subject filter: one line of haproxy.cfg holds it.
const MaxClientFilter = 4096

// Validate checks the policy and that the filter compiles and can stand as one word of haproxy.cfg
// (CheckClientFilter).
func (c ClientTLS) Validate() error {
	var errs []error
	switch c.Verify {
	case "", ClientVerifyOptional, ClientVerifyRequired:
	default:
		errs = append(errs, fmt.Errorf("client TLS: verify %q: want %s or %s", c.Verify, ClientVerifyOptional, ClientVerifyRequired))
	}
	if c.Filter != "" {
		if c.Verify == "" {
			errs = append(errs, errors.New("client TLS: a subject filter without client certificates"))
		}
		if err := CheckClientFilter(c.Filter); err != nil {
			errs = append(errs, fmt.Errorf("client TLS: %w", err))
		}
	}
	return errors.Join(errs...)
}

// CheckClientFilter returns an error unless f is a regular expression of at most MaxClientFilter
// printable ASCII characters without a single quote: the template writes it in single quotes, where
// HAProxy takes every character as it is ('$' and '\' included). It must compile with Go's regexp
// (RE2), the common subset of the PCRE HAProxy matches with; PCRE-only forms such as look-arounds are
// refused.
func CheckClientFilter(f string) error {
	if f == "" || len(f) > MaxClientFilter {
		return fmt.Errorf("subject filter of %d bytes: want 1-%d", len(f), MaxClientFilter)
	}
	for i := 0; i < len(f); i++ {
		if c := f[i]; c < ' ' || c >= 0x7f || c == '\'' {
			return fmt.Errorf("subject filter %q: contains a control or non-ASCII character or a single quote", f)
		}
	}
	if _, err := regexp.Compile(f); err != nil {
		return fmt.Errorf("subject filter %q: %w", f, err)
	}
	return nil
}
