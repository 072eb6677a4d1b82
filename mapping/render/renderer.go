package render

import (
	"bytes"
	"errors"
	"fmt"
	"path"
	"reflect"
	"slices"
	"strings"
	"text/template"

	"github.com/haroute/haroute/mapping/layout"
	"github.com/haroute/haroute/mapping/model"
)

// The backend files of the default template, in layout.BackendsDir, which HAProxy loads as a second
// configuration (`-f <dir>/conf/haproxy.cfg -f <dir>/conf/backends`, ConfigArgs): the files in it,
// in name order, after haproxy.cfg.
const (
	// BackendShards is the number of files the Routes' backends are spread over, by a hash of their
	// name (ShardFile). A change to one backend rewrites its file only: at 20,000 Routes a file holds
	// about 300 backends instead of the whole configuration.
	BackendShards = 64
	// DefaultBackendFile holds openshift_default, the backend the frontends fall back to. Its place
	// in layout.BackendsDir is deliberate: an HAProxy started without that directory refuses the
	// configuration ("unable to find required default_backend") instead of answering 503 for every
	// Route.
	DefaultBackendFile = layout.BackendsDir + "/default.cfg"
)

// ConfigArgs returns the -f arguments HAProxy needs for the HAProxy directory dir: haproxy.cfg,
// then the backend files.
func ConfigArgs(dir string) []string {
	l := layout.For(dir)
	return []string{"-f", l.Config(), "-f", l.BackendsDir()}
}

// ShardFile returns the backend file (relative to the HAProxy directory) that holds the backend
// named name with the default template.
func ShardFile(name string) string { return shardPath(shardOf(name)) }

// shardOf is FNV-1a of name, modulo BackendShards.
func shardOf(name string) int {
	h := uint32(2166136261)
	for i := 0; i < len(name); i++ {
		h ^= uint32(name[i])
		h *= 16777619
	}
	return int(h % BackendShards)
}

func shardPath(i int) string { return fmt.Sprintf("%s/backends-%02d.cfg", layout.BackendsDir, i) }

// Renderer renders the successive states of one HAProxy directory: the same files as Render, but it
// keeps what it rendered, so that each state costs what changed rather than what there is. It
// executes the template only for backends that differ from the ones it rendered last (the very same
// pointer at the same index, else model.Backend.Equal), and rewrites only the backend files, map files
// and certificates whose content changed; a file that did not change is returned with the very same
// Data as before, which lets a caller skip it by identity. It keeps the backends it rendered, so the
// configs it is given must stay unmodified (model.Config is read-only once built). It checks what it
// renders as Render does (model validation and checkConfig), incrementally, except that it does not
// re-check RouteInfo, which no file holds.
//
// A Renderer is not safe for concurrent use. After an error it starts from nothing again.
type Renderer struct {
	dir    string
	tmpl   *Template
	custom bool
	// sharded: the last render put the backends into the backend files.
	sharded     bool
	env         func(string) string
	defaultCert []byte
	// listenerCert, clientCA and clientCRL hold the last rendered listener files (model.ListenerFiles),
	// so that an unchanged file keeps its Data.
	listenerCert, clientCA, clientCRL []byte
	// errorPage503 and errorPage404 are the error pages written to conf/ (Options, or the defaults).
	errorPage503, errorPage404 []byte

	ctx    blockContext
	blocks map[string]*block
	// order holds this render's block of every backend, prev the last render's (swapped, reused).
	order, prev []*block
	shards      [BackendShards]shard
	main        []byte
	// defaultBackends is the text of DefaultBackendFile.
	defaultBackends []byte
	maps            map[string]*mapState
	certs           certState
	cas             caState
	// last is the state and the template functions of the last successful render (for Masks).
	last      *model.Config
	lastFuncs *funcs
	mainMask  []byte
	maskedFor []byte // the main text mainMask was computed for
}

// block is the rendered text of one backend.
type block struct {
	// backend is the backend rendered: the caller's, read-only (model.Config), so that the same
	// pointer in a later state is the same backend.
	backend *model.Backend
	text    string
	shard   int
	// mask is text without the backend's server lines (nil until Masks needs it).
	mask []byte
	seen uint64
}

