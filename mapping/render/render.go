// Package render turns a desired state (mapping/model) into the files HAProxy reads: conf/haproxy.cfg
// from the embedded default template or a custom one (TEMPLATE_FILE), the os_*.map files, the crt-list
// and the certificate and CA files. It is pure: the same model and options give byte-identical files.
package render

import "github.com/haroute/haroute/mapping/model"

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
	// Env backs the `env` template function of custom templates; nil reads as empty.
	Env func(string) string
}

// Render returns the files for cfg, sorted by Path.
func Render(cfg *model.Config, opts Options) ([]File, error) {
	panic("not implemented")
}

// Template is a parsed HAProxy config template.
type Template struct{}

// ParseTemplate parses a custom template with haroute's helper functions.
func ParseTemplate(name, text string) (*Template, error) {
	panic("not implemented")
}
