package mapping

import (
	"bytes"
	"crypto"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/haroute/haroute/mapping/model"
)

// defaultALPN is advertised with a Route certificate of its own (see setALPN).
const defaultALPN = "h2,http/1.1"

// setALPN decides, as OpenShift does, which served Route certificates offer HTTP/2: none when HTTP/2
// is disabled (ROUTER_DISABLE_HTTP2), else those no other Route serves too. A browser reuses an HTTP/2
// connection for every host its certificate covers, so a certificate shared by several Routes (a
// wildcard certificate, typically) would carry requests for one Route's host to another Route's
// backend. Two certificates are the same when their leaf certificates are. certs are modified in
// place: they are this translation's copies.
func setALPN(certs []model.Certificate, disableHTTP2 bool) {
	leaves := make(map[string]int, len(certs))
	for i := range certs {
		leaves[leafKey(certs[i].PEM)]++
	}
	for i := range certs {
		certs[i].ALPN = ""
		if !disableHTTP2 && leaves[leafKey(certs[i].PEM)] == 1 {
			certs[i].ALPN = defaultALPN
		}
	}
}

// leafKey returns the text of a certificate bundle's first PEM block (its leaf, as the bundle is
// built: leaf first), without decoding it.
func leafKey(bundle string) string {
	if i := strings.Index(bundle, "-----END "); i >= 0 {
		return bundle[:i]
	}
	return bundle
}

// routeTLS is the TLS material of an admitted Route.
type routeTLS struct {
	cert       *model.Certificate // the Route's own certificate; nil serves the default one
	ca         *model.CAFile      // reencrypt destination CA bundle, if the Route carries one
	backendTLS *model.BackendTLS  // reencrypt only
}

// routeTLS validates the certificates of a Route as OpenShift's extended validation does and prepares
// the files to serve. Passthrough Routes must carry none; edge Routes no destination CA; reencrypt
// Routes need a destination CA unless a default one is configured.
func (t *translator) routeTLS(a *admission) (routeTLS, *rejection) {
	tls := a.route.Spec.TLS
	if tls == nil {
		return routeTLS{}, nil
	}
	failed := func(format string, args ...any) (routeTLS, *rejection) {
		return routeTLS{}, reject(ReasonExtendedValidationFailed, fmt.Sprintf(format, args...))
	}
	if a.kind == model.KindPassthrough {
		if tls.Certificate != "" || tls.Key != "" || tls.CACertificate != "" || tls.DestinationCACertificate != "" || tls.ExternalCertificate != nil {
			return failed("passthrough routes must not carry certificate, key, caCertificate, destinationCACertificate or externalCertificate")
		}
		return routeTLS{}, nil
	}
	if a.kind == model.KindEdge && tls.DestinationCACertificate != "" {
		return failed("edge routes do not support spec.tls.destinationCACertificate")
	}

	var out routeTLS
	certPEM, keyPEM := []byte(tls.Certificate), []byte(tls.Key)
	switch {
	case tls.ExternalCertificate != nil && !t.opts.ExternalCertificates:
		// As OpenShift with ROUTER_ENABLE_EXTERNAL_CERTIFICATE=false: the field is not looked at.
		a.warn(ReasonExternalCertificateIgnored, fmt.Sprintf("spec.tls.externalCertificate (secret %s) is ignored: ROUTER_ENABLE_EXTERNAL_CERTIFICATE is false",
			quoteShort(tls.ExternalCertificate.Name)))
	case tls.ExternalCertificate != nil:
		if tls.Certificate != "" || tls.Key != "" {
			return failed("spec.tls.externalCertificate and spec.tls.certificate/key are mutually exclusive")
		}
		var err error
		certPEM, keyPEM, err = t.externalCertificate(a.namespace, tls.ExternalCertificate.Name)
		if err != nil {
			return failed("spec.tls.externalCertificate: %v", err)
		}
	}
	switch {
	case len(certPEM) > 0 && len(keyPEM) > 0:
		bundle, err := certificateBundle(certPEM, keyPEM, []byte(tls.CACertificate))
		if err != nil {
			return failed("%v", err)
		}
		out.cert = &model.Certificate{Name: a.routeFileName(), PEM: bundle, SNI: []string{a.host}, ALPN: defaultALPN}
	case len(certPEM) > 0:
		return failed("spec.tls.certificate is set but spec.tls.key is not")
	case len(keyPEM) > 0:
		return failed("spec.tls.key is set but spec.tls.certificate is not")
	case tls.CACertificate != "":
		return failed("spec.tls.caCertificate is set without a certificate and key")
	}

	if a.kind == model.KindReencrypt {
		switch {
		case tls.DestinationCACertificate != "":
			blocks, err := certificateBlocks([]byte(tls.DestinationCACertificate), "spec.tls.destinationCACertificate")
			if err != nil {
				return failed("%v", err)
			}
			out.ca = &model.CAFile{Name: a.routeFileName(), PEM: encodeBlocks(blocks)}
			out.backendTLS = &model.BackendTLS{CAFile: out.ca.Name}
		case t.opts.DefaultDestinationCAFile != "":
			out.backendTLS = &model.BackendTLS{CAFile: t.opts.DefaultDestinationCAFile}
		default:
			return failed("reencrypt route needs spec.tls.destinationCACertificate (no default destination CA configured)")
		}
	}
	return out, nil
}

