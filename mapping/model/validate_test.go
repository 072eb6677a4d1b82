package model

import (
	"slices"
	"strings"
	"testing"
)

func validConfig() *Config {
	return &Config{
		Settings:  Settings{HTTPPort: 80, HTTPSPort: 443},
		Frontends: []Frontend{{Name: FrontendPublic, Mode: ModeHTTP, Bind: ":80"}},
		Maps: []MapFile{
			{Name: MapHTTP, Entries: []MapEntry{{Key: "=a.example.com/api", Value: "be_http:ns:r"}, {Key: "a.example.com/api/", Value: "be_http:ns:r"}}},
			{Name: MapTCP},
		},
		Backends: []*Backend{{
			Name: "be_http:ns:r", Kind: KindHTTP, Mode: ModeHTTP, Balance: "random",
			Servers: []Server{
				{Name: "pod:p1:svc:http:10.0.0.1:8080", ID: 1, Addr: "10.0.0.1", Port: 8080, Weight: 256, State: StateReady},
				{Name: "pod:p2:svc:http:fd00::2:8080", ID: MaxServerID, Addr: "fd00::2", Port: 8080, Weight: 0, State: StateMaint},
			},
		}},
		Certificates: []Certificate{{Name: "ns:r.pem", PEM: "-----BEGIN CERTIFICATE-----\nAA==\n-----END CERTIFICATE-----\n", SNI: []string{"a.example.com"}}},
		Routes:       []RouteInfo{{Namespace: "ns", Name: "r", Host: "a.example.com", Path: "/api", Backend: "be_http:ns:r"}},
	}
}

func TestValidateAcceptsAValidConfig(t *testing.T) {
	if err := validConfig().Validate(); err != nil {
		t.Fatal(err)
	}
}

