//go:build e2e

package bench

import (
	"bytes"
	"cmp"
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/haroute/haroute/e2e/testbed"
	"github.com/haroute/haroute/internal/testkit"
	"github.com/haroute/haroute/mapping"
	"github.com/haroute/haroute/mapping/layout"
	"github.com/haroute/haroute/mapping/model"
	"github.com/haroute/haroute/mapping/render"
	"github.com/haroute/haroute/runtime/haproxy"
	"github.com/haroute/haroute/runtime/socket"
)

// The forms of the data-plane benchmark (results.DataPlanePoint.Form).
const (
	// FormHaroute is haroute's rendered configuration: exact and prefix tree lookups.
	FormHaroute = "haroute"
	// FormMapReg is the same configuration with the public frontend's host and path lookup replaced
	// by the stock router's: one regular expression per Route in os_http_be.map, scanned by map_reg.
	FormMapReg = "map_reg"
)

// stockHTTPMapFile is the map file of the map_reg form, next to haroute's maps in conf/.
const stockHTTPMapFile = layout.ConfDir + "/os_http_be_reg.map"

// stockWildcardPrefix starts the regular expression of a wildcard Route; openshift/router's
// SortMapPaths puts those lines last.
const stockWildcardPrefix = `^[^\.]*\.`

// lookupVars are the variables haroute's frontends compute for their host and path lookup
// (mapping/render's "http-lookup" template): the map_reg form computes none of them.
var lookupVars = []string{"host", "path", "key", "xkey", "wkey", "wxkey", "wdom", "be"}

// RouteRegexp is openshift/router's GenerateRouteRegexp (pkg/router/template/util): host (any single
// label in place of the first for a wildcard host "*.domain"), an optional trailing dot and port,
// then the path and its sub-paths at a segment boundary; a path ending in "/" is a plain prefix, and
// "" or "/" match everything. White space in the path is escaped for the map file.
func RouteRegexp(host, path string) string {
	hostRE := regexp.QuoteMeta(host)
	if domain, ok := strings.CutPrefix(host, "*."); ok {
		hostRE = `[^\.]*\.` + regexp.QuoteMeta(domain)
	}
	var pathRE, subRE string
	switch {
	case strings.TrimRight(path, "/") == "":
		subRE = `(/.*)?`
	case strings.HasSuffix(path, "/"):
		pathRE, subRE = regexp.QuoteMeta(path), `(.*)?`
	default:
		pathRE, subRE = regexp.QuoteMeta(path), `(/.*)?`
	}
	pathRE = strings.NewReplacer(" ", `\x20`, "\t", `\t`, "\r", `\r`, "\n", `\n`).Replace(pathRE)
	return "^" + hostRE + `\.?(:[0-9]+)?` + pathRE + subRE + "$"
}

// StockHTTPMap returns os_http_be.map as the stock router writes it for routes: a line
// "<regexp> <backend>" per Route that plain HTTP reaches (no TLS, or edge and reencrypt with the
// insecure policy Allow), in the order of openshift/router's SortMapPaths: reverse string order,
// wildcard Routes last, so that a longer path of a host comes before a shorter one.
func StockHTTPMap(routes []model.RouteInfo) []byte {
	var lines []string
	for _, r := range routes {
		if r.Host == "" || r.Backend == "" || !reachedOverHTTP(r) {
			continue
		}
		lines = append(lines, RouteRegexp(r.Host, r.Path)+" "+r.Backend)
	}
	slices.SortFunc(lines, func(a, b string) int {
		wa, wb := strings.HasPrefix(a, stockWildcardPrefix), strings.HasPrefix(b, stockWildcardPrefix)
		if wa != wb {
			if wa {
				return 1
			}
			return -1
		}
		return cmp.Compare(b, a)
	})
	var buf bytes.Buffer
	for _, l := range lines {
		buf.WriteString(l + "\n")
	}
	return buf.Bytes()
}

// reachedOverHTTP reports whether plain HTTP reaches a Route: no TLS, or edge and reencrypt with the
// insecure policy Allow (openshift/router's generateHttpMapEntry).
func reachedOverHTTP(r model.RouteInfo) bool {
	if r.Termination == "" {
		return true
	}
	return (r.Termination == "edge" || r.Termination == "reencrypt") && r.InsecurePolicy == "Allow"
}

