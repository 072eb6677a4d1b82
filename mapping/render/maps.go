package render

import (
	"bytes"
	"path"
	"strings"

	"github.com/haroute/haroute/mapping/model"
)

// mapFiles returns one file per model map plus an empty file for every standard map the model lacks
// (the default configuration references all six, and HAProxy refuses to start on a missing map).
// Each entry is one "key value" line, in the model's (sorted) order.
func mapFiles(cfg *model.Config) []File {
	have := map[string]bool{}
	var files []File
	for _, m := range cfg.Maps {
		have[m.Name] = true
		var b bytes.Buffer
		for _, e := range m.Entries {
			b.WriteString(e.Key)
			b.WriteByte(' ')
			b.WriteString(e.Value)
			b.WriteByte('\n')
		}
		files = append(files, File{Path: path.Join(confDir, m.Name), Data: b.Bytes()})
	}
	for _, name := range standardMaps {
		if !have[name] {
			files = append(files, File{Path: path.Join(confDir, name), Data: []byte{}})
		}
	}
	return files
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
