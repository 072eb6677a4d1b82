package model

import "slices"

// Clone returns a deep copy of c: no pointer or slice is shared with c.
func (c *Config) Clone() *Config {
	out := *c
	out.Frontends = slices.Clone(c.Frontends)
	out.Maps = make([]MapFile, len(c.Maps))
	for i, m := range c.Maps {
		out.Maps[i] = MapFile{Name: m.Name, Entries: slices.Clone(m.Entries)}
	}
	out.Backends = make([]Backend, len(c.Backends))
	for i := range c.Backends {
		out.Backends[i] = c.Backends[i].Clone()
	}
	out.Certificates = make([]Certificate, len(c.Certificates))
	for i, crt := range c.Certificates {
		crt.SNI = slices.Clone(crt.SNI)
		out.Certificates[i] = crt
	}
	out.CAFiles = slices.Clone(c.CAFiles)
	out.Routes = slices.Clone(c.Routes)
	return &out
}

// Clone returns a deep copy of b: no pointer or slice is shared with b.
func (b Backend) Clone() Backend {
	b.Cookie = clonePtr(b.Cookie)
	b.RateLimit = clonePtr(b.RateLimit)
	b.Rewrite = clonePtr(b.Rewrite)
	b.TLS = clonePtr(b.TLS)
	b.Allowlist = slices.Clone(b.Allowlist)
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
