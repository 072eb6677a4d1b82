package render

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	"github.com/haroute/haroute/mapping/layout"
	"github.com/haroute/haroute/mapping/model"
)

// MaskRuntime returns config, a haproxy.cfg rendered from cfg into dir, without the parts the runtime
// path owns in it: the line of every server of cfg's backends, as serverLine renders it (with its
// cookie value too, ownServerLines). The map
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
			if err := ownServerLines(owned, f, b, s); err != nil {
				return nil, err
			}
		}
	}
	return maskLines(config, owned), nil
}

// ownServerLines adds to owned the lines the default template may write for server s of backend b:
// its serverLine, and that line with what the arms of HAProxy 3.0 and 3.3 add (serverExtras).
func ownServerLines(owned map[string]struct{}, f *funcs, b *model.Backend, s model.Server) error {
	line, err := f.serverLine(*b, s)
	if err != nil {
		return fmt.Errorf("mask: backend %s: %w", b.Name, err)
	}
	for _, arm := range [][2]bool{{false, false}, {true, false}, {true, true}} {
		owned[line+serverExtras(*b, s, arm[0], arm[1])] = struct{}{}
	}
	return nil
}

// maskLines returns text without the lines that, trimmed, are in owned (never nil).
func maskLines(text []byte, owned map[string]struct{}) []byte {
	out := make([]byte, 0, len(text))
	for rest := text; len(rest) > 0; {
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
	return out
}

// Masks returns the runtime mask (MaskRuntime) of every configuration file of the last Render, by
// path: haproxy.cfg and, with the default template, the backend files. A file that did not change
// since the Render before keeps its mask (the same slice), and only the blocks of changed backends
// are masked again, so that comparing masks costs what changed.
func (r *Renderer) Masks() (map[string][]byte, error) {
	if r.last == nil {
		return nil, errors.New("mask: nothing rendered")
	}
	mainPath := layout.Config
	if r.mainMask == nil || !sameSlice(r.maskedFor, r.main) {
		m, err := MaskRuntime(r.main, r.last, r.dir)
		if err != nil {
			return nil, err
		}
		r.mainMask, r.maskedFor = m, r.main
	}
	out := map[string][]byte{mainPath: r.mainMask}
	if !r.sharded {
		return out, nil
	}
	if r.defaultBackends != nil {
		out[DefaultBackendFile] = r.defaultBackends // no server of the model
	}
	for i := range r.shards {
		s := &r.shards[i]
		if s.data == nil {
			continue
		}
		if s.mask == nil {
			var b bytes.Buffer
			for _, blk := range s.members {
				m, err := r.blockMask(blk)
				if err != nil {
					return nil, err
				}
				b.Write(m)
			}
			s.mask = b.Bytes()
		}
		out[shardPath(i)] = s.mask
	}
	return out, nil
}

// blockMask returns the text of a block without the lines of its backend's servers; nothing with
// the default template.
func (r *Renderer) blockMask(blk *block) ([]byte, error) {
	if blk.mask != nil {
		return blk.mask, nil
	}
	if !r.custom {
		// The default template renders a block from the backend's model alone, whose options the
		// plan compares itself: HAProxy 3.4 adds and deletes whole blocks at runtime
		// (plan.AddBackend, plan.DelBackend), and before 3.4 no plan adds or removes one, nor
		// changes its options, without a reload.
		blk.mask = []byte{}
		return blk.mask, nil
	}
	owned := make(map[string]struct{}, 2*len(blk.backend.Servers))
	for _, s := range blk.backend.Servers {
		if err := ownServerLines(owned, r.lastFuncs, blk.backend, s); err != nil {
			return nil, err
		}
	}
	// Every line ends with a newline, the block's last one too, so that a block whose servers go
	// (its last lines) masks the same as before.
	text := blk.text
	if !strings.HasSuffix(text, "\n") {
		text += "\n"
	}
	blk.mask = maskLines([]byte(text), owned)
	return blk.mask, nil
}
