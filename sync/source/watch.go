package source

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/haroute/haroute/mapping"
)

// debounce is how long the watcher gathers file system events before it re-scans the folder.
const debounce = 50 * time.Millisecond

// FileError is the current problem of one manifest file (or of a directory that could not be listed).
type FileError struct {
	Path string
	Err  error
}

// Folder watches a folder of manifest files (the files LoadDir reads) and keeps, for every file, the
// objects of its last content that decoded without error: its content in force. New content that
// decodes but drops objects of the content in force, in a file rewritten in place (not replaced by a
// rename), is held until the file's bytes have not changed for settleTime (a writer that truncates
// and rewrites a file shows it empty for a moment); a file deleted from the folder is withdrawn at
// once. With SetCacheDir, the
// content in force of every file is kept on disk, so that after a restart a file that does not decode
// keeps the objects it had. Create it with NewFolder, run Run once, and read Snapshot whenever Changes
// fires.
type Folder struct {
	dir     string
	log     *slog.Logger
	changes chan struct{}
	running atomic.Bool
	synced  atomic.Bool // the first scan has been published

	// Owned by Run's goroutine.
	files   map[string]*fileState
	order   []string // files in LoadDir's order
	watched map[string]bool
	summary string               // fingerprint of the effective state last published
	now     func() time.Time     // the clock of stampAges and of held files; tests replace it before Run
	stable  Stable               // keeps unchanged objects' pointers from one publication to the next
	ages    map[string]time.Time // "namespace/name" of every Route of the last scan → when the folder first showed it
	settle  time.Duration        // settleTime; tests shorten it
	cache   *manifestCache       // nil: no cache (SetCacheDir)

	mu   sync.Mutex
	in   mapping.Input
	errs []FileError
}

// fileState is what the watcher knows about one manifest file.
type fileState struct {
	data     []byte            // the bytes last read, to skip decoding unchanged content
	info     fs.FileInfo       // the file they were read from, to tell a file replaced by a rename
	good     *mapping.Input    // the content in force: the last that decoded cleanly; nil if there never was one
	goodSum  [sha256.Size]byte // digest of the bytes of good
	goodData []byte            // the bytes of good, for the cache
	ids      []string          // the object names of good
	err      error             // why the current content is not used, nil if it is good
	held     *heldContent      // content that drops objects of good, waiting for the settle time
	// fromCache says that good is the content the cache held at start, not one read since.
	fromCache bool
	// cacheWarned says that the use of the cached content was logged.
	cacheWarned bool
}

// NewFolder returns a watcher for the manifest files under dir. It does no I/O; Run does. A nil log
// discards messages.
func NewFolder(dir string, log *slog.Logger) *Folder {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Folder{
		dir:     filepath.Clean(dir),
		log:     log,
		changes: make(chan struct{}, 1),
		files:   map[string]*fileState{},
		watched: map[string]bool{},
		now:     time.Now,
		ages:    map[string]time.Time{},
		settle:  settleTime,
	}
}

// SetCacheDir makes the Folder keep the bytes of every file's content in force in dir (created when
// needed, mode 0700), so that after a restart a file that does not decode keeps the objects it had
// before (see manifestCache). Empty: no cache, the default. Call it before Run.
func (f *Folder) SetCacheDir(dir string) {
	if dir == "" {
		f.cache = nil
		return
	}
	f.cache = newManifestCache(filepath.Clean(dir), f.log)
}

// Changes returns a channel that receives a value after the effective Input or the set of file errors
// has changed, including once after Run's first scan. Signals coalesce: one pending value stands for
// any number of changes, so a reader should call Snapshot after each receive.
func (f *Folder) Changes() <-chan struct{} { return f.changes }

// HasSynced reports whether Run's first scan has been published.
func (f *Folder) HasSynced() bool { return f.synced.Load() }

