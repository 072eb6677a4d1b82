package observe

import (
	"slices"

	"github.com/haroute/haroute/mapping/model"
)

// cloneConfig returns a deep copy of c, so that the observed state never shares memory with applied.
func cloneConfig(c *model.Config) *model.Config {
	out := *c
	out.Frontends = slices.Clone(c.Frontends)
	out.Maps = make([]model.MapFile, len(c.Maps))
	for i, m := range c.Maps {
		out.Maps[i] = model.MapFile{Name: m.Name, Entries: slices.Clone(m.Entries)}
	}
	out.Backends = make([]model.Backend, len(c.Backends))
	for i := range c.Backends {
		out.Backends[i] = cloneBackend(c.Backends[i])
	}
	out.Certificates = make([]model.Certificate, len(c.Certificates))
	for i, cert := range c.Certificates {
		cert.SNI = slices.Clone(cert.SNI)
		out.Certificates[i] = cert
	}
	out.CAFiles = slices.Clone(c.CAFiles)
	out.Routes = slices.Clone(c.Routes)
	return &out
}

func cloneBackend(b model.Backend) model.Backend {
	b.Cookie = clonePtr(b.Cookie)
	b.Allowlist = slices.Clone(b.Allowlist)
	b.RateLimit = clonePtr(b.RateLimit)
	b.Rewrite = clonePtr(b.Rewrite)
	b.TLS = clonePtr(b.TLS)
	b.Servers = slices.Clone(b.Servers)
	return b
}

func clonePtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}
