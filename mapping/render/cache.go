package render

import (
	"strings"

	"github.com/haroute/haroute/mapping/model"
)

// backendBlock renders the template's "backend" block for b (custom templates call it from
// haproxy.cfg), or returns the text a Renderer kept for an equal backend.
func (f *funcs) backendBlock(b *model.Backend) (string, error) {
	if f.tmpl == nil {
		return "", errNoRender
	}
	f.blockCalls++
	r := f.renderer
	if r != nil {
		if blk := r.blocks[b.Name]; blk != nil && blk.backend.Equal(b) {
			blk.seen, blk.backend = r.ctx.gen, b
			return blk.text, nil
		}
		blk, err := r.renderBlock(f, b, r.ctx.gen)
		if err != nil {
			return "", err
		}
		return blk.text, nil
	}
	var sb strings.Builder
	if err := f.tmpl.ExecuteTemplate(&sb, "backend", *b); err != nil {
		return "", err
	}
	return sb.String(), nil
}
