package oracle

import (
	"fmt"

	"github.com/haroute/haroute/mapping/model"
)

// ListenerPool holds the router's own TLS files a walk rotates among (MutListener): default
// certificates, and client CAs with their revocation lists. The world starts with the first of each.
type ListenerPool struct {
	// DefaultCertificates are certificate-and-key bundles, all for the default certificate's name.
	DefaultCertificates []string
	// ClientCAs are client CA bundles, each with CRLs signed by it (at least one).
	ClientCAs []ClientCA
}

// ClientCA is a client CA bundle and revocation lists it signed.
type ClientCA struct {
	PEM  string
	CRLs []string
}

// Files returns the first files of the pool.
func (p *ListenerPool) Files() model.ListenerFiles {
	l := model.ListenerFiles{DefaultCertificate: p.DefaultCertificates[0]}
	if len(p.ClientCAs) > 0 {
		l.ClientCA, l.ClientCRL = p.ClientCAs[0].PEM, p.ClientCAs[0].CRLs[0]
	}
	return l
}

// rotateListener moves one listener file to another of the pool: the default certificate, the CRLs
// of the client CA in force, or (one time in five, with more than one) the client CA with its first
// CRLs.
func (wk *Walker) rotateListener() (Mutation, bool) {
	p := wk.opts.Listener
	if p == nil {
		return Mutation{}, false
	}
	l := &wk.World.Listener
	other := func(xs []string, cur string) string {
		for {
			if x := pick(wk.rng, xs); x != cur || len(xs) < 2 {
				return x
			}
		}
	}
	ca := -1
	for i, c := range p.ClientCAs {
		if c.PEM == l.ClientCA {
			ca = i
		}
	}
	switch n := wk.rng.IntN(5); {
	case ca >= 0 && n == 0 && len(p.ClientCAs) > 1:
		next := (ca + 1) % len(p.ClientCAs)
		l.ClientCA, l.ClientCRL = p.ClientCAs[next].PEM, p.ClientCAs[next].CRLs[0]
		return Mutation{Kind: MutListener, Detail: fmt.Sprintf("client CA %d (with its CRLs)", next)}, true
	case ca >= 0 && n <= 2 && len(p.ClientCAs[ca].CRLs) > 1:
		l.ClientCRL = other(p.ClientCAs[ca].CRLs, l.ClientCRL)
		return Mutation{Kind: MutListener, Detail: "client CRLs rotated"}, true
	case len(p.DefaultCertificates) > 1:
		l.DefaultCertificate = other(p.DefaultCertificates, l.DefaultCertificate)
		return Mutation{Kind: MutListener, Detail: "default certificate rotated"}, true
	}
	return Mutation{}, false
}
