package render

import (
	"reflect"
	"sort"
	"strings"
	"sync"

	"github.com/haroute/haroute/mapping/model"
)

// BlockCache keeps the text the template rendered for each backend (its "backend" block) from one
// Render to the next, so that an update executes the template again only for the backends that
// changed: most of a large configuration is backends, and most updates touch one. A block is reused
// only when its backend is equal to the one it was rendered from and nothing else it may depend on
// changed (the directory, the settings, the set of CA files, the template); otherwise the whole cache
// is dropped. The output is byte-identical to a Render without a cache. A BlockCache may be shared by
// sequential Renders of one caller; it is safe for concurrent use but gains nothing from it.
type BlockCache struct {
	mu      sync.Mutex
	context blockContext
	blocks  map[string]cachedBlock
	seen    map[string]bool
	// Hits and Misses count reused and rendered blocks since the cache was made (for tests and
	// benchmarks).
	Hits, Misses int
}

// NewBlockCache returns an empty cache.
func NewBlockCache() *BlockCache {
	return &BlockCache{blocks: map[string]cachedBlock{}, seen: map[string]bool{}}
}

// blockContext is everything outside a backend that its block may depend on.
type blockContext struct {
	// tmpl is the custom template, nil for the embedded default.
	tmpl     *Template
	dir      string
	settings model.Settings
	cas      string
}

type cachedBlock struct {
	backend model.Backend
	text    string
}

func newBlockContext(custom *Template, d *Data) blockContext {
	names := make([]string, len(d.Config.CAFiles))
	for i, c := range d.Config.CAFiles {
		names[i] = c.Name
	}
	sort.Strings(names)
	return blockContext{tmpl: custom, dir: d.Dir, settings: d.Config.Settings, cas: strings.Join(names, "\n")}
}

// begin starts a Render: the cache is emptied unless ctx is the context its blocks were made in.
func (c *BlockCache) begin(ctx blockContext) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.blocks == nil || ctx.tmpl != c.context.tmpl || ctx.dir != c.context.dir || ctx.cas != c.context.cas ||
		!reflect.DeepEqual(ctx.settings, c.context.settings) {
		c.blocks = map[string]cachedBlock{}
	}
	c.context = ctx
	c.seen = map[string]bool{}
}

// get returns the block of a backend equal to b.
func (c *BlockCache) get(b *model.Backend) (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.seen[b.Name] = true
	e, ok := c.blocks[b.Name]
	if ok && reflect.DeepEqual(&e.backend, b) {
		c.Hits++
		return e.text, true
	}
	c.Misses++
	return "", false
}

// put stores the block rendered for b (a copy of b: the caller's model may change later).
func (c *BlockCache) put(b *model.Backend, text string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.blocks[b.Name] = cachedBlock{backend: b.Clone(), text: text}
}

// finish ends a successful Render: blocks of backends it did not render are dropped.
func (c *BlockCache) finish() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for name := range c.blocks {
		if !c.seen[name] {
			delete(c.blocks, name)
		}
	}
}

// reset drops every block (after a failed Render).
func (c *BlockCache) reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.blocks = map[string]cachedBlock{}
}

// backendBlock renders the template's "backend" block for b, or returns the cached text of an equal
// backend.
func (f *funcs) backendBlock(b model.Backend) (string, error) {
	if f.tmpl == nil {
		return "", errNoRender
	}
	if f.cache != nil {
		if text, ok := f.cache.get(&b); ok {
			return text, nil
		}
	}
	var sb strings.Builder
	if err := f.tmpl.ExecuteTemplate(&sb, "backend", b); err != nil {
		return "", err
	}
	text := sb.String()
	if f.cache != nil {
		f.cache.put(&b, text)
	}
	return text, nil
}
