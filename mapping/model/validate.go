package model

import (
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"sort"
	"strings"
)

// Validate checks the invariants every consumer relies on: names HAProxy accepts, no whitespace in map
// entries, sorted and unique collections, weights in range, parseable addresses. Translate only ever
// produces valid configs; Validate guards hand-made ones and custom code paths.
func (c *Config) Validate() error { return c.ValidateAfter(nil) }

// ValidateAfter is Validate for a config that follows prev, a config that passed Validate (nil: none),
// both read-only since: the parts c shares with prev — the very same backend at the same index, the
// very same lists of maps, certificates, CA files and Routes — are valid already and are not looked at
// again, so that a state that changed a few backends costs what changed. It fails exactly when
// Validate fails.
func (c *Config) ValidateAfter(prev *Config) error {
	var errs []error
	add := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if prev == nil {
		prev = &Config{}
	}

	errs = append(errs, c.ValidateSettings())
	if !same(c.Maps, prev.Maps) {
		if !sort.SliceIsSorted(c.Maps, func(i, j int) bool { return c.Maps[i].Name < c.Maps[j].Name }) {
			add("maps are not sorted by name")
		}
		for i := range c.Maps {
			if i > 0 && c.Maps[i-1].Name == c.Maps[i].Name {
				add("map %q: duplicate", c.Maps[i].Name)
			}
			errs = append(errs, c.Maps[i].Validate())
		}
	}
	aligned := len(c.Backends) == len(prev.Backends)
	renamed := !aligned // the backend names differ from prev's somewhere
	kept := false       // c.Backends[i-1] is prev's at i-1
	for i, b := range c.Backends {
		if b == nil {
			add("backend %d: nil", i)
			kept = false
			continue
		}
		same := aligned && prev.Backends[i] == b
		if (!same || !kept) && i > 0 && c.Backends[i-1] != nil && c.Backends[i-1].Name >= b.Name {
			add("backends not sorted or duplicate at %q", b.Name)
		}
		if kept = same; same {
			continue
		}
		renamed = renamed || prev.Backends[i] == nil || prev.Backends[i].Name != b.Name
		errs = append(errs, b.Validate())
	}
	if !same(c.Certificates, prev.Certificates) {
		errs = append(errs, ValidateCertificates(c.Certificates))
	}
	if !same(c.CAFiles, prev.CAFiles) {
		errs = append(errs, ValidateCAFiles(c.CAFiles))
	}
	if renamed || !same(c.Routes, prev.Routes) {
		backends := make(map[string]bool, len(c.Backends))
		for _, b := range c.Backends {
			if b != nil {
				backends[b.Name] = true
			}
		}
		for _, r := range c.Routes {
			if !backends[r.Backend] {
				add("route %s/%s: backend %q does not exist", r.Namespace, r.Name, r.Backend)
			}
		}
	}
	return errors.Join(errs...)
}

// same reports whether a and b are the very same list (same array, same length); two empty lists are.
func same[T any](a, b []T) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

// ValidateSettings checks the part of Validate that concerns the settings and the frontends.
func (c *Config) ValidateSettings() error {
	var errs []error
	add := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if c.Settings.HTTPPort < 0 || c.Settings.HTTPPort > 65535 || c.Settings.HTTPSPort < 0 || c.Settings.HTTPSPort > 65535 {
		add("settings: ports must be in 0-65535")
	}
	if err := c.Settings.ClientTLS.Validate(); err != nil {
		errs = append(errs, fmt.Errorf("settings: %w", err))
	}
	if err := c.Listener.Validate(c.Settings.ClientTLS); err != nil {
		errs = append(errs, fmt.Errorf("listener files: %w", err))
	}
	seenFE := map[string]bool{}
	for _, f := range c.Frontends {
		if !ValidName(f.Name) || seenFE[f.Name] {
			add("frontend %q: invalid or duplicate name", f.Name)
		}
		seenFE[f.Name] = true
		if f.Mode != ModeHTTP && f.Mode != ModeTCP {
			add("frontend %q: invalid mode %q", f.Name, f.Mode)
		}
		if (f.Bind == "" && f.BindV6 == "") || strings.ContainsAny(f.Bind+f.BindV6, " \t\r\n") {
			add("frontend %q: invalid bind %q (IPv6 %q)", f.Name, f.Bind, f.BindV6)
		}
	}
	return errors.Join(errs...)
}

// Validate checks the part of Config.Validate that concerns one map file: its name and its
// entries (no whitespace, sorted, unique keys).
func (m *MapFile) Validate() error {
	var errs []error
	add := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if !ValidFileName(m.Name) {
		add("map %q: invalid file name", m.Name)
	}
	for j, e := range m.Entries {
		if !ValidMapToken(e.Key) || !ValidMapToken(e.Value) {
			add("map %q: entry %q %q: empty or contains whitespace", m.Name, e.Key, e.Value)
		}
		if j > 0 && m.Entries[j-1].Key >= e.Key {
			add("map %q: entries not sorted or duplicate key at %q", m.Name, e.Key)
		}
	}
	return errors.Join(errs...)
}