// Snapshot returns the merged Input built from the last good content of every file, in LoadDir's file
// order, and the current error of every file whose content is not (entirely) in force (a held file
// included), sorted by path.
// A Route whose manifest has no creationTimestamp carries the time the folder first showed it (see
// stampAges). The lists are the caller's; the objects are shared and read-only: an object that did
// not change keeps its pointer from one snapshot to the next (Stable), which lets
// mapping.Translator skip it.
func (f *Folder) Snapshot() (mapping.Input, []FileError) {
	f.mu.Lock()
	defer f.mu.Unlock()
	in := mapping.Input{
		Routes:         slices.Clone(f.in.Routes),
		Services:       slices.Clone(f.in.Services),
		EndpointSlices: slices.Clone(f.in.EndpointSlices),
		Namespaces:     slices.Clone(f.in.Namespaces),
		Secrets:        slices.Clone(f.in.Secrets),
	}
	return in, slices.Clone(f.errs)
}

// Run scans the folder, then watches it and re-scans it (after a short debounce) on every file system
// event, and when the settle time of a held file ends, until ctx ends, when it returns nil. It returns
// an error if the folder cannot be watched at all: it does not exist, is not a directory, or the watch
// cannot be set up. Run may be called once.
func (f *Folder) Run(ctx context.Context) error {
	if !f.running.CompareAndSwap(false, true) {
		return errors.New("manifests: Folder.Run called twice")
	}
	st, err := os.Stat(f.dir)
	if err != nil {
		return fmt.Errorf("manifests: %w", err)
	}
	if !st.IsDir() {
		return fmt.Errorf("manifests: %s is not a directory", f.dir)
	}
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return fmt.Errorf("watching manifests in %s: %w", f.dir, err)
	}
	defer func() {
		if err := w.Close(); err != nil {
			f.log.Warn("closing the manifest watcher", "dir", f.dir, "error", err)
		}
	}()
	// The root is watched before the first scan, so that nothing written after the scan goes unseen.
	if err := w.Add(f.dir); err != nil {
		return fmt.Errorf("watching manifests in %s: %w", f.dir, err)
	}
	f.watched[f.dir] = true

	if f.cache != nil {
		f.cache.load()
	}

	timer := time.NewTimer(debounce)
	defer timer.Stop()
	var fire <-chan time.Time // non-nil while a re-scan is pending
	schedule := func() {
		if fire == nil {
			timer.Reset(debounce)
			fire = timer.C
		}
	}
	// The settle timer re-scans when the settle time of the earliest held file ends.
	settled := time.NewTimer(time.Hour)
	defer settled.Stop()
	var settle <-chan time.Time // non-nil while a file is held
	scan := func(first bool) {
		again, wait := f.rescan(w, first)
		if again {
			schedule()
		}
		settled.Stop()
		settle = nil
		if wait > 0 {
			settled.Reset(wait)
			settle = settled.C
		}
	}
	timer.Stop()
	settled.Stop()
	scan(true)
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev, ok := <-w.Events:
			if !ok {
				return fmt.Errorf("watching manifests in %s: the watcher stopped", f.dir)
			}
			f.log.Debug("manifest folder event", "event", ev.String())
			schedule()
		case err, ok := <-w.Errors:
			if !ok {
				return fmt.Errorf("watching manifests in %s: the watcher stopped", f.dir)
			}
			// An overflow loses events: a re-scan makes up for them.
			f.log.Warn("watching manifests", "dir", f.dir, "error", err)
			schedule()
		case <-fire:
			fire = nil
			scan(false)
		case <-settle:
			settle = nil
			scan(false)
		}
	}
}

