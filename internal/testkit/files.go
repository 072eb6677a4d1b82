package testkit

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// Modes of the files WriteTree writes.
const (
	treeDirPerm  = os.FileMode(0o755)
	treeFilePerm = os.FileMode(0o600) // certificates hold private keys
)

// WriteTree writes files (a slash-separated path relative to dir → its content) under the absolute
// directory dir, adding to what is there: parent directories are made (0755), files get 0600. A path
// that is empty, absolute or leaves dir fails the test before anything is written.
func WriteTree(t testing.TB, dir string, files map[string][]byte) {
	t.Helper()
	if err := writeTree(dir, files); err != nil {
		t.Fatalf("testkit: %v", err)
	}
}

func writeTree(dir string, files map[string][]byte) error {
	if !filepath.IsAbs(dir) {
		return fmt.Errorf("write files: directory %q is not absolute", dir)
	}
	for p := range files {
		if p == "" || filepath.IsAbs(p) || !filepath.IsLocal(filepath.FromSlash(p)) {
			return fmt.Errorf("write files: path %q is not a relative path inside the directory", p)
		}
	}
	for p, data := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), treeDirPerm); err != nil {
			return fmt.Errorf("write files: %w", err)
		}
		if err := os.WriteFile(full, data, treeFilePerm); err != nil {
			return fmt.Errorf("write files: %w", err)
		}
	}
	return nil
}