// shard is one backend file: its blocks, in name order, and their text.
type shard struct {
	members []*block
	data    []byte
	mask    []byte
	// count is len(members), or -1 once a member changed or went (the file is made again).
	count int
}

type mapState struct {
	entries []model.MapEntry
	file    File
}

type certState struct {
	list    []model.Certificate
	crtList []byte
	files   map[string]File
	pems    map[string]string
	names   map[string]bool
}

type caState struct {
	list  []model.CAFile
	files map[string]File
	pems  map[string]string
	names map[string]bool
}

// NewRenderer returns a Renderer for opts (its Dir, Template, DefaultCertificatePEM and Env).
func NewRenderer(opts Options) (*Renderer, error) {
	dir, err := checkDir(opts.Dir)
	if err != nil {
		return nil, fmt.Errorf("render: %w", err)
	}
	cert, err := cleanDefaultCertificate(opts.DefaultCertificatePEM)
	if err != nil {
		return nil, fmt.Errorf("render: %w", err)
	}
	if opts.Template != nil && opts.Template.tmpl == nil {
		return nil, errors.New("render: template not parsed (use ParseTemplate)")
	}
	page503, err := errorPage("error page 503", opts.ErrorPage503, defaultErrorPage503)
	if err != nil {
		return nil, fmt.Errorf("render: %w", err)
	}
	page404, err := errorPage("error page 404", opts.ErrorPage404, defaultErrorPage404)
	if err != nil {
		return nil, fmt.Errorf("render: %w", err)
	}
	r := &Renderer{dir: dir, tmpl: opts.Template, custom: opts.Template != nil, env: opts.Env, defaultCert: cert,
		errorPage503: page503, errorPage404: page404}
	if r.tmpl == nil {
		if r.tmpl, err = ParseTemplate("haproxy.cfg.tmpl", defaultTemplateText); err != nil {
			return nil, fmt.Errorf("render: default template: %w", err)
		}
	}
	r.reset()
	return r, nil
}

// reset forgets everything rendered.
func (r *Renderer) reset() {
	r.blocks, r.order, r.prev = map[string]*block{}, nil, nil
	r.shards = [BackendShards]shard{}
	r.ctx = blockContext{}
	r.main, r.defaultBackends, r.mainMask, r.maskedFor = nil, nil, nil, nil
	r.maps = map[string]*mapState{}
	r.certs, r.cas = certState{}, caState{}
	r.last, r.lastFuncs = nil, nil
}

// Render returns the files for cfg, sorted by Path: the same files Render returns for the Renderer's
// options.
func (r *Renderer) Render(cfg *model.Config) ([]File, error) {
	if cfg == nil {
		return nil, errors.New("render: no config")
	}
	files, err := r.render(cfg)
	if err != nil {
		r.reset()
		return nil, fmt.Errorf("render: %w", err)
	}
	return files, nil
}

// invalidModel marks a model validation error (Render's "invalid model").
type invalidModel struct{ err error }

func (e invalidModel) Error() string { return "invalid model: " + e.err.Error() }
func (e invalidModel) Unwrap() error { return e.err }

