package controller

import (
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"slices"
	"time"

	"github.com/haroute/haroute/inspect/stateapi"
	"github.com/haroute/haroute/mapping/model"
)

// leafInfo is what one bundle's leaf says, cached by digest.
type leafInfo struct {
	dnsNames            []string
	subject, issuer     string
	notBefore, notAfter time.Time
	err                 string
}

// certInfos describes cfg's certificates; cache holds the leaves already parsed (by digest), so that a
// snapshot parses only certificates it has not seen.
func certInfos(cfg *model.Config, digests []string, cache map[string]leafInfo) []stateapi.CertInfo {
	if cfg == nil {
		return nil
	}
	routes := map[string][]string{}
	for _, r := range cfg.Routes {
		if r.Certificate != "" {
			routes[r.Certificate] = append(routes[r.Certificate], r.Namespace+"/"+r.Name)
		}
	}
	out := make([]stateapi.CertInfo, 0, len(cfg.Certificates))
	for i, c := range cfg.Certificates {
		l, ok := cache[digests[i]]
		if !ok {
			l = parseLeaf(c.PEM)
			cache[digests[i]] = l
		}
		out = append(out, stateapi.CertInfo{Name: c.Name, Digest: digests[i], Routes: routes[c.Name], SNI: c.SNI,
			DNSNames: l.dnsNames, Subject: l.subject, Issuer: l.issuer, NotBefore: l.notBefore, NotAfter: l.notAfter, Error: l.err})
	}
	return out
}

// parseLeaf reads the first certificate of a PEM bundle.
func parseLeaf(bundle string) leafInfo {
	rest := []byte(bundle)
	for {
		var block *pem.Block
		block, rest = pem.Decode(rest)
		if block == nil {
			return leafInfo{err: "no certificate in the bundle"}
		}
		if block.Type != "CERTIFICATE" {
			continue
		}
		cert, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			return leafInfo{err: fmt.Sprintf("certificate: %v", err)}
		}
		names := slices.Clone(cert.DNSNames)
		if len(names) == 0 && cert.Subject.CommonName != "" {
			names = []string{cert.Subject.CommonName}
		}
		return leafInfo{dnsNames: names, subject: cert.Subject.String(), issuer: cert.Issuer.String(),
			notBefore: cert.NotBefore.UTC(), notAfter: cert.NotAfter.UTC()}
	}
}
