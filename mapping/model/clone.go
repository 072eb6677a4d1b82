package model

import "slices"

// Clone returns a deep copy of c: no pointer or slice is shared with c, and nil slices stay nil
// (so reflect.DeepEqual(c, c.Clone()) holds).
func (c *Config) Clone() *Config {
	out := *c
	out.Frontends = slices.Clone(c.Frontends)
	out.Maps = slices.Clone(c.Maps)
	for i := range out.Maps {
		out.Maps[i].Entries = slices.Clone(out.Maps[i].Entries)
	}
	out.Backends = slices.Clone(c.Backends)
	for i, b := range out.Backends {
		if b != nil {
			nb := b.Clone()
			out.Backends[i] = &nb
		}
	}
	out.Certificates = slices.Clone(c.Certificates)
	for i := range out.Certificates {
		out.Certificates[i].SNI = slices.Clone(out.Certificates[i].SNI)
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
	b.RequestHeaders = slices.Clone(b.RequestHeaders)
	b.ResponseHeaders = slices.Clone(b.ResponseHeaders)
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