func (r *Renderer) render(cfg *model.Config) ([]File, error) {
	if err := cfg.ValidateSettings(); err != nil {
		return nil, invalidModel{err}
	}
	if err := checkGlobal(cfg); err != nil {
		return nil, err
	}
	if !r.custom {
		if err := checkDefaultLayout(cfg); err != nil {
			return nil, err
		}
	}
	data, err := newData(cfg, r.dir)
	if err != nil {
		return nil, err
	}
	if err := r.updateCAs(cfg.CAFiles); err != nil {
		return nil, err
	}
	if err := r.updateCerts(cfg.Certificates); err != nil {
		return nil, err
	}
	mapFiles, err := r.updateMaps(cfg.Maps)
	if err != nil {
		return nil, err
	}
	ctx := newBlockContext(r.tmpl, r.custom, data)
	if !ctx.equal(r.ctx) {
		r.blocks, r.ctx, r.order = map[string]*block{}, ctx, nil
		for i := range r.shards {
			r.shards[i].count = -1 // made again (an unchanged text keeps its Data)
		}
	}
	gen := r.ctx.gen + 1
	r.ctx.gen = gen
	misses, err := r.matchBlocks(cfg.Backends, gen)
	if err != nil {
		return nil, err
	}

	c, err := r.tmpl.tmpl.Clone()
	if err != nil {
		return nil, fmt.Errorf("clone template: %w", err)
	}
	f := newFuncsFor(data, r.env, r.certs.names, r.cas.names)
	f.tmpl, f.renderer = c, r
	c.Funcs(f.funcMap())
	var main bytes.Buffer
	if err := c.Execute(&main, data); err != nil {
		return nil, fmt.Errorf("%s: %w", path.Base(layout.Config), err)
	}
	// A template whose haproxy.cfg asks for no backend block (the default one) has its "backend"
	// block rendered into the backend files, once per backend.
	sharded := f.blockCalls == 0 && c.Lookup("backend") != nil
	text := main.Bytes()
	if sharded && !bytes.HasSuffix(text, []byte("\n")) {
		text = append(text, '\n')
	}
	r.main = reuse(r.main, text)
	files := []File{
		{Path: layout.Config, Data: r.main},
		{Path: layout.InConf(model.CertList), Data: r.certs.crtList},
		{Path: layout.InConf(path.Base(data.Paths.DefaultCertificate)), Data: r.defaultCertificate(cfg)},
		{Path: layout.ErrorPage503, Data: r.errorPage503},
		{Path: layout.ErrorPage404, Data: r.errorPage404},
	}
	if l := cfg.Listener; l.ClientCA != "" {
		files = append(files, File{Path: layout.ClientCA, Data: r.listenerFile(&r.clientCA, l.ClientCA)})
		if l.ClientCRL != "" {
			files = append(files, File{Path: layout.ClientCRL, Data: r.listenerFile(&r.clientCRL, l.ClientCRL)})
		}
	}
	files = append(files, mapFiles...)
	if sharded {
		for _, i := range misses {
			blk, err := r.renderBlock(f, cfg.Backends[i], gen)
			if err != nil {
				return nil, fmt.Errorf("%s: backend %q: %w", ShardFile(cfg.Backends[i].Name), cfg.Backends[i].Name, err)
			}
			r.order[i] = blk
		}
		r.sweep(len(cfg.Backends))
		shards, err := r.shardFiles(c, data, cfg.Backends)
		if err != nil {
			return nil, err
		}
		files = append(files, shards...)
	} else {
		r.sweep(len(cfg.Backends))
	}
	r.sharded = sharded
	slices.SortFunc(files, func(a, b File) int { return strings.Compare(a.Path, b.Path) })
	for i := 1; i < len(files); i++ {
		if files[i].Path == files[i-1].Path {
			return nil, fmt.Errorf("two files would be written to %s", files[i].Path)
		}
	}
	// Certificates and CA files come after conf/, each list sorted by name (model.Config).
	for _, ca := range cfg.CAFiles {
		files = append(files, r.cas.files[ca.Name])
	}
	for _, crt := range cfg.Certificates {
		files = append(files, r.certs.files[crt.Name])
	}
	r.last, r.lastFuncs = cfg, f
	return files, nil
}