// UseMapReg rewrites haroute's haproxy.cfg for the map_reg form: in frontend public, the rules that
// compute the lookup's variables and look up txn.be in os_http_be.map are replaced, where the first
// of them was, by one rule that sets txn.be the stock router's way, `base,map_reg(mapPath)`. Every
// other line (the Host rewrite, redirects, forwarded headers, use_backend, the backends) is kept.
func UseMapReg(cfg []byte, mapPath string) ([]byte, error) {
	lines := strings.Split(string(cfg), "\n")
	start := slices.Index(lines, "frontend public")
	if start < 0 {
		return nil, errors.New("map_reg form: no frontend public")
	}
	end := start + 1
	for end < len(lines) && strings.HasPrefix(lines[end], " ") {
		end++
	}
	var out []string
	replaced, lookups := false, 0
	for _, l := range lines[start+1 : end] {
		if isLookupRule(l) {
			if strings.Contains(l, "os_http_be.map") {
				lookups++
			}
			if !replaced {
				out = append(out, "  http-request set-var(txn.be) base,map_reg("+mapPath+")")
				replaced = true
			}
			continue
		}
		for _, v := range lookupVars[:len(lookupVars)-1] { // txn.be stays: use_backend reads it
			if strings.Contains(l, "txn."+v+")") || strings.Contains(l, "txn."+v+",") {
				return nil, fmt.Errorf("map_reg form: frontend public still reads txn.%s: %q", v, l)
			}
		}
		out = append(out, l)
	}
	if lookups == 0 {
		return nil, errors.New("map_reg form: frontend public has no os_http_be.map lookup")
	}
	result := slices.Concat(lines[:start+1], out, lines[end:])
	return []byte(strings.Join(result, "\n")), nil
}

// isLookupRule reports whether a config line sets one of lookupVars.
func isLookupRule(l string) bool {
	rest, ok := strings.CutPrefix(strings.TrimSpace(l), "http-request set-var(txn.")
	if !ok {
		return false
	}
	name, _, ok := strings.Cut(rest, ")")
	return ok && slices.Contains(lookupVars, name)
}

// DataPlaneRouter is one HAProxy of the data-plane benchmark, in one form.
type DataPlaneRouter struct {
	Form    string
	HAProxy *testbed.HAProxy
	Client  *testkit.Client
	// Routes is what the translation admitted.
	Routes []model.RouteInfo
}

