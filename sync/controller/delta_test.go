package controller

import (
	"testing"

	"github.com/haroute/haroute/mapping/model"
)

// TestSameConfig: sameConfig is the sync's "did anything change": every part of a desired state
// counts, and an equal copy that shares nothing is the same.
func TestSameConfig(t *testing.T) {
	base := translate(t, webInput("10.0.0.1", "10.0.0.2"))
	base.Certificates = []model.Certificate{{Name: "a.pem", PEM: "pem", SNI: []string{"a.example.com"}}}
	base.CAFiles = []model.CAFile{{Name: "a.ca", PEM: "ca"}}
	if !sameConfig(base, base.Clone()) {
		t.Fatal("a deep copy is not the same config")
	}
	for name, change := range map[string]func(c *model.Config){
		"settings": func(c *model.Config) { c.Settings.MaxConnections++ },
		"frontend": func(c *model.Config) { c.Frontends[0].Bind = "127.0.0.2:80" },
		"route":    func(c *model.Config) { c.Routes[0].Host = "other.example.com" },
		"map entry": func(c *model.Config) {
			c.Maps[0].Entries = append(c.Maps[0].Entries, model.MapEntry{Key: "k", Value: "v"})
		},
		"map name":            func(c *model.Config) { c.Maps[0].Name = "other.map" },
		"certificate":         func(c *model.Config) { c.Certificates[0].SNI[0] = "b.example.com" },
		"CA file":             func(c *model.Config) { c.CAFiles[0].PEM = "other" },
		"backend":             func(c *model.Config) { c.Backends[0].Balance = "leastconn" },
		"server":              func(c *model.Config) { c.Backends[len(c.Backends)-1].Servers[0].Weight++ },
		"no backends":         func(c *model.Config) { c.Backends = nil },
		"default certificate": func(c *model.Config) { c.Listener.DefaultCertificate = "rotated" },
		"client CRL":          func(c *model.Config) { c.Listener.ClientCRL = "crl" },
	} {
		c := base.Clone()
		change(c)
		if sameConfig(base, c) || sameConfig(c, base) {
			t.Errorf("%s: a changed config is the same", name)
		}
	}
	if sameConfig(base, nil) || sameConfig(nil, base) || !sameConfig(nil, nil) {
		t.Error("nil configs")
	}
}