// externalCertificate reads tls.crt and tls.key from a kubernetes.io/tls Secret of the namespace.
func (t *translator) externalCertificate(ns, name string) (cert, key []byte, err error) {
	if name == "" {
		return nil, nil, errors.New("no secret name")
	}
	s := t.objs.secret(ns, name)
	if s == nil {
		return nil, nil, fmt.Errorf("secret %s/%s not found", ns, name)
	}
	if s.Type != corev1.SecretTypeTLS {
		return nil, nil, fmt.Errorf("secret %s/%s has type %s, want %s", ns, name, quoteShort(string(s.Type)), corev1.SecretTypeTLS)
	}
	cert, key = secretValue(s, corev1.TLSCertKey), secretValue(s, corev1.TLSPrivateKeyKey)
	if len(cert) == 0 || len(key) == 0 {
		return nil, nil, fmt.Errorf("secret %s/%s lacks %s or %s", ns, name, corev1.TLSCertKey, corev1.TLSPrivateKeyKey)
	}
	return cert, key, nil
}

// secretValue returns data[key], falling back to stringData (a Secret read from a file rather than
// from the API server may carry only that).
func secretValue(s *corev1.Secret, key string) []byte {
	if v, ok := s.Data[key]; ok {
		return v
	}
	if v, ok := s.StringData[key]; ok {
		return []byte(v)
	}
	return nil
}

// certificateBundle validates a serving certificate (leaf plus optional intermediates), its private
// key and an optional CA chain, and returns them re-encoded as one PEM bundle: leaf, chain, key, with
// no blank lines (so the bundle can also travel as a runtime API payload).
func certificateBundle(certPEM, keyPEM, caPEM []byte) (string, error) {
	certs, err := certificateBlocks(certPEM, "spec.tls.certificate")
	if err != nil {
		return "", err
	}
	leaf, err := x509.ParseCertificate(certs[0].Bytes)
	if err != nil {
		return "", fmt.Errorf("spec.tls.certificate: %w", err)
	}
	keyBlock, key, err := privateKey(keyPEM)
	if err != nil {
		return "", err
	}
	pub, ok := key.(interface{ Public() crypto.PublicKey })
	if !ok {
		return "", errors.New("spec.tls.key: unsupported private key type")
	}
	leafPub, ok := leaf.PublicKey.(interface{ Equal(crypto.PublicKey) bool })
	if !ok || !leafPub.Equal(pub.Public()) {
		return "", errors.New("spec.tls.key does not match the public key of spec.tls.certificate")
	}
	var chain []*pem.Block
	if len(bytes.TrimSpace(caPEM)) > 0 {
		chain, err = certificateBlocks(caPEM, "spec.tls.caCertificate")
		if err != nil {
			return "", err
		}
	}
	all := append(append(certs, chain...), keyBlock)
	return encodeBlocks(all), nil
}

