package traffic

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/haroute/haroute/e2e/testbed"
	"github.com/haroute/haroute/mapping"
)

// compressBody is what the compression backend sends: 16 KiB of compressible text.
var compressBody = strings.Repeat("haroute compresses what the router's IngressController asks for. ", 256)

// contentTypes are the compression backend's paths and the Content-Type each answers with.
var contentTypes = map[string]string{
	"/html":  "text/html; charset=utf-8",
	"/json":  "application/json",
	"/plain": "text/plain; charset=utf-8",
	"/css":   "text/css",
}

// TestCompression: with ROUTER_ENABLE_COMPRESSION=true and ROUTER_COMPRESSION_MIME="text/html
// application/json", HAProxy gzips responses of those types (a Content-Type with parameters
// included) for clients that accept gzip, over HTTP and through edge termination; it leaves other
// types (text/plain, and text/css, in the default list only) and clients that do not ask for gzip
// alone.
func TestCompression(t *testing.T) {
	env := map[string]string{
		"ROUTER_ENABLE_COMPRESSION": "true",
		"ROUTER_COMPRESSION_MIME":   "text/html application/json",
	}
	f := newFixture(t)
	backend := startServer(t, "127.0.0.2", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ct, ok := contentTypes[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", ct)
		_, _ = io.WriteString(w, compressBody)
	}))
	f.m.ServiceAt("gz", "web", backend)
	f.m.Route("gz", "web", "www.gz.example.com", "", "web")
	crt, key := f.ca.Issue(t, "secure.gz.example.com")
	f.m.Route("gz", "secure", "secure.gz.example.com", "", "web", testbed.Edge(crt, key))
	r := f.startRouterOpts(t, envOptions(t, env))

	for _, base := range []string{"http://www.gz.example.com", "https://secure.gz.example.com"} {
		for _, tc := range []struct {
			path, accept string
			gzipped      bool
		}{
			{"/html", "gzip", true},
			{"/json", "gzip", true},
			{"/html", "gzip, deflate, br", true},
			{"/plain", "gzip", false},
			{"/css", "gzip", false},
			{"/html", "", false},
			{"/json", "identity", false},
		} {
			url := base + tc.path
			t.Run(url+" accept="+tc.accept, func(t *testing.T) {
				var h http.Header
				if tc.accept != "" {
					h = http.Header{"Accept-Encoding": {tc.accept}}
				}
				resp, err := r.Client.Do(http.MethodGet, url, h)
				if err != nil {
					t.Fatal(err)
				}
				if resp.Status != http.StatusOK {
					t.Fatalf("status %d, want 200 (body %q)", resp.Status, resp.Body)
				}
				if got := resp.Header.Get("Content-Type"); got != contentTypes[tc.path] {
					t.Errorf("Content-Type %q, want %q", got, contentTypes[tc.path])
				}
				enc := resp.Header.Get("Content-Encoding")
				if !tc.gzipped {
					if enc != "" || resp.Body != compressBody {
						t.Errorf("Content-Encoding %q and a body of %d bytes, want the backend's %d bytes as they are",
							enc, len(resp.Body), len(compressBody))
					}
					return
				}
				if enc != "gzip" {
					t.Fatalf("Content-Encoding %q, want gzip (%d bytes)", enc, len(resp.Body))
				}
				if !strings.Contains(resp.Header.Get("Vary"), "Accept-Encoding") {
					t.Errorf("a compressed response without Vary: Accept-Encoding (Vary %q)", resp.Header.Values("Vary"))
				}
				zr, err := gzip.NewReader(bytes.NewReader([]byte(resp.Body)))
				if err != nil {
					t.Fatalf("the body is not gzip: %v", err)
				}
				plain, err := io.ReadAll(zr)
				if err != nil {
					t.Fatalf("gunzip the body: %v", err)
				}
				if string(plain) != compressBody {
					t.Errorf("the body gunzips to %d bytes that differ from the backend's %d", len(plain), len(compressBody))
				}
				if len(resp.Body) >= len(compressBody)/4 {
					t.Errorf("%d compressed bytes for %d bytes of repeated text", len(resp.Body), len(compressBody))
				}
			})
		}
	}
}

// TestCompressionDisabled: without ROUTER_ENABLE_COMPRESSION, ROUTER_COMPRESSION_MIME alone
// compresses nothing.
func TestCompressionDisabled(t *testing.T) {
	env := map[string]string{"ROUTER_COMPRESSION_MIME": "text/html"}
	if o, err := mapping.FromEnv(func(n string) string { return env[n] }); err != nil || o.HTTP.CompressionTypes != "" {
		t.Fatalf("FromEnv: compression types %q, %v; want none", o.HTTP.CompressionTypes, err)
	}
	f := newFixture(t)
	backend := startServer(t, "127.0.0.2", http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		_, _ = io.WriteString(w, compressBody)
	}))
	f.m.ServiceAt("gz", "web", backend)
	f.m.Route("gz", "web", "www.gz.example.com", "", "web")
	r := f.startRouterOpts(t, envOptions(t, env))
	resp, err := r.Client.Do(http.MethodGet, "http://www.gz.example.com/", http.Header{"Accept-Encoding": {"gzip"}})
	if err != nil {
		t.Fatal(err)
	}
	if enc := resp.Header.Get("Content-Encoding"); resp.Status != 200 || enc != "" || resp.Body != compressBody {
		t.Errorf("status %d, Content-Encoding %q, %d bytes; want 200, the backend's %d bytes as they are",
			resp.Status, enc, len(resp.Body), len(compressBody))
	}
}
