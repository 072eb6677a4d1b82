package mapping_test

import (
	"bytes"
	"fmt"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/haroute/haroute/mapping"
	"github.com/haroute/haroute/mapping/layout"
	"github.com/haroute/haroute/mapping/mappingtest"
	"github.com/haroute/haroute/mapping/model"
	"github.com/haroute/haroute/mapping/render"
)

// fatalRecorder is a fatalT that records the first failure and stops the checking goroutine.
type fatalRecorder struct{ msg string }

func (r *fatalRecorder) Helper() {}

func (r *fatalRecorder) Fatalf(format string, args ...any) {
	r.msg = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

// runChecks runs checkRender on its own goroutine and returns the failure it recorded ("" for none).
func runChecks(in mapping.Input, opts mapping.Options, files []render.File, tl templateLines) string {
	rec := &fatalRecorder{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		cfg, _ := mapping.Translate(in, opts)
		checkRender(rec, in, opts, cfg, files, tl)
	}()
	<-done
	return rec.msg
}

// TestRenderChecksCatchTampering shows that the invariants of FuzzTranslateRender can fail: the render
// of a case with every kind of file passes them, and each of a list of lines nothing in the input
// explains, added to it, makes them fail.
func TestRenderChecksCatchTampering(t *testing.T) {
	// A case with maps, wildcard entries and a crt-list line.
	const caseName = "wildcard-allowed"
	data := readFile(t, filepath.Join("testdata", "cases", caseName+".yaml"))
	in, opts, err := mappingtest.ParseCase(data, caseName)
	if err != nil {
		t.Fatal(err)
	}
	cfg, _ := mapping.Translate(in, opts)
	files, err := render.Render(cfg, render.Options{Dir: fuzzDir, DefaultCertificatePEM: fuzzDefaultCert(t)})
	if err != nil {
		t.Fatal(err)
	}
	tl := templateDirectives(t)
	if msg := runChecks(in, opts, files, tl); msg != "" {
		t.Fatalf("the untouched render fails the checks: %s", msg)
	}
	if len(cfg.Certificates) == 0 || len(cfg.Backends) < 2 {
		t.Fatalf("case %s gives %d certificates and %d backends: pick a case with more", caseName, len(cfg.Certificates), len(cfg.Backends))
	}
	backend := cfg.Backends[0].Name
	header := "backend " + backend + " from " + cfg.Backends[0].Profile() + "\n"
	backendFile := render.ShardFile(backend)
	tampers := []struct {
		name, file string
		edit       func(string) string
	}{
		{"unknown directive", backendFile, func(s string) string {
			return strings.Replace(s, header, header+"  http-request return status 200\n", 1)
		}},
		{"environment", fuzzConfigFile, func(s string) string { return s + "  log ${SYSLOG} local0\n" }},
		{"control character", fuzzConfigFile, func(s string) string { return s + "  # \x1b[2J\n" }},
		{"backend of no Route", fuzzConfigFile, func(s string) string { return s + "backend be_http:other:evil\n  mode http\n" }},
		{"backend of no Route, in a backend file", backendFile, func(s string) string { return s + "backend be_http:other:evil\n  mode http\n" }},
		{"server of no endpoint", backendFile, func(s string) string {
			return strings.Replace(s, header, header+"  server evil 10.0.0.1:80\n", 1)
		}},
		{"map line of no Route", layout.InConf(model.MapHTTP), func(s string) string { return s + "evil.example.com/ " + backend + "\n" }},
		{"map line of three words", layout.InConf(model.MapHTTP), func(s string) string { return s + "x.example.com/ " + backend + " 1\n" }},
		{"crt-list SNI of no Route", fuzzCrtList, func(s string) string { return strings.Replace(s, "\n", " evil.example.com\n", 1) }},
		{"crt-list without SNI", fuzzCrtList, func(s string) string {
			first, _, _ := strings.Cut(s, " ")
			return s + first + "\n"
		}},
	}
	for _, tc := range tampers {
		t.Run(tc.name, func(t *testing.T) {
			edited := slices.Clone(files)
			i := slices.IndexFunc(edited, func(f render.File) bool { return f.Path == tc.file })
			if i < 0 {
				t.Fatalf("the render has no %s", tc.file)
			}
			data := []byte(tc.edit(string(edited[i].Data)))
			if bytes.Equal(data, edited[i].Data) {
				t.Fatalf("the edit changed nothing in %s", tc.file)
			}
			edited[i].Data = data
			msg := runChecks(in, opts, edited, tl)
			if msg == "" {
				t.Fatalf("the checks pass a render with %s", tc.name)
			}
			t.Logf("refused: %s", msg)
		})
	}
	t.Run("extra file", func(t *testing.T) {
		edited := append(slices.Clone(files), render.File{Path: fuzzCertDir + "/evil.pem", Data: []byte("x\n")})
		if msg := runChecks(in, opts, edited, tl); msg == "" {
			t.Fatal("the checks pass a render with a file of no certificate")
		}
	})
}
