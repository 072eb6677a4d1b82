// Package render turns a desired state (mapping/model) into the files HAProxy reads: conf/haproxy.cfg
// from the embedded default template or a custom one (TEMPLATE_FILE), the os_*.map files, the crt-list
// and the certificate and CA files. It is pure: the same model and options give byte-identical files.
//
// The map files and the crt-list are written by Go code, not by the template; the template only makes
// haproxy.cfg. Templates are executed with a *Data (the model, the directory and the absolute path of
// every file and socket) and have these functions:
//
// OpenShift-compatible (same meaning as OpenShift's documented template functions):
//
//	env NAME [DEFAULT]            Options.Env(NAME), or DEFAULT when that is empty
//	matchPattern PATTERN S        PATTERN (a Go regular expression) matches all of S
//	isInteger S                   S parses as a decimal integer
//	matchValues S V...            S equals one of the V
//	generateRouteRegexp HOST PATH WILDCARD
//	                              ^<host>\.?(:[0-9]+)?<path>(/.*)?$ as OpenShift builds it
//	genSubdomainWildcardRegexp HOST PATH EXACTPATH
//	                              any first label, then HOST's domain and PATH (and sub-paths unless EXACTPATH)
//	genCertificateHostName HOST WILDCARD
//	                              HOST, or *.<domain> when WILDCARD
//
// haroute's:
//
//	mapPath NAME                  absolute path of a rendered map file (error for an unknown one)
//	certPath NAME, caPath NAME    absolute path of a model certificate / CA file (caPath passes an
//	                              absolute name through: a configured default CA)
//	bindAddr BIND                 a frontend bind with "unix@<relative>" made absolute under Dir
//	isUnixBind BIND               BIND starts with "unix@"
//	serverAddress SERVER          "ip:port", IPv6 in brackets
//	serverLine BACKEND SERVER     the complete server line (all options on it, no default-server)
//	backendBlock BACKEND          the template's "backend" block executed for BACKEND; a Renderer
//	                              reuses the text of an unchanged backend
//	checkInterval BACKEND         the backend's check interval, else the settings' default
//	forwardedHeaders BACKEND      the backend's forwarded-headers policy, else the settings', else append
//	allowlistChunks ADDRS         ADDRS in space-separated groups of at most 40 (one ACL line each)
//	rewriteRegexp REWRITE         the replace-path regular expression of a Rewrite
//	rewriteReplacement REWRITE    the replace-path replacement ('%' escaped)
//	quoteLogFormat FORMAT         FORMAT in single quotes, or an error unless model.CheckLogFormat
//	                              accepts it (a log-format line's argument)
//	word S                        S, or an error if S cannot stand unquoted in haproxy.cfg
//	publicBinds FRONTEND          what follows "bind" on each listener of public or public_ssl
//	tlsBind FRONTEND SNI          .Line: the bind of fe_sni (SNI true) or fe_no_sni after "bind":
//	                              address, ssl, strict-sni, default certificate, crt-list, accept-proxy
//	headerActions ENCODED         the model.HeaderAction list of HTTPOptions.RequestHeaders/ResponseHeaders
//	quoteHeaderValue V            V in single quotes, a single quote inside escaped
//	headerValue RULE              the value of a Route's Set header rule (model.HeaderRule): its value
//	                              quoted, or the haroute_header_values.map lookup of its key
//	mimeTypes TYPES               TYPES for "compression type" (a type with a space double-quoted)
//	clientSSLHeaders              the X-SSL* request headers that describe a client certificate
//	lower S                       S in lower case
//	fail MESSAGE                  stop rendering with MESSAGE as the error
//
// Before any template runs, Render validates the model (model.Config.Validate) and checks every value
// that reaches haproxy.cfg unquoted: names and values contain no whitespace, quotes, '#', '\', '$' or
// "%[" (HAProxy expands "${...}" and evaluates "%[...]" sample expressions), so no value can break or
// extend a configuration line.
package render

import (
	"bytes"
	_ "embed" // the default template
	"errors"
	"fmt"
	"path"
	"strings"
	"text/template"

	"github.com/haroute/haroute/mapping/model"
)

//go:embed haproxy.cfg.tmpl
var defaultTemplateText string

// The error pages HAProxy answers with when no Route matches a request (503, or 404 with
// ROUTER_ERRORFILE_404) or a Route has no server (503), unless Options give others.
var (
	//go:embed error-page-503.http
	defaultErrorPage503 []byte
	//go:embed error-page-404.http
	defaultErrorPage404 []byte
)

// File is one rendered file; Path is relative to the HAProxy directory (e.g. "conf/haproxy.cfg").
type File struct {
	Path string
	Data []byte
}