func TestValidateRejects(t *testing.T) {
	for name, tc := range map[string]struct {
		mutate func(*Config)
		want   string
	}{
		"map key with a space":    {func(c *Config) { c.Maps[0].Entries[0].Key = "=a b" }, "whitespace"},
		"server without an id":    {func(c *Config) { c.Backends[0].Servers[0].ID = 0 }, "id 0 out of"},
		"server id too large":     {func(c *Config) { c.Backends[0].Servers[1].ID = MaxServerID + 1 }, "out of 1-"},
		"server id twice":         {func(c *Config) { c.Backends[0].Servers[1].ID = 1 }, "already used by"},
		"map key with a newline":  {func(c *Config) { c.Maps[0].Entries[1].Value = "be\nx" }, "whitespace"},
		"unsorted map entries":    {func(c *Config) { e := c.Maps[0].Entries; e[0], e[1] = e[1], e[0] }, "not sorted"},
		"unsorted maps":           {func(c *Config) { c.Maps[0], c.Maps[1] = c.Maps[1], c.Maps[0] }, "not sorted"},
		"map file name traversal": {func(c *Config) { c.Maps[1].Name = "..map" }, "invalid file name"},
		"backend name with space": {func(c *Config) { c.Backends[0].Name = "be x" }, "invalid name"},
		"static-rr balance":       {func(c *Config) { c.Backends[0].Balance = "static-rr" }, "does not accept runtime servers"},
		"bad server address":      {func(c *Config) { c.Backends[0].Servers[0].Addr = "10.0.0.300" }, "invalid address"},
		"weight above 256":        {func(c *Config) { c.Backends[0].Servers[0].Weight = 257 }, "out of 0-256"},
		"port 0":                  {func(c *Config) { c.Backends[0].Servers[0].Port = 0 }, "invalid port"},
		"unknown state":           {func(c *Config) { c.Backends[0].Servers[0].State = "up" }, "invalid state"},
		"duplicate servers":       {func(c *Config) { c.Backends[0].Servers[1] = c.Backends[0].Servers[0] }, "duplicate"},
		"PEM with a blank line":   {func(c *Config) { c.Certificates[0].PEM = "a\n\nb\n" }, "blank line"},
		"SNI with a space":        {func(c *Config) { c.Certificates[0].SNI = []string{"a b"} }, "invalid SNI"},
		"route to no backend":     {func(c *Config) { c.Routes[0].Backend = "be_http:ns:gone" }, "does not exist"},
		"frontend without bind":   {func(c *Config) { c.Frontends[0].Bind = "" }, "invalid bind"},
		"port out of range":       {func(c *Config) { c.Settings.HTTPPort = 70000 }, "ports"},
	} {
		t.Run(name, func(t *testing.T) {
			c := validConfig()
			tc.mutate(c)
			err := c.Validate()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Validate() = %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

func TestLookups(t *testing.T) {
	c := validConfig()
	if b := c.Backend("be_http:ns:r"); b == nil || b.Name != "be_http:ns:r" {
		t.Fatalf("Backend lookup failed: %v", b)
	}
	if c.Backend("be_http:ns:zzz") != nil || c.Map("nope.map") != nil || c.Map(MapTCP) == nil {
		t.Fatal("lookups of absent names must return nil, present ones non-nil")
	}
	if BackendName(KindReencrypt, "ns", "r") != "be_secure:ns:r" || KindPassthrough.Mode() != ModeTCP || KindEdge.Prefix() != "be_edge_http" {
		t.Fatal("OpenShift names changed")
	}
}

// TestValidateAfter: ValidateAfter takes what a config shares with a valid previous one as valid, and
// fails exactly when Validate fails, whatever changed.
func TestValidateAfter(t *testing.T) {
	base := validConfig()
	first := base.Backends[0]
	base.Backends, base.Routes = nil, nil
	for _, n := range []string{"a", "b", "c", "d"} {
		b := first.Clone()
		b.Name = "be_http:ns:" + n
		base.Backends = append(base.Backends, &b)
		base.Routes = append(base.Routes, RouteInfo{Namespace: "ns", Name: n, Host: n + ".example.com", Backend: b.Name})
	}
	base.Maps[0].Entries = []MapEntry{{Key: "=a.example.com/api", Value: "be_http:ns:a"}}
	if err := base.Validate(); err != nil {
		t.Fatal(err)
	}
	// with returns a config sharing everything with base but backend i, changed by f.
	with := func(i int, f func(*Backend)) *Config {
		c := *base
		c.Backends = slices.Clone(base.Backends)
		b := base.Backends[i].Clone()
		f(&b)
		c.Backends[i] = &b
		return &c
	}
	for name, tc := range map[string]struct {
		c     *Config
		valid bool
	}{
		"the same":            {base, true},
		"a weight":            {with(2, func(b *Backend) { b.Servers[0].Weight = 7 }), true},
		"an invalid backend":  {with(2, func(b *Backend) { b.Balance = "static-rr" }), false},
		"out of order":        {with(1, func(b *Backend) { b.Name = "be_http:ns:cc" }), false},
		"a duplicate name":    {with(1, func(b *Backend) { b.Name = "be_http:ns:a" }), false},
		"renamed, Route lost": {with(3, func(b *Backend) { b.Name = "be_http:ns:e" }), false},
		"a nil backend": {func() *Config {
			c := *base
			c.Backends = slices.Clone(base.Backends)
			c.Backends[2] = nil
			return &c
		}(), false},
		"a backend less": {func() *Config {
			c := *base
			c.Backends = slices.Clone(base.Backends[1:])
			return &c
		}(), false},
		"an invalid map": {func() *Config {
			c := *base
			c.Maps = slices.Clone(base.Maps)
			c.Maps[0].Entries = []MapEntry{{Key: "=a b", Value: "be_http:ns:a"}}
			return &c
		}(), false},
		"an invalid certificate": {func() *Config {
			c := *base
			c.Certificates = []Certificate{{Name: "../x.pem", PEM: "x"}}
			return &c
		}(), false},
		"a Route to nowhere": {func() *Config {
			c := *base
			c.Routes = append(slices.Clone(base.Routes), RouteInfo{Namespace: "ns", Name: "z", Backend: "be_http:ns:z"})
			return &c
		}(), false},
	} {
		full, after := tc.c.Validate(), tc.c.ValidateAfter(base)
		if (full == nil) != tc.valid || (after == nil) != tc.valid {
			t.Errorf("%s: Validate %v, ValidateAfter %v; want valid %v", name, full, after, tc.valid)
		}
	}
}
