package render

import (
	"bytes"
	"fmt"

	"github.com/haroute/haroute/mapping/model"
)

// MaskRuntime returns config, a haproxy.cfg rendered from cfg into dir, without the parts the runtime
// path owns in it: the line of every server of cfg's backends, as serverLine renders it. The map
// files, the crt-list, the certificates and the CA files are files of their own and not in config.
//
// Two renders whose masks are equal differ only in what runtime ops change, so a running HAProxy
// changed by those ops serves what a reload of the new files would serve. Masks that differ mean the
// template renders something the ops cannot reach (with the default template: nothing a runtime
// plan changes; with a custom one, e.g. a header per Route), and only a reload installs it.
//
// A custom template that writes servers without serverLine keeps its server lines in the mask, so
// every server change is then a difference: the runtime path cannot add such servers faithfully.
func MaskRuntime(config []byte, cfg *model.Config, dir string) ([]byte, error) {
	dir, err := checkDir(dir)
	if err != nil {
		return nil, fmt.Errorf("mask: %w", err)
	}
	d, err := newData(cfg, dir)
	if err != nil {
		return nil, fmt.Errorf("mask: %w", err)
	}
	f := newFuncs(d, nil)
	owned := map[string]struct{}{}
	for _, b := range cfg.Backends {
		for _, s := range b.Servers {
			line, err := f.serverLine(b, s)
			if err != nil {
				return nil, fmt.Errorf("mask: backend %s: %w", b.Name, err)
			}
			owned[line] = struct{}{}
		}
	}
	out := make([]byte, 0, len(config))
	for rest := config; len(rest) > 0; {
		line := rest
		if i := bytes.IndexByte(rest, '\n'); i >= 0 {
			line, rest = rest[:i+1], rest[i+1:]
		} else {
			rest = nil
		}
		if _, ok := owned[string(bytes.TrimSpace(line))]; ok {
			continue
		}
		out = append(out, line...)
	}
	return out, nil
}
