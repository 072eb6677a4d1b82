package render

import (
	"fmt"
	"strings"

	"github.com/haroute/haroute/mapping/model"
)

// listenerFuncs are the template functions of the router-wide listener options (TLS binds, header
// actions, compression, the X-SSL* header filter).
func (f *funcs) listenerFuncs() map[string]any {
	return map[string]any{
		"tlsBind":          f.tlsBind,
		"publicBinds":      f.publicBinds,
		"headerActions":    model.ParseHeaderActions,
		"quoteHeaderValue": model.QuoteHeaderValue,
		"headerValue":      f.headerValue,
		"mimeTypes":        mimeTypes,
		"clientSSLHeaders": model.ClientSSLHeaders,
		"lower":            strings.ToLower,
		"quoteRegexp":      quoteRegexp,
	}
}

// TLSBind is what the default template's tls-bind writes after "bind": the listener's address and
// its TLS options.
type TLSBind struct {
	Line string
}

// tlsBind returns the bind line of a TLS-terminating frontend (fe_sni when sni, fe_no_sni otherwise):
// its address, then "ssl", strict SNI when asked, the default certificate, the Routes' crt-list (fe_sni
// only), accept-proxy (public_ssl hands connections over with a PROXY header) and, with mutual TLS, the
// client certificate policy, the client CA bundle and its CRLs.
func (f *funcs) tlsBind(fe model.Frontend, sni bool) (TLSBind, error) {
	if f.data == nil {
		return TLSBind{}, errNoRender
	}
	addr, err := f.bindAddr(fe.Bind)
	if err != nil {
		return TLSBind{}, err
	}
	var b strings.Builder
	b.WriteString(addr)
	if isUnixBind(fe.Bind) {
		b.WriteString(" mode 600")
	}
	b.WriteString(" ssl")
	if sni && f.data.Config.Settings.HTTP.StrictSNI {
		b.WriteString(" strict-sni")
	}
	b.WriteString(" crt " + f.data.Paths.DefaultCertificate)
	if sni {
		b.WriteString(" crt-list " + f.data.Paths.CertList)
	}
	b.WriteString(" accept-proxy")
	if c := f.data.Config.Settings.ClientTLS; c.Verify != "" {
		b.WriteString(" verify " + c.Verify + " ca-file " + f.data.Paths.ClientCA)
		if f.data.Config.Listener.ClientCRL != "" {
			b.WriteString(" crl-file " + f.data.Paths.ClientCRL)
		}
	}
	return TLSBind{Line: b.String()}, nil
}

// publicBinds returns what follows "bind" on each listener of a public frontend: the IPv4 (or given)
// address, then the IPv6-only one, each expecting a PROXY protocol header when the router sits
// behind a load balancer that sends one (HTTPOptions.ProxyProtocol).
func (f *funcs) publicBinds(fe model.Frontend) ([]string, error) {
	if f.data == nil {
		return nil, errNoRender
	}
	proxy := ""
	if f.data.Config.Settings.HTTP.ProxyProtocol {
		proxy = " accept-proxy"
	}
	var out []string
	if fe.Bind != "" {
		addr, err := f.bindAddr(fe.Bind)
		if err != nil {
			return nil, err
		}
		if isUnixBind(fe.Bind) {
			addr += " mode 600"
		}
		out = append(out, addr+proxy)
	}
	if fe.BindV6 != "" {
		if err := checkWord("IPv6 bind", fe.BindV6); err != nil {
			return nil, err
		}
		out = append(out, fe.BindV6+" v6only"+proxy)
	}
	return out, nil
}

// mimeTypes writes a list of MIME types for "compression type": a type with a space in double
// quotes (model.CheckMIMEType leaves nothing inside that HAProxy would interpret).
func mimeTypes(types []string) (string, error) {
	for _, t := range types {
		if err := model.CheckMIMEType(t); err != nil {
			return "", fmt.Errorf("compression: %w", err)
		}
	}
	return model.FormatMIMETypes(types), nil
}

// quoteRegexp writes a regular expression that passed model.CheckClientFilter in single quotes, where
// HAProxy takes every character as it is.
func quoteRegexp(re string) (string, error) {
	if err := model.CheckClientFilter(re); err != nil {
		return "", err
	}
	return "'" + re + "'", nil
}

// headerValue returns the value word of a Route's Set header rule: its value in single quotes, or,
// when haroute_header_values.map carries the value, the expression that reads it from there by the
// rule's key and decodes it.
func (f *funcs) headerValue(r model.HeaderRule) (string, error) {
	if r.Key == "" {
		return model.QuoteHeaderValue(r.Value), nil
	}
	p, err := f.mapPath(model.MapHeaderValues)
	if err != nil {
		return "", err
	}
	return "%[str(" + r.Key + "),map(" + p + "),url_dec]", nil
}
