package source

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/haroute/haroute/mapping"
)

// Modes of the manifest cache: its entries may hold Secrets (TLS keys), so only haroute's user reads
// them. Missing parents of the cache directory get the HAProxy directory's usual mode.
const (
	cacheDirMode    fs.FileMode = 0o700
	cacheParentMode fs.FileMode = 0o755
	cacheFileMode   fs.FileMode = 0o600
)

// cacheVersion is the format of an entry; an entry of another format is removed, not read.
const cacheVersion = 1

// cacheEntry is one file of the manifest cache: the path of a manifest file, as the Folder names it,
// and the bytes of its content last in force.
type cacheEntry struct {
	Version int    `json:"version"`
	Path    string `json:"path"`
	Data    []byte `json:"data"`
}

// manifestCache keeps, in a directory, the bytes of every manifest file's content last in force, so
// that a restarted Folder can keep the objects of a file that does not decode when it starts (and has
// no content of its own in force yet). Its methods run on Run's goroutine. An I/O error is logged and
// never stops the Folder: the cache only ever adds content that would otherwise be missing.
type manifestCache struct {
	dir string
	log *slog.Logger
	// sums are the digests of the bytes each entry on disk holds, by manifest path.
	sums map[string][sha256.Size]byte
	// loaded are the entries read when Run started, by manifest path, until the first scan has used
	// them.
	loaded map[string][]byte
}

func newManifestCache(dir string, log *slog.Logger) *manifestCache {
	return &manifestCache{dir: dir, log: log, sums: map[string][sha256.Size]byte{}, loaded: map[string][]byte{}}
}

// entryName is the file name of the entry of the manifest file path.
func entryName(path string) string {
	sum := sha256.Sum256([]byte(path))
	return hex.EncodeToString(sum[:]) + ".json"
}

// load reads the entries on disk. An entry that cannot be read, is of another format or is stored
// under another name than its path's (a hash collision, a copied or damaged file) is removed, and so
// is a temporary file left by an interrupted write.
func (c *manifestCache) load() {
	entries, err := os.ReadDir(c.dir)
	if errors.Is(err, fs.ErrNotExist) {
		return
	}
	if err != nil {
		c.log.Warn("manifest cache not read: the files that do not decode at start have no content in force", "dir", c.dir, "error", err)
		return
	}
	for _, e := range entries {
		name := e.Name()
		if !e.Type().IsRegular() {
			continue
		}
		full := filepath.Join(c.dir, name)
		if strings.HasPrefix(name, ".") {
			c.removeFile(full)
			continue
		}
		entry, err := readEntry(full)
		switch {
		case err != nil:
			c.log.Warn("manifest cache: removing an entry that cannot be read", "file", full, "error", err)
		case entryName(entry.Path) != name:
			c.log.Warn("manifest cache: removing an entry stored under another name than its path's", "file", full, "path", entry.Path)
		default:
			c.loaded[entry.Path] = entry.Data
			c.sums[entry.Path] = sha256.Sum256(entry.Data)
			continue
		}
		c.removeFile(full)
	}
}

// readEntry reads and checks one entry file.
func readEntry(file string) (cacheEntry, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return cacheEntry{}, fmt.Errorf("reading a manifest cache entry: %w", err)
	}
	var e cacheEntry
	if err := json.Unmarshal(data, &e); err != nil {
		return cacheEntry{}, fmt.Errorf("decoding manifest cache entry %s: %w", file, err)
	}
	if e.Version != cacheVersion || e.Path == "" || e.Data == nil {
		return cacheEntry{}, fmt.Errorf("manifest cache entry %s: format %d, want %d with a path and data", file, e.Version, cacheVersion)
	}
	return e, nil
}

// take returns the bytes the cache held at start for path, if any.
func (c *manifestCache) take(path string) ([]byte, bool) {
	data, ok := c.loaded[path]
	return data, ok
}

// store makes the entry of path hold data, unless it already does. It writes a temporary file and
// renames it, so that an entry is whole or absent. It does not fsync: the cache serves a restart of
// haroute, across which the page cache persists; an entry cut by a crash of the machine fails to
// decode and is removed at the next start.
func (c *manifestCache) store(path string, data []byte, sum [sha256.Size]byte) {
	if old, ok := c.sums[path]; ok && old == sum {
		return
	}
	if err := c.write(path, data); err != nil {
		c.log.Warn("manifest cache not written: after a restart, this file's objects are missing while it does not decode",
			"path", path, "error", err)
		delete(c.sums, path) // what is on disk is unknown: written again at the next change
		return
	}
	c.sums[path] = sum
}

