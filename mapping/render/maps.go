package render

import (
	"bytes"
	"path"

	"github.com/haroute/haroute/mapping/model"
)

// mapFiles returns one file per model map plus an empty file for every standard map the model lacks
// (the default configuration references all five, and HAProxy refuses to start on a missing map).
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

// crtList returns the crt-list of the TLS-terminating frontends: per certificate, its absolute path,
// its ALPN list when set, and the SNI names it may be served for (HAProxy serves it for nothing else).
func crtList(cfg *model.Config, certDir string) []byte {
	b := []byte{}
	for _, c := range cfg.Certificates {
		b = append(b, path.Join(certDir, c.Name)...)
		if c.ALPN != "" {
			b = append(b, " [alpn "...)
			b = append(b, c.ALPN...)
			b = append(b, ']')
		}
		for _, s := range c.SNI {
			b = append(b, ' ')
			b = append(b, s...)
		}
		b = append(b, '\n')
	}
	return b
}
