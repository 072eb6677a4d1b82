package reload

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/haroute/haroute/internal/testkit"
	"github.com/haroute/haroute/mapping/render"
)

func TestWriteFiles(t *testing.T) {
	out := t.TempDir()
	files := []render.File{
		{Path: "conf/haproxy.cfg", Data: []byte("global\n")},
		{Path: "conf/os_http_be.map", Data: []byte("a/ be_http:ns:a\n")},
		{Path: "conf/default_pub_keys.pem", Data: []byte("-----BEGIN CERTIFICATE-----\n")},
		{Path: "router/certs/ns:a.pem", Data: []byte("cert\n")},
		{Path: "router/cacerts/ns:a.pem", Data: []byte("-----BEGIN CERTIFICATE-----\n")},
	}
	// Leftovers of an earlier render, and files that are not haroute's.
	stale := map[string]string{
		"conf/os_old.map":            "x",
		"router/certs/ns:gone.pem":   "x",
		"router/cacerts/ns:gone.pem": "x",
		"conf/notes.txt":             "keep",
		"conf/sub/deep.map":          "keep",
		"other/x.map":                "keep",
	}
	for rel, data := range stale {
		p := filepath.Join(out, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := WriteFiles(out, files); err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if got := testkit.ReadFile(t, filepath.Join(out, f.Path)); got != string(f.Data) {
			t.Errorf("%s = %q, want %q", f.Path, got, f.Data)
		}
	}
	wantModes := map[string]fs.FileMode{
		"conf/haproxy.cfg": 0o644, "conf/os_http_be.map": 0o644, "router/cacerts/ns:a.pem": 0o644,
		"conf/default_pub_keys.pem": 0o600, "router/certs/ns:a.pem": 0o600,
		"run": 0o755, "conf": 0o755, "router/certs": 0o755,
	}
	for rel, want := range wantModes {
		if got := testkit.FileMode(t, filepath.Join(out, rel)); got != want {
			t.Errorf("%s: mode %v, want %v", rel, got, want)
		}
	}
	for rel, data := range stale {
		_, err := os.Stat(filepath.Join(out, rel))
		if data == "keep" && err != nil {
			t.Errorf("%s was removed: %v", rel, err)
		}
		if data != "keep" && err == nil {
			t.Errorf("stale %s was not removed", rel)
		}
	}
	entries, err := os.ReadDir(filepath.Join(out, "conf"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if filepath.Ext(e.Name()) != ".map" && filepath.Ext(e.Name()) != ".pem" && filepath.Ext(e.Name()) != ".cfg" &&
			e.Name() != "notes.txt" && e.Name() != "sub" && e.Name() != "backends" {
			t.Errorf("unexpected file conf/%s (temporary file left behind?)", e.Name())
		}
	}

	// Content changes replace the file; a private file made public again is fixed.
	if err := os.Chmod(filepath.Join(out, "conf/haproxy.cfg"), 0o600); err != nil {
		t.Fatal(err)
	}
	files[1].Data = []byte("b/ be_http:ns:b\n")
	if err := WriteFiles(out, files); err != nil {
		t.Fatal(err)
	}
	if got := testkit.ReadFile(t, filepath.Join(out, "conf/os_http_be.map")); got != "b/ be_http:ns:b\n" {
		t.Errorf("map not rewritten: %q", got)
	}
	if got := testkit.FileMode(t, filepath.Join(out, "conf/haproxy.cfg")); got != 0o644 {
		t.Errorf("haproxy.cfg mode %v after rewrite, want 0644", got)
	}
}

func TestWriteFilesRefusesEscapingPaths(t *testing.T) {
	for _, p := range []string{"../x.map", "/etc/x.map", "conf/../../x.map", "conf//x.map", ""} {
		if err := WriteFiles(t.TempDir(), []render.File{{Path: p, Data: []byte("x")}}); err == nil {
			t.Errorf("path %q accepted", p)
		}
	}
}

func TestWriteFilesReportsTheFile(t *testing.T) {
	out := t.TempDir()
	// conf is a file, so nothing can be written under it.
	if err := os.WriteFile(filepath.Join(out, "conf"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	err := WriteFiles(out, []render.File{{Path: "conf/haproxy.cfg", Data: []byte("x")}})
	if err == nil {
		t.Fatal("write under a file succeeded")
	}
	if want := filepath.Join(out, "conf", "haproxy.cfg"); !strings.Contains(err.Error(), want) {
		t.Errorf("error %q does not name %s", err, want)
	}
}