func (c *manifestCache) write(path string, data []byte) error {
	body, err := json.Marshal(cacheEntry{Version: cacheVersion, Path: path, Data: data})
	if err != nil {
		return fmt.Errorf("encoding the manifest cache entry: %w", err)
	}
	if err := c.mkdir(); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(c.dir, ".entry-*")
	if err != nil {
		return fmt.Errorf("writing the manifest cache: %w", err)
	}
	defer func() {
		if tmp != nil {
			_ = tmp.Close()
			_ = os.Remove(tmp.Name())
		}
	}()
	if err := tmp.Chmod(cacheFileMode); err != nil {
		return fmt.Errorf("writing the manifest cache: %w", err)
	}
	if _, err := tmp.Write(body); err != nil {
		return fmt.Errorf("writing the manifest cache: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("writing the manifest cache: %w", err)
	}
	name := tmp.Name()
	if err := os.Rename(name, filepath.Join(c.dir, entryName(path))); err != nil {
		tmp = nil
		_ = os.Remove(name)
		return fmt.Errorf("writing the manifest cache: %w", err)
	}
	tmp = nil
	return nil
}

// mkdir creates the cache directory (mode 0700) and its missing parents.
func (c *manifestCache) mkdir() error {
	if err := os.MkdirAll(filepath.Dir(c.dir), cacheParentMode); err != nil {
		return fmt.Errorf("creating the manifest cache directory: %w", err)
	}
	if err := os.Mkdir(c.dir, cacheDirMode); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("creating the manifest cache directory: %w", err)
	}
	return nil
}

// drop removes the entry of path, if there is one.
func (c *manifestCache) drop(path string) {
	if _, ok := c.sums[path]; !ok {
		return
	}
	delete(c.sums, path)
	c.removeFile(filepath.Join(c.dir, entryName(path)))
}

func (c *manifestCache) removeFile(file string) {
	if err := os.Remove(file); err != nil && !errors.Is(err, fs.ErrNotExist) {
		c.log.Warn("manifest cache: removing an entry", "file", file, "error", err)
	}
}

// sync brings the cache in line with the Folder's files after a scan: every file whose content in
// force is its own has an entry with those bytes, and the entries of files no longer in the folder
// are removed (those under a directory that could not be listed are kept: their files may be there).
// After the first scan, the entries read at start are released.
func (f *Folder) syncCache(unlisted []string, first bool) {
	c := f.cache
	if c == nil {
		return
	}
	for path, st := range f.files {
		if st.good != nil && !st.fromCache {
			c.store(path, st.goodData, st.goodSum)
		}
	}
	var pruned int
	for path := range c.sums {
		if f.files[path] == nil && !under(path, unlisted) {
			c.drop(path)
			pruned++
		}
	}
	if first {
		if pruned > 0 {
			f.log.Info("manifest cache: removed the entries of files no longer in the folder", "dir", c.dir, "entries", pruned)
		}
		clear(c.loaded)
	}
}

// seed gives a file seen for the first time since the start the content the cache holds for it, as
// its content in force, when the file's bytes now are others (read is false when they could not be
// read). The file's own content then replaces it as usual: at once when it decodes and keeps every
// object, after the settle time when it drops some, never while it does not decode.
func (f *Folder) seed(path string, st *fileState, data []byte, read bool) {
	if f.cache == nil {
		return
	}
	cached, ok := f.cache.take(path)
	if !ok || (read && bytes.Equal(cached, data)) {
		return
	}
	part, err := mapping.DecodeManifests(path, cached)
	if err == nil {
		ids := objectIDs(part)
		if err = duplicateIn(path, ids); err == nil {
			st.accept(content{in: part, ids: ids, data: cached, sum: sha256.Sum256(cached)})
			st.fromCache = true
			return
		}
	}
	f.log.Warn("manifest cache: the content last seen before the restart does not decode either; not used", "path", path, "error", err)
}