// certificateBlocks decodes PEM data that must hold one or more x509 certificates and nothing else.
func certificateBlocks(data []byte, field string) ([]*pem.Block, error) {
	blocks, err := pemBlocks(data, field)
	if err != nil {
		return nil, err
	}
	for i, b := range blocks {
		if b.Type != "CERTIFICATE" {
			return nil, fmt.Errorf("%s: PEM block %d is %s, want CERTIFICATE", field, i+1, quoteShort(b.Type))
		}
		if _, err := x509.ParseCertificate(b.Bytes); err != nil {
			return nil, fmt.Errorf("%s: PEM block %d: %w", field, i+1, err)
		}
	}
	return blocks, nil
}

// privateKey decodes PEM data that must hold exactly one PKCS#1, PKCS#8 or EC private key (an
// "EC PARAMETERS" block, as openssl writes before EC keys, is allowed and dropped).
func privateKey(data []byte) (*pem.Block, crypto.PrivateKey, error) {
	const field = "spec.tls.key"
	blocks, err := pemBlocks(data, field)
	if err != nil {
		return nil, nil, err
	}
	var found *pem.Block
	var key crypto.PrivateKey
	for i, b := range blocks {
		var k crypto.PrivateKey
		switch b.Type {
		case "EC PARAMETERS":
			continue
		case "RSA PRIVATE KEY":
			k, err = x509.ParsePKCS1PrivateKey(b.Bytes)
		case "PRIVATE KEY":
			k, err = x509.ParsePKCS8PrivateKey(b.Bytes)
		case "EC PRIVATE KEY":
			k, err = x509.ParseECPrivateKey(b.Bytes)
		default:
			return nil, nil, fmt.Errorf("%s: PEM block %d is %s, want a private key", field, i+1, quoteShort(b.Type))
		}
		if err != nil {
			// The parsers' messages describe ASN.1 internals; the block type says enough.
			return nil, nil, fmt.Errorf("%s: PEM block %d (%s) does not parse as a private key", field, i+1, b.Type)
		}
		if found != nil {
			return nil, nil, fmt.Errorf("%s: more than one private key", field)
		}
		found, key = b, k
	}
	if found == nil {
		return nil, nil, fmt.Errorf("%s: no private key", field)
	}
	return found, key, nil
}

// pemBlocks decodes every PEM block of data. Text outside blocks is ignored (it is never re-emitted);
// encrypted blocks and data without any block are refused.
func pemBlocks(data []byte, field string) ([]*pem.Block, error) {
	var blocks []*pem.Block
	rest := data
	for {
		var b *pem.Block
		b, rest = pem.Decode(rest)
		if b == nil {
			break
		}
		if len(b.Headers) > 0 {
			return nil, fmt.Errorf("%s: PEM block %d has headers (encrypted keys are not supported)", field, len(blocks)+1)
		}
		blocks = append(blocks, b)
	}
	if len(blocks) == 0 {
		return nil, fmt.Errorf("%s: no PEM data", field)
	}
	// pem.Decode skips a block it cannot parse and goes on with the next one: count the BEGIN lines
	// to make sure every block was decoded.
	if n := bytes.Count(data, []byte("-----BEGIN ")); n != len(blocks) {
		return nil, fmt.Errorf("%s: %d of %d PEM blocks are malformed", field, n-len(blocks), n)
	}
	return blocks, nil
}

// encodeBlocks re-encodes PEM blocks without headers, one after the other.
func encodeBlocks(blocks []*pem.Block) string {
	var buf bytes.Buffer
	for _, b := range blocks {
		buf.Write(pem.EncodeToMemory(&pem.Block{Type: b.Type, Bytes: b.Bytes}))
	}
	return buf.String()
}