// Options say where the files will live and how to render them.
type Options struct {
	// Dir is the absolute HAProxy directory; the config refers to every file by its absolute path
	// under it, so `haproxy -f Dir/conf/haproxy.cfg` works from anywhere.
	Dir string
	// Template is a custom template (ParseTemplate); nil uses the embedded default.
	Template *Template
	// DefaultCertificatePEM is served when no Route certificate matches the SNI (required).
	DefaultCertificatePEM []byte
	// ErrorPage503 and ErrorPage404 are the raw HTTP responses (status line, headers, body) HAProxy
	// sends instead of its own 503 and 404 pages (ROUTER_ERRORFILE_503, ROUTER_ERRORFILE_404); nil
	// gives haroute's "Application is not available" page and a plain 404 page.
	ErrorPage503 []byte
	ErrorPage404 []byte
	// Env backs the `env` template function of custom templates; nil reads as empty.
	Env func(string) string
}

// Render returns the files for cfg, sorted by Path. With the default template, haproxy.cfg holds
// the global settings, the frontends and the fixed backends, and the Routes' backends are in
// layout.BackendsDir (ConfigArgs); a custom template renders everything into haproxy.cfg. Render is a fresh
// Renderer's first render, after a full validation of cfg.
func Render(cfg *model.Config, opts Options) ([]File, error) {
	if cfg == nil {
		return nil, errors.New("render: no config")
	}
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("render: invalid model: %w", err)
	}
	r, err := NewRenderer(opts)
	if err != nil {
		return nil, err
	}
	return r.Render(cfg)
}

// Template is a parsed HAProxy config template.
type Template struct {
	tmpl *template.Template
}

// ParseTemplate parses a custom template with haroute's helper functions.
func ParseTemplate(name, text string) (*Template, error) {
	t, err := template.New(name).Option("missingkey=error").Funcs((&funcs{}).funcMap()).Parse(text)
	if err != nil {
		return nil, fmt.Errorf("parse template %s: %w", name, err)
	}
	return &Template{tmpl: t}, nil
}

// checkDir returns the cleaned HAProxy directory, or an error unless it is absolute and made of
// characters that can stand in any position of haproxy.cfg (inside sample-expression arguments, too):
// letters, digits and "/._-+~@".
func checkDir(dir string) (string, error) {
	if !strings.HasPrefix(dir, "/") {
		return "", fmt.Errorf("directory %q: want an absolute path", dir)
	}
	if err := checkCharset("directory", dir, "/._-+~@"); err != nil {
		return "", err
	}
	return path.Clean(dir), nil
}

// CheckErrorPage returns an error unless HAProxy can load page as an errorfile: an HTTP/1.0 or
// HTTP/1.1 response whose headers end with an empty line, at most MaxErrorPage bytes, without NUL
// bytes.
func CheckErrorPage(page []byte) error {
	switch {
	case len(page) > MaxErrorPage:
		return fmt.Errorf("%d bytes, at most %d (it must fit in one HAProxy buffer)", len(page), MaxErrorPage)
	case !bytes.HasPrefix(page, []byte("HTTP/1.0 ")) && !bytes.HasPrefix(page, []byte("HTTP/1.1 ")):
		return errors.New("does not start with an HTTP/1.0 or HTTP/1.1 status line")
	case !bytes.Contains(page, []byte("\n\n")) && !bytes.Contains(page, []byte("\r\n\r\n")):
		return errors.New("no empty line ends the headers")
	case bytes.IndexByte(page, 0) >= 0:
		return errors.New("contains a NUL byte")
	}
	return nil
}

// errorPage returns page, or def when page is nil, after CheckErrorPage.
func errorPage(what string, page, def []byte) ([]byte, error) {
	if page == nil {
		return def, nil
	}
	if err := CheckErrorPage(page); err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return page, nil
}

// MaxErrorPage bounds an error page: HAProxy loads it into one buffer (tune.bufsize, at least 16384
// bytes here). A page longer than the buffer less the header rewrite space (tune.maxrewrite) loads
// with a warning; the default template runs no http-after-response rule, which that space serves.
const MaxErrorPage = 16000

// cleanDefaultCertificate removes blank lines from the default certificate (a blank line would end a
// runtime payload early) and ends it with a newline.
func cleanDefaultCertificate(pem []byte) ([]byte, error) {
	var b bytes.Buffer
	for _, line := range strings.Split(string(pem), "\n") {
		if strings.TrimSpace(line) != "" {
			b.WriteString(strings.TrimRight(line, "\r"))
			b.WriteByte('\n')
		}
	}
	if b.Len() == 0 {
		return nil, errors.New("default certificate: empty PEM")
	}
	if !bytes.Contains(b.Bytes(), []byte("-----BEGIN ")) {
		return nil, errors.New("default certificate: not PEM")
	}
	return b.Bytes(), nil
}

func withNewline(s string) []byte {
	if !strings.HasSuffix(s, "\n") {
		s += "\n"
	}
	return []byte(s)
}