// matchBlocks finds every backend's block, checks the order of the backends and validates the ones
// without an equal block (misses, returned by index). It fills r.order. A backend that is the very
// one the last render had at the same index takes its block without a lookup.
func (r *Renderer) matchBlocks(backends []*model.Backend, gen uint64) ([]int, error) {
	r.order, r.prev = r.prev, r.order
	r.order = slices.Grow(r.order[:0], len(backends))[:len(backends)]
	// The last render's backends and blocks, index by index: comparing the pointers reads two
	// arrays, not the backends or blocks themselves, which at 20,000 Routes is most of the time.
	prev, last := r.prev, []*model.Backend(nil)
	if r.last != nil {
		last = r.last.Backends
	}
	if len(prev) != len(backends) || len(last) != len(backends) {
		prev, last = nil, nil
	}
	var misses []int
	var errs []error
	kept := false // backends[i-1] is the one the last render had at i-1
	for i, b := range backends {
		if b == nil {
			errs = append(errs, invalidModel{fmt.Errorf("backend %d: nil", i)})
			r.order[i], kept = nil, false
			continue
		}
		same := last != nil && last[i] == b && prev[i] != nil
		// Two neighbours the last render had as neighbours are in order already.
		if (!same || !kept) && i > 0 && backends[i-1] != nil && backends[i-1].Name >= b.Name {
			errs = append(errs, invalidModel{fmt.Errorf("backends not sorted or duplicate at %q", b.Name)})
		}
		if kept = same; same {
			r.order[i] = prev[i] // its seen mark waits for a sweep that needs it
			continue
		}
		if blk := r.blocks[b.Name]; blk != nil && blk.backend.Equal(b) {
			blk.seen, blk.backend = gen, b // the newest pointer, for the next render's identity check
			r.order[i] = blk
			continue
		}
		if err := b.Validate(); err != nil {
			errs = append(errs, invalidModel{err})
		}
		if err := checkBackend(b, r.cas.names); err != nil {
			errs = append(errs, err)
		}
		r.order[i] = nil
		misses = append(misses, i)
	}
	return misses, errors.Join(errs...)
}

// renderBlock executes the template's "backend" block for b and stores it as the block of b's name.
func (r *Renderer) renderBlock(f *funcs, b *model.Backend, gen uint64) (*block, error) {
	var sb strings.Builder
	if err := f.tmpl.ExecuteTemplate(&sb, "backend", *b); err != nil {
		return nil, err
	}
	blk := &block{backend: b, text: sb.String(), shard: shardOf(b.Name), seen: gen}
	if old := r.blocks[b.Name]; old != nil {
		r.shards[old.shard].count = -1 // its file changes even if the count stays
	}
	r.shards[blk.shard].count = -1
	r.blocks[b.Name] = blk
	return blk, nil
}

// sweep drops the blocks of backends the last render did not have (their files change).
func (r *Renderer) sweep(backends int) {
	if len(r.blocks) == backends {
		return // every backend has its one block (names are unique): nothing is stale
	}
	for _, blk := range r.order {
		if blk != nil {
			blk.seen = r.ctx.gen // matchBlocks leaves the blocks it kept by index unmarked
		}
	}
	for name, blk := range r.blocks {
		if blk.seen != r.ctx.gen {
			r.shards[blk.shard].count = -1
			delete(r.blocks, name)
		}
	}
}

// shardFiles returns the backend files (layout.BackendsDir): DefaultBackendFile and one file per shard that
// holds backends. Shards whose backends are the same blocks as in the last render keep their Data.
func (r *Renderer) shardFiles(c *template.Template, data *Data, backends []*model.Backend) ([]File, error) {
	members := r.members(len(backends))
	var files []File
	if c.Lookup("default-backends") != nil {
		var sb strings.Builder
		if err := c.ExecuteTemplate(&sb, "default-backends", data); err != nil {
			return nil, fmt.Errorf("%s: %w", DefaultBackendFile, err)
		}
		r.defaultBackends = reuse(r.defaultBackends, []byte(strings.TrimLeft(sb.String(), "\n")+"\n"))
		files = append(files, File{Path: DefaultBackendFile, Data: r.defaultBackends})
	} else {
		r.defaultBackends = nil
	}
	for i := range r.shards {
		s := &r.shards[i]
		if s.count != len(members[i]) {
			old := s.data
			s.data, s.mask, s.members = nil, nil, members[i]
			if len(members[i]) > 0 {
				s.data = reuse(old, joinBlocks(members[i]))
			}
			s.count = len(members[i])
		}
		if s.data != nil {
			files = append(files, File{Path: shardPath(i), Data: s.data})
		}
	}
	return files, nil
}