// rescan lists and reads the folder, updates every file's state, adds watches on new directories,
// publishes the result if it changed (or if first is set) and brings the cache in line. It reports
// whether it added a watch (again): files written in a new directory before its watch existed are then
// picked up by another re-scan; and how long until the settle time of a held file ends (wait, 0 when
// no file is held), when another re-scan must take or keep that file's content.
func (f *Folder) rescan(w *fsnotify.Watcher, first bool) (again bool, wait time.Duration) {
	list := listFolder(f.dir)
	again = f.updateWatches(w, list.dirs)
	clock := &scanClock{read: f.now}

	present := make(map[string]bool, len(list.files))
	for _, path := range list.files {
		present[path] = true
		f.readFile(path, clock)
	}
	for path := range f.files {
		if !present[path] && !under(path, list.unlisted) {
			delete(f.files, path)
		}
	}
	// Files under a directory that could not be listed keep their place after the listed ones.
	order := slices.Clone(list.files)
	for _, path := range f.order {
		if !present[path] && f.files[path] != nil {
			order = append(order, path)
		}
	}
	f.order = order

	in, errs, summary := f.merge(list.problems)
	f.stampAges(&in)
	wait = f.nextSettle(clock)
	if first || summary != f.summary {
		f.publish(in, errs, summary)
	}
	// After the publication: the cache's writes never delay a change.
	f.syncCache(list.unlisted, first)
	return again, wait
}

// publish makes in and errs the snapshot and signals Changes.
func (f *Folder) publish(in mapping.Input, errs []FileError, summary string) {
	f.logErrors(errs)
	f.summary = summary
	in = f.stable.Input(in)
	f.mu.Lock()
	f.in, f.errs = in, errs
	f.mu.Unlock()
	f.synced.Store(true)
	select {
	case f.changes <- struct{}{}:
	default:
	}
}

// readFile reads one listed file and updates its state.
func (f *Folder) readFile(path string, clock *scanClock) {
	st := f.files[path]
	data, info, err := readManifest(path)
	if errors.Is(err, fs.ErrNotExist) {
		// Removed between listing and reading (or a dangling link): gone, like a deleted file.
		delete(f.files, path)
		return
	}
	if st == nil {
		st = &fileState{}
		f.files[path] = st
		f.seed(path, st, data, err == nil)
	}
	defer f.warnCached(path, st)
	if err != nil {
		st.data, st.info, st.held, st.err = nil, nil, nil, fmt.Errorf("reading manifests: %w", err)
		return
	}
	// A file that is another one than at the last read was put there by a rename: it is complete.
	replaced := st.info != nil && !os.SameFile(st.info, info)
	st.info = info
	if st.data != nil && bytes.Equal(data, st.data) {
		f.settleHeld(path, st, clock)
		return
	}
	st.data = data
	part, err := mapping.DecodeManifests(path, data)
	if err != nil {
		st.err, st.held = err, nil
		return
	}
	ids := objectIDs(part)
	if err := duplicateIn(path, ids); err != nil {
		st.err, st.held = err, nil
		return
	}
	f.offer(path, st, content{in: part, ids: ids, data: data, sum: sha256.Sum256(data)}, replaced, clock)
}

// warnCached logs, once, that a file's objects come from the cache because its own content is not
// used.
func (f *Folder) warnCached(path string, st *fileState) {
	if !st.fromCache || st.err == nil || st.cacheWarned {
		return
	}
	st.cacheWarned = true
	f.log.Warn("manifest file not usable at start: its Routes and other objects come from its content last seen before the restart",
		"path", path, "error", st.err)
}

// merge builds the effective Input from the files' good content in order, leaving out a file whose
// objects are already defined by an earlier file. It returns the Input, the sorted errors and a
// fingerprint of both that changes whenever either does.
func (f *Folder) merge(problems []FileError) (mapping.Input, []FileError, string) {
	var (
		in      mapping.Input
		errs    = slices.Clone(problems)
		summary strings.Builder
		owner   = map[string]string{}
	)
	for _, p := range problems {
		fmt.Fprintf(&summary, "problem %q %q\n", p.Path, p.Err)
	}
	for _, path := range f.order {
		st := f.files[path]
		if st.good != nil {
			if conflict := firstConflict(st.ids, owner); conflict != "" {
				err := fmt.Errorf("%s: %s is already defined in %s; the objects of this file are not used", path, conflict, owner[conflict])
				if st.err != nil {
					err = fmt.Errorf("%w; its last good content is not used either: %s is already defined in %s", st.err, conflict, owner[conflict])
				}
				errs = append(errs, FileError{Path: path, Err: err})
				fmt.Fprintf(&summary, "error %q %q\n", path, err)
				continue
			}
			for _, id := range st.ids {
				owner[id] = path
			}
			appendInput(&in, *st.good)
			fmt.Fprintf(&summary, "good %q %x\n", path, st.goodSum)
		}
		if st.err != nil {
			err := st.err
			if st.fromCache {
				err = fmt.Errorf("%w; in force instead: the content last seen before the restart (manifest cache)", err)
			}
			errs = append(errs, FileError{Path: path, Err: err})
			fmt.Fprintf(&summary, "error %q %q\n", path, err)
		}
	}
	slices.SortStableFunc(errs, func(a, b FileError) int { return strings.Compare(a.Path, b.Path) })
	return in, errs, summary.String()
}

