package render

import (
	"bytes"
	"path"
	"strings"

	"github.com/haroute/haroute/mapping/layout"
	"github.com/haroute/haroute/mapping/model"
)

// mapFile returns the file of a model map: one "key value" line per entry, in the model's (sorted)
// order. The Renderer adds an empty file for every standard map the model lacks (the default
// configuration references all six, and HAProxy refuses to start on a missing map).
func mapFile(m *model.MapFile) File {
	var b bytes.Buffer
	for _, e := range m.Entries {
		b.WriteString(e.Key)
		b.WriteByte(' ')
		b.WriteString(e.Value)
		b.WriteByte('\n')
	}
	data := b.Bytes()
	if data == nil {
		data = []byte{}
	}
	return File{Path: layout.InConf(m.Name), Data: data}
}

// crtList returns the crt-list of the TLS-terminating frontends: one CrtListLine per certificate.
func crtList(cfg *model.Config, certDir string) []byte {
	b := []byte{}
	for _, c := range cfg.Certificates {
		b = append(b, CrtListLine(certDir, c)...)
		b = append(b, '\n')
	}
	return b
}

// CrtListLine returns the crt-list line of c, without newline: its absolute path under certDir, its
// ALPN list when set, and the SNI names it may be served for (HAProxy serves it for nothing else),
// "<certDir>/<name> [alpn <ALPN>] <sni>...".
func CrtListLine(certDir string, c model.Certificate) string {
	var b strings.Builder
	b.WriteString(path.Join(certDir, c.Name))
	if c.ALPN != "" {
		b.WriteString(" [alpn ")
		b.WriteString(c.ALPN)
		b.WriteByte(']')
	}
	for _, s := range c.SNI {
		b.WriteByte(' ')
		b.WriteString(s)
	}
	return b.String()
}