// members returns the blocks of every shard, in name order, for r.order (n backends): when the last
// render was sharded and had the same backend names at the same indices, its lists with the blocks
// that changed replaced (which costs what changed), else lists made anew.
func (r *Renderer) members(n int) [BackendShards][]*block {
	var out [BackendShards][]*block
	if r.sharded && len(r.prev) == n && n > 0 {
		for k := range r.shards {
			out[k] = r.shards[k].members
		}
		var copied [BackendShards]bool
		inPlace := true
		for i, blk := range r.order {
			old := r.prev[i]
			if blk == old {
				continue
			}
			k := blk.shard
			j := -1
			if old != nil && old.backend.Name == blk.backend.Name {
				j = slices.Index(out[k], old)
			}
			if j < 0 {
				inPlace = false
				break
			}
			if !copied[k] {
				out[k], copied[k] = slices.Clone(out[k]), true
			}
			out[k][j] = blk
		}
		if inPlace {
			return out
		}
		out = [BackendShards][]*block{}
	}
	for _, blk := range r.order {
		out[blk.shard] = append(out[blk.shard], blk)
	}
	return out
}

// joinBlocks returns the text of a backend file: its blocks' texts, without the leading newlines,
// ending with one newline; built in one allocation (at 20,000 Routes a file is about 100 kB).
func joinBlocks(blocks []*block) []byte {
	n := 1
	for _, blk := range blocks {
		n += len(blk.text)
	}
	out := make([]byte, 0, n)
	for _, blk := range blocks {
		if len(out) == 0 {
			out = append(out, strings.TrimLeft(blk.text, "\n")...)
		} else {
			out = append(out, blk.text...)
		}
	}
	return append(out, '\n')
}

// reuse returns old when it holds the same bytes as fresh (so that an unchanged file keeps its
// identity), else fresh.
func reuse(old, fresh []byte) []byte {
	if old != nil && bytes.Equal(old, fresh) {
		return old
	}
	return fresh
}

// sameSlice reports whether a and b are the very same slice (same array, same length): a model part
// handed on unchanged (plan.Compute shares what did not change with the applied state).
func sameSlice[T any](a, b []T) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

// updateMaps returns the map files of maps (plus the standard ones the model lacks), re-rendering only
// the maps whose entries changed.
func (r *Renderer) updateMaps(maps []model.MapFile) ([]File, error) {
	var errs []error
	keep := make(map[string]bool, len(maps))
	var files []File
	for i := range maps {
		m := &maps[i]
		if i > 0 && maps[i-1].Name >= m.Name {
			errs = append(errs, invalidModel{fmt.Errorf("maps not sorted or duplicate at %q", m.Name)})
		}
		keep[m.Name] = true
		st := r.maps[m.Name]
		if st == nil || !sameSlice(st.entries, m.Entries) {
			if err := m.Validate(); err != nil {
				errs = append(errs, invalidModel{err})
				continue
			}
			f := mapFile(m)
			if st != nil {
				f.Data = reuse(st.file.Data, f.Data)
			}
			st = &mapState{entries: m.Entries, file: f}
			r.maps[m.Name] = st
		}
		files = append(files, st.file)
	}
	for _, name := range standardMaps {
		if !keep[name] {
			keep[name] = true
			files = append(files, File{Path: layout.InConf(name), Data: []byte{}})
		}
	}
	for name := range r.maps {
		if !keep[name] {
			delete(r.maps, name)
		}
	}
	return files, errors.Join(errs...)
}