// logErrors logs the file errors that are new or changed since the last published state, and the
// files whose error went away.
func (f *Folder) logErrors(errs []FileError) {
	f.mu.Lock()
	prev := f.errs
	f.mu.Unlock()
	old := map[string]string{}
	for _, e := range prev {
		old[e.Path] = e.Err.Error()
	}
	now := map[string]bool{}
	for _, e := range errs {
		now[e.Path] = true
		if old[e.Path] != e.Err.Error() {
			f.log.Warn("manifest file not (entirely) used", "path", e.Path, "error", e.Err)
		}
	}
	for _, e := range prev {
		// The end of a hold is logged where it ends (offer, settleHeld): nothing was broken.
		var held *heldError
		if !now[e.Path] && !errors.As(e.Err, &held) {
			f.log.Info("manifest file fixed", "path", e.Path)
		}
	}
}

// updateWatches watches every directory in dirs that is not watched yet and drops the watches of
// directories no longer needed. It reports whether it added a watch.
func (f *Folder) updateWatches(w *fsnotify.Watcher, dirs []string) bool {
	want := map[string]bool{f.dir: true}
	added := false
	for _, d := range dirs {
		want[d] = true
		if f.watched[d] {
			continue
		}
		if err := w.Add(d); err != nil {
			// Tried again on the next re-scan.
			f.log.Warn("watching a manifest directory", "dir", d, "error", err)
			continue
		}
		f.watched[d] = true
		added = true
	}
	for d := range f.watched {
		if want[d] {
			continue
		}
		delete(f.watched, d)
		// A deleted directory has lost its watch already; that error means nothing.
		if err := w.Remove(d); err != nil && !errors.Is(err, fsnotify.ErrNonExistentWatch) {
			f.log.Debug("unwatching a manifest directory", "dir", d, "error", err)
		}
	}
	return added
}

// under reports whether path is one of dirs or inside one of them.
func under(path string, dirs []string) bool {
	for _, d := range dirs {
		if path == d || strings.HasPrefix(path, d+string(filepath.Separator)) {
			return true
		}
	}
	return false
}

// duplicateIn reports an object defined twice within one file.
func duplicateIn(path string, ids []string) error {
	seen := make(map[string]bool, len(ids))
	for _, id := range ids {
		if seen[id] {
			return fmt.Errorf("%s: %s is defined twice in %s", path, id, path)
		}
		seen[id] = true
	}
	return nil
}

// firstConflict returns the first of ids that already has an owner, or "".
func firstConflict(ids []string, owner map[string]string) string {
	for _, id := range ids {
		if _, ok := owner[id]; ok {
			return id
		}
	}
	return ""
}

// appendInput appends the objects of part to in.
func appendInput(in *mapping.Input, part mapping.Input) {
	in.Routes = append(in.Routes, part.Routes...)
	in.Services = append(in.Services, part.Services...)
	in.EndpointSlices = append(in.EndpointSlices, part.EndpointSlices...)
	in.Namespaces = append(in.Namespaces, part.Namespaces...)
	in.Secrets = append(in.Secrets, part.Secrets...)
}