// StartDataPlaneRouter translates in as a test router (testbed.RouterOptions), renders the files
// `haroute run` starts HAProxy from (the spare pool included) and, for FormMapReg, rewrites the
// public frontend's lookup (UseMapReg) and adds the stock map; then it starts HAProxy on them and
// stops the dormant health checks, as haroute does after a start. It fails the test when a Route is
// rejected. Both forms go through this function, so they differ only in the rewrite.
func StartDataPlaneRouter(t testing.TB, in mapping.Input, form string, defaultCertPEM []byte, roots *x509.CertPool) *DataPlaneRouter {
	t.Helper()
	opts := testbed.RouterOptions(t)
	cfg, problems := mapping.Translate(in, opts)
	if cfg == nil {
		t.Fatalf("data plane: Translate returned no config (problems: %v)", problems)
	}
	for _, p := range problems {
		if !p.Warning {
			t.Fatalf("data plane: Route rejected: %s", p)
		}
	}
	dir := testkit.TempDir(t)
	inst, err := haproxy.New(haproxy.Config{Dir: dir, Render: render.Options{DefaultCertificatePEM: defaultCertPEM}, Binary: testkit.HAProxyBinary()})
	if err != nil {
		t.Fatalf("data plane: %v", err)
	}
	first, err := inst.InitialFiles(cfg)
	if err != nil {
		t.Fatalf("data plane: %v", err)
	}
	files := slices.Clone(first.Files)
	switch form {
	case FormHaroute:
	case FormMapReg:
		i := slices.IndexFunc(files, func(f render.File) bool { return f.Path == layout.Config })
		if i < 0 {
			t.Fatal("data plane: no " + layout.Config + " among the rendered files")
		}
		data, err := UseMapReg(files[i].Data, filepath.Join(dir, stockHTTPMapFile))
		if err != nil {
			t.Fatal(err)
		}
		files[i].Data = data
		files = append(files, render.File{Path: stockHTTPMapFile, Data: StockHTTPMap(first.State.Routes)})
	default:
		t.Fatalf("data plane: unknown form %q", form)
	}
	h := testbed.StartHAProxy(t, dir, files)
	if form == FormMapReg {
		checkStockMapLoaded(t, h, filepath.Join(dir, stockHTTPMapFile), len(first.State.Routes))
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := haproxy.StopDormantChecks(ctx, socket.NewAdmin(h.AdminSocket, socket.Options{}), first.State, dir); err != nil {
		t.Fatalf("data plane: %v", err)
	}
	return &DataPlaneRouter{Form: form, HAProxy: h, Client: testkit.NewClient(t, opts.HTTPPort, opts.HTTPSPort, roots), Routes: first.State.Routes}
}

// checkStockMapLoaded fails the test unless HAProxy's `show map` lists the map at path with one
// entry per Route (HAProxy 2.6 and newer print "entry_cnt=N" on each map's line).
func checkStockMapLoaded(t testing.TB, h *testbed.HAProxy, path string, routes int) {
	t.Helper()
	out, err := h.Cmd("show map")
	if err != nil {
		t.Fatalf("data plane: show map: %v", err)
	}
	for _, l := range strings.Split(out, "\n") {
		if !strings.Contains(l, "("+path+")") {
			continue
		}
		want := "entry_cnt=" + strconv.Itoa(routes)
		if !strings.Contains(l, want+" ") && !strings.HasSuffix(l, want) {
			t.Fatalf("data plane: the map_reg form's map holds other than %d entries: %s", routes, l)
		}
		return
	}
	t.Fatalf("data plane: HAProxy did not load %s; show map:\n%s", path, out)
}

// DataPlaneTarget is one request of a data-plane corpus: Host, the path prefix its path starts with
// and the backend (testkit.Backend name) that must answer.
type DataPlaneTarget struct {
	Host, Prefix, Backend string
}

// DataPlaneResult is what one bounded load run measured.
type DataPlaneResult struct {
	Requests, Failed int64
	Elapsed          time.Duration
	// Hosts is how many different targets were requested.
	Hosts int
	// FirstError is the first failure, if any.
	FirstError error
}

// RPS is the requests (answered or not) per second.
func (r DataPlaneResult) RPS() float64 {
	if r.Elapsed <= 0 {
		return 0
	}
	return float64(r.Requests) / r.Elapsed.Seconds()
}

// DataPlaneLoad sends requests through client from clients keep-alive connections until duration has
// passed or maxRequests were sent: request i goes to corpus[i mod len(corpus)] with a path of its
// own (the target's prefix, then /<run>q<i>), and its answer must be 200 from the target's backend.
// run must differ between the runs against one HAProxy: HAProxy caches the results of pattern
// lookups (tune.pattern.cache-size), and a path seen before would hit that cache instead of the map.
func DataPlaneLoad(client *testkit.Client, corpus []DataPlaneTarget, run string, clients int, duration time.Duration, maxRequests int64) DataPlaneResult {
	if len(corpus) == 0 || clients < 1 {
		return DataPlaneResult{FirstError: errors.New("data plane load: no requests to send, or no clients")}
	}
	var (
		seq, done, failed atomic.Int64
		first             sync.Once
		firstErr          error
		wg                sync.WaitGroup
	)
	start := time.Now()
	deadline := start.Add(duration)
	for range clients {
		wg.Go(func() {
			header := http.Header{}
			for time.Now().Before(deadline) {
				i := seq.Add(1) - 1
				if i >= maxRequests {
					return
				}
				tg := corpus[int(i%int64(len(corpus)))]
				header.Set("Host", tg.Host)
				url := "http://dataplane" + tg.Prefix + "/" + run + "q" + strconv.FormatInt(i, 10)
				resp, err := client.Do(http.MethodGet, url, header)
				if err == nil && (resp.Status != http.StatusOK || resp.Backend != tg.Backend) {
					err = fmt.Errorf("GET %s (Host %s): %d from %q, want 200 from %s", url, tg.Host, resp.Status, resp.Backend, tg.Backend)
				}
				if err != nil {
					failed.Add(1)
					first.Do(func() { firstErr = err })
				}
				done.Add(1)
			}
		})
	}
	wg.Wait()
	n := done.Load()
	return DataPlaneResult{
		Requests: n, Failed: failed.Load(), Elapsed: time.Since(start),
		// Request i went to target i mod len(corpus), and requests 0…n-1 were sent.
		Hosts: int(min(n, int64(len(corpus)))), FirstError: firstErr,
	}
}