// updateCerts renders the crt-list and the certificate files when the certificates changed.
func (r *Renderer) updateCerts(certs []model.Certificate) error {
	st := &r.certs
	if st.files != nil && sameSlice(st.list, certs) {
		return nil
	}
	errs := []error{}
	if err := model.ValidateCertificates(certs); err != nil {
		errs = append(errs, invalidModel{err})
	}
	for i := range certs {
		if err := checkCertificate(&certs[i]); err != nil {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	files := make(map[string]File, len(certs))
	pems := make(map[string]string, len(certs))
	names := make(map[string]bool, len(certs))
	for _, c := range certs {
		f, ok := st.files[c.Name]
		if !ok || st.pems[c.Name] != c.PEM {
			f = File{Path: path.Join(layout.CertDir, c.Name), Data: withNewline(c.PEM)}
		}
		files[c.Name], pems[c.Name], names[c.Name] = f, c.PEM, true
	}
	st.crtList = reuse(st.crtList, crtList(&model.Config{Certificates: certs}, layout.For(r.dir).CertDir()))
	st.list, st.files, st.pems, st.names = certs, files, pems, names
	return nil
}

// updateCAs renders the CA files when they changed.
func (r *Renderer) updateCAs(cas []model.CAFile) error {
	st := &r.cas
	if st.files != nil && sameSlice(st.list, cas) {
		return nil
	}
	errs := []error{}
	if err := model.ValidateCAFiles(cas); err != nil {
		errs = append(errs, invalidModel{err})
	}
	files := make(map[string]File, len(cas))
	pems := make(map[string]string, len(cas))
	names := make(map[string]bool, len(cas))
	for _, ca := range cas {
		if strings.TrimSpace(ca.PEM) == "" {
			errs = append(errs, fmt.Errorf("CA file %q: empty PEM", ca.Name))
		}
		f, ok := st.files[ca.Name]
		if !ok || st.pems[ca.Name] != ca.PEM {
			f = File{Path: path.Join(layout.CADir, ca.Name), Data: withNewline(ca.PEM)}
		}
		files[ca.Name], pems[ca.Name], names[ca.Name] = f, ca.PEM, true
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	st.list, st.files, st.pems, st.names = cas, files, pems, names
	return nil
}

// blockContext is everything outside a backend that its block may depend on; blocks rendered in
// another context are dropped.
type blockContext struct {
	tmpl     *Template
	custom   bool
	dir      string
	settings model.Settings
	cas      string
	gen      uint64
}

func newBlockContext(tmpl *Template, custom bool, d *Data) blockContext {
	names := make([]string, len(d.Config.CAFiles))
	for i, c := range d.Config.CAFiles {
		names[i] = c.Name
	}
	slices.Sort(names)
	return blockContext{tmpl: tmpl, custom: custom, dir: d.Dir, settings: d.Config.Settings, cas: strings.Join(names, "\n")}
}

func (c blockContext) equal(o blockContext) bool {
	return c.tmpl == o.tmpl && c.custom == o.custom && c.dir == o.dir && c.cas == o.cas &&
		reflect.DeepEqual(c.settings, o.settings)
}

// Configuration returns the configuration HAProxy reads from files (a Render result): haproxy.cfg,
// then the files of layout.BackendsDir in name order, as HAProxy loads them with ConfigArgs, one blank line
// between files.
func Configuration(files []File) []byte {
	var out []byte
	add := func(data []byte) {
		if len(out) > 0 && !bytes.HasSuffix(out, []byte("\n\n")) {
			out = append(out, '\n')
		}
		out = append(out, data...)
	}
	for _, f := range files {
		if f.Path == layout.Config {
			add(f.Data)
		}
	}
	for _, f := range files { // sorted by path
		if path.Dir(f.Path) == layout.BackendsDir && strings.HasSuffix(f.Path, ".cfg") {
			add(f.Data)
		}
	}
	return out
}

// defaultCertificate returns the default certificate of cfg: its listener file, else Options'.
func (r *Renderer) defaultCertificate(cfg *model.Config) []byte {
	if pem := cfg.Listener.DefaultCertificate; pem != "" {
		return r.listenerFile(&r.listenerCert, pem)
	}
	return r.defaultCert
}

// listenerFile returns pem as a file's Data, ending with a newline, reusing *last when it holds the
// same bytes.
func (r *Renderer) listenerFile(last *[]byte, pem string) []byte {
	data := []byte(pem)
	if !strings.HasSuffix(pem, "\n") {
		data = append(data, '\n')
	}
	*last = reuse(*last, data)
	return *last
}
