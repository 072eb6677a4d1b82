package model

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// TLSProfile is the TLS configuration of the listeners that terminate TLS (fe_sni, fe_no_sni): what
// OpenShift's ingress operator derives from an IngressController's tlsSecurityProfile and passes in
// SSL_MIN_VERSION, SSL_MAX_VERSION, ROUTER_CIPHERS, ROUTER_CIPHERSUITES and ROUTER_CURVES. The
// zero value renders none of these lines (HAProxy's and OpenSSL's defaults); mapping.DefaultOptions
// gives OpenShift's defaults (TLS 1.2 and newer, the intermediate cipher list).
type TLSProfile struct {
	// MinVersion and MaxVersion bound the protocol versions: one of TLSVersions, MaxVersion optional.
	MinVersion string `json:"minVersion,omitempty" yaml:"minVersion,omitempty"`
	MaxVersion string `json:"maxVersion,omitempty" yaml:"maxVersion,omitempty"`
	// Ciphers is the OpenSSL cipher list for TLS 1.2 and older, colon-separated
	// (ssl-default-bind-ciphers).
	Ciphers string `json:"ciphers,omitempty" yaml:"ciphers,omitempty"`
	// CipherSuites are the TLS 1.3 cipher suites, colon-separated (ssl-default-bind-ciphersuites).
	CipherSuites string `json:"cipherSuites,omitempty" yaml:"cipherSuites,omitempty"`
	// Curves are the key-exchange groups, colon-separated (ssl-default-bind-curves).
	Curves string `json:"curves,omitempty" yaml:"curves,omitempty"`
	// DHParamBits is tune.ssl.default-dh-param, the size of the DHE parameters (0: HAProxy's).
	DHParamBits int `json:"dhParamBits,omitempty" yaml:"dhParamBits,omitempty"`
}

// TLSVersions returns the protocol versions HAProxy's ssl-min-ver and ssl-max-ver accept, oldest
// first.
func TLSVersions() []string { return []string{"TLSv1.0", "TLSv1.1", "TLSv1.2", "TLSv1.3"} }

// Validate checks that every field can be written into haproxy.cfg as one word and means what it
// says: known versions, MinVersion not newer than MaxVersion, cipher, suite and group lists of
// OpenSSL's name characters, a DH size of 1024-8192 bits.
func (p TLSProfile) Validate() error {
	var errs []error
	add := func(format string, args ...any) { errs = append(errs, fmt.Errorf("TLS profile: "+format, args...)) }
	versions := TLSVersions()
	lo, hi := slices.Index(versions, p.MinVersion), slices.Index(versions, p.MaxVersion)
	if p.MinVersion != "" && lo < 0 {
		add("minimum version %q: want one of %s", p.MinVersion, strings.Join(versions, ", "))
	}
	if p.MaxVersion != "" && hi < 0 {
		add("maximum version %q: want one of %s", p.MaxVersion, strings.Join(versions, ", "))
	}
	if lo >= 0 && hi >= 0 && lo > hi {
		add("minimum version %s is newer than the maximum %s", p.MinVersion, p.MaxVersion)
	}
	for _, l := range []struct{ what, value, extra string }{
		{"ciphers", p.Ciphers, "-_:+!@=."},
		{"cipher suites", p.CipherSuites, "-_:"},
		{"curves", p.Curves, "-_:?"},
	} {
		if err := CheckTLSList(l.value, l.extra); err != nil {
			add("%s: %v", l.what, err)
		}
	}
	if p.DHParamBits != 0 && (p.DHParamBits < 1024 || p.DHParamBits > 8192) {
		add("DH parameter size %d: want 1024-8192", p.DHParamBits)
	}
	return errors.Join(errs...)
}

// CheckTLSList returns an error unless list is empty or a colon-separated list of non-empty items
// made of ASCII letters, digits and the characters of extra: OpenSSL's cipher strings and group
// names need nothing else, and nothing else can reach haproxy.cfg through them.
func CheckTLSList(list, extra string) error {
	if list == "" {
		return nil
	}
	if len(list) > 4096 {
		return fmt.Errorf("%d bytes: at most 4096", len(list))
	}
	for _, item := range strings.Split(list, ":") {
		if item == "" {
			return fmt.Errorf("%q: empty item", list)
		}
		if !onlyChars(item, strings.ReplaceAll(extra, ":", "")) {
			return fmt.Errorf("%q: item %q: only letters, digits and %q are allowed", list, item, strings.ReplaceAll(extra, ":", ""))
		}
	}
	return nil
}