// ValidateCertificates checks the part of Config.Validate that concerns the certificates.
func ValidateCertificates(certs []Certificate) error {
	var errs []error
	add := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	for i, crt := range certs {
		if i > 0 && certs[i-1].Name >= crt.Name {
			add("certificates not sorted or duplicate at %q", crt.Name)
		}
		if !ValidFileName(crt.Name) {
			add("certificate %q: invalid file name", crt.Name)
		}
		if HasBlankLine(crt.PEM) {
			add("certificate %q: PEM contains a blank line", crt.Name)
		}
		for _, s := range crt.SNI {
			if !ValidMapToken(s) {
				add("certificate %q: invalid SNI filter %q", crt.Name, s)
			}
		}
	}
	return errors.Join(errs...)
}

// ValidateCAFiles checks the part of Config.Validate that concerns the CA files.
func ValidateCAFiles(cas []CAFile) error {
	var errs []error
	add := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	for i, ca := range cas {
		if i > 0 && cas[i-1].Name >= ca.Name {
			add("CA files not sorted or duplicate at %q", ca.Name)
		}
		if !ValidFileName(ca.Name) {
			add("CA file %q: invalid file name", ca.Name)
		}
	}
	return errors.Join(errs...)
}

// Validate checks the part of Config.Validate that concerns one backend and its servers.
func (b *Backend) Validate() error {
	var errs []error
	add := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("backend %q: "+format, append([]any{b.Name}, args...)...))
	}
	if !ValidName(b.Name) {
		add("invalid name")
	}
	if b.Mode != ModeHTTP && b.Mode != ModeTCP {
		add("invalid mode %q", b.Mode)
	}
	if !slices.Contains(BalanceAlgorithms(), b.Balance) {
		add("balance %q does not accept runtime servers", b.Balance)
	}
	for _, err := range []error{b.validateHeaderRules(b.RequestHeaders, false), b.validateHeaderRules(b.ResponseHeaders, true)} {
		if err != nil {
			add("%v", err)
		}
	}
	ids := make(map[int32]string, len(b.Servers))
	for i, s := range b.Servers {
		if i > 0 && b.Servers[i-1].Name >= s.Name {
			add("servers not sorted or duplicate at %q", s.Name)
		}
		if !ValidName(s.Name) {
			add("server %q: invalid name", s.Name)
		}
		if _, err := netip.ParseAddr(s.Addr); err != nil {
			add("server %q: invalid address %q", s.Name, s.Addr)
		}
		if s.Port < 1 || s.Port > 65535 {
			add("server %q: invalid port %d", s.Name, s.Port)
		}
		if s.Weight < 0 || s.Weight > 256 {
			add("server %q: weight %d out of 0-256", s.Name, s.Weight)
		}
		if s.ID < 1 || s.ID > MaxServerID {
			add("server %q: id %d out of 1-%d", s.Name, s.ID, MaxServerID)
		} else if other, dup := ids[s.ID]; dup {
			add("server %q: id %d already used by %q", s.Name, s.ID, other)
		} else {
			ids[s.ID] = s.Name
		}
		switch s.State {
		case StateReady, StateDrain, StateMaint:
		default:
			add("server %q: invalid state %q", s.Name, s.State)
		}
	}
	return errors.Join(errs...)
}

// ValidName reports whether s is usable as an HAProxy proxy or server name: letters, digits and
// '-', '_', '.', ':'.
func ValidName(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if !isAlnum(r) && !strings.ContainsRune("-_.:", r) {
			return false
		}
	}
	return true
}

// ValidFileName reports whether s is a safe base file name (same alphabet as ValidName, no "..").
func ValidFileName(s string) bool {
	return ValidName(s) && s != "." && !strings.Contains(s, "..")
}

// ValidMapToken reports whether s can stand as a map key or value: non-empty printable ASCII without
// whitespace (map files have no escape syntax).
func ValidMapToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] <= ' ' || s[i] >= 0x7f {
			return false
		}
	}
	return true
}

// HasBlankLine reports whether a PEM payload has an empty or whitespace-only line, which would end an
// HAProxy runtime "<<" payload early.
func HasBlankLine(pem string) bool {
	for _, line := range strings.Split(strings.TrimRight(pem, "\n"), "\n") {
		if strings.TrimSpace(line) == "" {
			return true
		}
	}
	return false
}

func isAlnum(r rune) bool {
	return (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9')
}

// Backend returns the backend with the given name, or nil.
func (c *Config) Backend(name string) *Backend {
	i := sort.Search(len(c.Backends), func(i int) bool { return c.Backends[i].Name >= name })
	if i < len(c.Backends) && c.Backends[i].Name == name {
		return c.Backends[i]
	}
	return nil
}

// Map returns the map file with the given name, or nil.
func (c *Config) Map(name string) *MapFile {
	for i := range c.Maps {
		if c.Maps[i].Name == name {
			return &c.Maps[i]
		}
	}
	return nil
}

// MapValue returns the value of key in the map file name of c, false when there is no such entry.
func (c *Config) MapValue(name, key string) (string, bool) {
	m := c.Map(name)
	if m == nil {
		return "", false
	}
	i, ok := slices.BinarySearchFunc(m.Entries, key, func(e MapEntry, k string) int { return strings.Compare(e.Key, k) })
	if !ok {
		return "", false
	}
	return m.Entries[i].Value, true
}
