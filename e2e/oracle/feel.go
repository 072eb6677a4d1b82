package oracle

import (
	"context"
	"encoding/csv"
	"fmt"
	"math"
	"net/http"
	"sort"
	"strconv"
	"strings"

	"github.com/haroute/haroute/internal/testkit"
	"github.com/haroute/haroute/mapping/model"
	"github.com/haroute/haroute/runtime/socket"
)

// What users feel, beyond which Route answers (docs/design.md: equal to a reload): how load spreads over a
// Route's servers, whether connections to the pods are reused, and whether sticky cookies hold. A
// step probes a few Routes with the same requests through A and through B and compares HAProxy's own
// per-server counters (show stat) of the backend that serves the Route on each side.

// Bounds of the probe checks.
const (
	// probePerServer requests per server of the probed Route, probeMax at most per side.
	probePerServer = 30
	probeMax       = 180
	// spreadZ is the two-sample bound on a server's share: |pA - pB| <= spreadZ*sqrt(2p(1-p)/N) +
	// 2/N, with p the pooled share. At 4.5 standard deviations a false alarm has a probability of
	// about 7e-6 per comparison (a few thousand comparisons per walk).
	spreadZ = 4.5
	// minExpected is the expected count above which a ready server with weight > 0 must get at
	// least one request in A under a balance that uses every server (P(0) = e^-10 ≈ 5e-5).
	minExpected = 10
	// reuseMargin is how many more backend connections per request A may open than B.
	reuseMargin = 0.15
	// maxSticky is the number of sticky clients the walk keeps (one per Route).
	maxSticky = 12
)

// serverStat is one server row of `show stat`.
type serverStat struct {
	ID      int
	Stot    int64 // sessions (HTTP: requests) the server took
	Connect int64 // backend connections it opened
	Cookie  string
}

// serverStats reads the server rows of one backend (`show stat <backend> 4 -1`), by server name.
func serverStats(ctx context.Context, r socket.Runner, backend string) (map[string]serverStat, error) {
	cmd := "show stat " + backend + " 4 -1"
	reply, err := r.Command(ctx, cmd)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", cmd, err)
	}
	stats, err := parseServerStats(reply)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", cmd, err)
	}
	return stats, nil
}

// parseServerStats parses the CSV of `show stat` (columns found by the header, which differs by
// HAProxy version) into the server rows by name; FRONTEND and BACKEND rows are skipped.
func parseServerStats(reply string) (map[string]serverStat, error) {
	r := csv.NewReader(strings.NewReader(strings.TrimPrefix(reply, "# ")))
	r.FieldsPerRecord = -1
	rows, err := r.ReadAll()
	if err != nil || len(rows) == 0 {
		return nil, fmt.Errorf("not show stat CSV (%v): %q", err, firstLine(reply))
	}
	col := map[string]int{}
	for i, name := range rows[0] {
		col[name] = i
	}
	for _, name := range []string{"svname", "sid", "stot", "connect", "cookie"} {
		if _, ok := col[name]; !ok {
			return nil, fmt.Errorf("show stat has no %q column", name)
		}
	}
	num := func(row []string, name string) int64 {
		n, _ := strconv.ParseInt(row[col[name]], 10, 64)
		return n
	}
	out := map[string]serverStat{}
	for _, row := range rows[1:] {
		if len(row) < len(rows[0]) {
			continue
		}
		name := row[col["svname"]]
		if name == "FRONTEND" || name == "BACKEND" {
			continue
		}
		out[name] = serverStat{ID: int(num(row, "sid")), Stot: num(row, "stot"), Connect: num(row, "connect"), Cookie: row[col["cookie"]]}
	}
	return out, nil
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}

// side is one HAProxy (A or B) as a probe sees it.
type side struct {
	name   string
	admin  socket.Runner
	client *testkit.Client
	cfg    *model.Config // what it runs: A's applied state, B's WithPool(desired)
}

// probe is what one side did with one Route's requests.
type probe struct {
	backend  string
	servers  map[string]model.Server // the backend's servers in cfg
	served   map[string]int64        // server → requests it took (stot delta)
	connects map[string]int64        // server → connections it opened
	cookies  map[string]string       // server → its cookie value (show stat)
	// cookieName is the name of the Set-Cookie the responses carried ("" without), cookieAttrs
	// what followed its value (e.g. "; path=/; HttpOnly; Secure; SameSite=None").
	cookieName, cookieAttrs string
	requests                int
	failed                  []string
	// sample maps a testbed backend name to a "name=value" cookie it was handed out with.
	sample map[string]string
}

// probeRoute sends n requests for url to one side and reads the backend's counters around them.
// Passthrough Routes get a new connection per request (a TLS connection is one balancing decision).
func probeRoute(ctx context.Context, s side, route, url string, n int, passthrough bool) (*probe, error) {
	ri := routeInfo(s.cfg, route)
	if ri == nil {
		return nil, fmt.Errorf("%s does not serve route %s", s.name, route)
	}
	b := s.cfg.Backend(ri.Backend)
	p := &probe{backend: ri.Backend, servers: map[string]model.Server{}, served: map[string]int64{},
		connects: map[string]int64{}, cookies: map[string]string{}, sample: map[string]string{}}
	for _, srv := range b.Servers {
		p.servers[srv.Name] = srv
	}
	before, err := serverStats(ctx, s.admin, p.backend)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", s.name, err)
	}
	s.client.CloseIdleConnections()
	for range n {
		if passthrough {
			s.client.CloseIdleConnections()
		}
		resp, err := s.client.Do(http.MethodGet, url, nil)
		p.requests++
		if err != nil || resp.Status != http.StatusOK {
			if len(p.failed) < 3 {
				p.failed = append(p.failed, fmt.Sprintf("GET %s: %v %v", url, statusOf(resp), err))
			}
			continue
		}
		if sc := resp.Header.Get("Set-Cookie"); sc != "" {
			nameValue, attrs, _ := strings.Cut(sc, ";")
			name, _, _ := strings.Cut(nameValue, "=")
			p.cookieName, p.cookieAttrs = name, ";"+attrs
			p.sample[resp.Backend] = nameValue
		}
	}
	after, err := serverStats(ctx, s.admin, p.backend)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", s.name, err)
	}
	for name, a := range after {
		p.served[name] = a.Stot - before[name].Stot
		p.connects[name] = a.Connect - before[name].Connect
		p.cookies[name] = a.Cookie
	}
	return p, nil
}

func statusOf(r *testkit.Response) string {
	if r == nil {
		return "no response"
	}
	return strconv.Itoa(r.Status)
}

func routeInfo(cfg *model.Config, route string) *model.RouteInfo {
	for i := range cfg.Routes {
		if cfg.Routes[i].Namespace+"/"+cfg.Routes[i].Name == route {
			return &cfg.Routes[i]
		}
	}
	return nil
}

// usesEveryServer reports whether a balance algorithm spreads requests over every usable server
// (so that one left out is a fault); source and first send one client to one server.
func usesEveryServer(balance string) bool {
	switch balance {
	case "random", "roundrobin", "leastconn", "static-rr":
		return true
	}
	return false
}

// spreadBound is the largest difference of two shares of n requests each that spreadZ allows.
func spreadBound(nA, nB, n int64) float64 {
	if n == 0 {
		return 1
	}
	p := float64(nA+nB) / float64(2*n)
	return spreadZ*math.Sqrt(2*p*(1-p)/float64(n)) + 2/float64(n)
}

// FeelStats are the figures of the probe checks over a walk.
type FeelStats struct {
	Probes, Requests int
	// ConnsA and ConnsB are the backend connections A and B opened for ReqA and ReqB requests of
	// HTTP-mode probes (connection reuse).
	ConnsA, ConnsB, ReqA, ReqB int64
	// MaxShareGap is the largest |share in A - share in B| of one server seen.
	MaxShareGap float64
	// Cookies counts servers whose cookie A and B were compared; StickyChecks requests sent with a
	// cookie from an earlier step; IdentityChanges Routes whose backend in A changed name (allowed:
	// once, from a spare to the Route's own name).
	Cookies, StickyChecks, IdentityChanges int
	// RenameChecks counts the sticky requests sent right after the client's Route moved from a spare
	// to its own backend (HAProxy 3.0+).
	RenameChecks int
}

func (s *FeelStats) String() string {
	per := func(c, r int64) float64 {
		if r == 0 {
			return 0
		}
		return float64(c) / float64(r)
	}
	return fmt.Sprintf("probes %d (%d requests); largest share gap A-B %.3f; backend connections per request A %.3f, B %.3f; cookies compared %d; sticky requests %d (%d across a rename); identity changes %d",
		s.Probes, s.Requests, s.MaxShareGap, per(s.ConnsA, s.ReqA), per(s.ConnsB, s.ReqB), s.Cookies, s.StickyChecks, s.RenameChecks, s.IdentityChanges)
}

// compareProbes checks one Route's probes of A and B: the share of every server within the bound, no
// usable server left out in A, A's connections per request, and — when A serves the Route from its
// own backend — the same cookie name and values. It returns the violations.
func compareProbes(route, balance string, mode model.Mode, a, b *probe, st *FeelStats) []string {
	var out []string
	bad := func(format string, args ...any) {
		out = append(out, fmt.Sprintf("route %s (%s in A, %s in B, balance %s): ", route, a.backend, b.backend, balance)+fmt.Sprintf(format, args...))
	}
	for _, f := range a.failed {
		bad("A: %s", f)
	}
	for _, f := range b.failed {
		bad("B: %s", f)
	}
	st.Probes++
	st.Requests += a.requests + b.requests
	n := int64(a.requests)
	var totalA, totalB, weight int64
	for name, s := range b.servers {
		if s.State == model.StateReady && s.Weight > 0 {
			weight += int64(s.Weight)
		}
		totalA += a.served[name]
		totalB += b.served[name]
	}
	if totalA != n || totalB != int64(b.requests) {
		bad("the servers took %d requests in A and %d in B of %d each", totalA, totalB, n)
	}
	for _, name := range sortedKeys(b.servers) {
		sb, sa := b.servers[name], a.servers[name]
		if sb.State != model.StateReady || sa.State != model.StateReady || sb.Weight == 0 {
			continue
		}
		nA, nB := a.served[name], b.served[name]
		gap := math.Abs(float64(nA-nB)) / float64(n)
		st.MaxShareGap = max(st.MaxShareGap, gap)
		if bound := spreadBound(nA, nB, n); gap > bound {
			bad("server %s took %d of %d requests in A, %d in B: share gap %.3f over the bound %.3f", name, nA, n, nB, gap, bound)
		}
		if expected := float64(n) * float64(sb.Weight) / float64(weight); usesEveryServer(balance) && nA == 0 && expected >= minExpected {
			bad("server %s (weight %d) took nothing in A, %.0f expected (B: %d)", name, sb.Weight, expected, nB)
		}
	}
	if mode == model.ModeHTTP {
		var cA, cB int64
		for _, c := range a.connects {
			cA += c
		}
		for _, c := range b.connects {
			cB += c
		}
		st.ConnsA, st.ConnsB, st.ReqA, st.ReqB = st.ConnsA+cA, st.ConnsB+cB, st.ReqA+n, st.ReqB+int64(b.requests)
		if perA, perB := float64(cA)/float64(n), float64(cB)/float64(b.requests); perA > perB+reuseMargin {
			bad("A opened %d backend connections for %d requests (%.2f per request), B %d (%.2f): connections are not reused", cA, n, perA, cB, perB)
		}
	}
	compareCookies(a, b, st, bad)
	return out
}

// compareCookies checks the sticky cookies of one Route's probes: the same attributes in A and B
// (Secure and SameSite come from a map in A); where A serves the Route from its own backend, the
// same name and values; and OpenShift's value of every server (model.ServerCookie of its name,
// HAProxy 3.0 and later), which no backend name changes: a Route in a spare hands out the values of
// its own backend.
func compareCookies(a, b *probe, st *FeelStats, bad func(string, ...any)) {
	if a.cookieName != "" && b.cookieName != "" && a.cookieAttrs != b.cookieAttrs {
		bad("cookie attributes %q in A, %q in B", a.cookieAttrs, b.cookieAttrs)
	}
	if a.backend == b.backend && a.cookieName != b.cookieName {
		bad("cookie name %q in A, %q in B", a.cookieName, b.cookieName)
	}
	for _, name := range sortedKeys(b.servers) {
		if _, ok := a.servers[name]; !ok {
			continue
		}
		ca, cb := a.cookies[name], b.cookies[name]
		static := ca == model.ServerCookie(name) || cb == model.ServerCookie(name)
		if a.backend != b.backend && !static {
			continue
		}
		st.Cookies++
		if ca != cb {
			bad("server %s has cookie %q in A, %q in B (OpenShift's: %s)", name, ca, cb, model.ServerCookie(name))
		}
	}
}

// stickyClient is a client that kept the cookie A handed out for a Route.
type stickyClient struct {
	route   string
	cookie  string // "name=value"
	backend string // A's backend for the Route when the cookie was issued
	server  string // the server the cookie names
	testbed string // the testbed backend behind that server (X-Backend)
}

// Sticky keeps a few clients with cookies across the steps of a walk, and A's backend name per
// Route (identity).
type Sticky struct {
	clients map[string]*stickyClient // by Route
	backend map[string]string        // Route → A's backend name at the last step
	// KeepAcrossRename: a client keeps its server when its Route moves from a spare to its own
	// backend (HAProxy 3.0+, where a cookie's value is its server's own, and its name the Route's).
	KeepAcrossRename bool
}

// NewSticky returns an empty tracker.
func NewSticky() *Sticky {
	return &Sticky{clients: map[string]*stickyClient{}, backend: map[string]string{}}
}

// Identity checks how A's backend for every Route changed since the last step: a Route served from
// its own backend keeps it, and a Route served from a spare may move once, to its own name. Routes
// that went away start over.
func (s *Sticky) Identity(applied *model.Config, st *FeelStats) []string {
	var out []string
	now := map[string]string{}
	for _, ri := range applied.Routes {
		key := ri.Namespace + "/" + ri.Name
		now[key] = ri.Backend
		prev, ok := s.backend[key]
		if !ok || prev == ri.Backend {
			continue
		}
		st.IdentityChanges++
		own := ri.Backend == model.BackendName(applied.Backend(ri.Backend).Kind, ri.Namespace, ri.Name)
		if !isSpare(prev) || !own {
			out = append(out, fmt.Sprintf("route %s moved from backend %s to %s: its name in stats and logs and its cookie change (only a move from a spare to the Route's own backend is allowed)", key, prev, ri.Backend))
		}
	}
	s.backend = now
	return out
}

// Check sends every kept cookie to A, on the Route's URL of this step (urls; a Route without one this
// step is left alone). While the cookie's server is ready with a weight, the answer must come from
// that server and carry no new cookie (with "insert indirect" HAProxy sets one only when it did not
// recognise the client's). This holds across every change but a change of its cookie's name (its
// cookie_name annotation), and, before HAProxy 3.0 (KeepAcrossRename false), the one rename a Route
// may go through, from a spare to its own backend, after which the client is dropped; so are clients
// whose Route or server went.
func (s *Sticky) Check(c *testkit.Client, applied *model.Config, urls map[string]string, st *FeelStats) []string {
	var out []string
	for _, key := range sortedKeys(s.clients) {
		sc := s.clients[key]
		ri := routeInfo(applied, key)
		if ri == nil || ri.Backend != sc.backend && isSpare(sc.backend) && !s.KeepAcrossRename {
			delete(s.clients, key)
			continue
		}
		renamed := ri.Backend != sc.backend
		sc.backend = ri.Backend
		srv, ok := serverOf(applied.Backend(ri.Backend), sc.server)
		if name, _, _ := strings.Cut(sc.cookie, "="); !ok || name != cookieName(applied, ri.Backend) {
			delete(s.clients, key)
			continue
		}
		url := urls[key]
		if srv.State != model.StateReady || srv.Weight == 0 || url == "" {
			continue
		}
		st.StickyChecks++
		if renamed {
			st.RenameChecks++
		}
		resp, err := c.Do(http.MethodGet, url, http.Header{"Cookie": {sc.cookie}})
		switch {
		case err != nil:
			out = append(out, fmt.Sprintf("route %s: GET %s with cookie %s: %v", key, url, sc.cookie, err))
		case resp.Backend != sc.testbed || resp.Header.Get("Set-Cookie") != "":
			out = append(out, fmt.Sprintf("route %s (%s, cookie issued by %s): GET %s with cookie %s (server %s) answered by %q with Set-Cookie %q, want %q and no new cookie: the client lost its server",
				key, ri.Backend, sc.backend, url, sc.cookie, sc.server, resp.Backend, resp.Header.Get("Set-Cookie"), sc.testbed))
		}
	}
	return out
}

// cookieName returns the name of backend's sticky cookie in applied ("" without one).
func cookieName(applied *model.Config, backend string) string {
	v, _ := applied.MapValue(model.MapCookieNames, backend)
	return v
}

// isSpare reports whether a backend name is one of the spare pool's.
func isSpare(backend string) bool { return strings.Contains(backend, ":"+model.SpareNamespace+":") }

// Keep records a client for a probed Route from A's probe, when there is room and the Route has
// none: a cookie A handed out and the server behind it.
func (s *Sticky) Keep(route string, p *probe, addrs map[string]Addr) {
	if _, ok := s.clients[route]; ok || len(s.clients) >= maxSticky || p.cookieName == "" {
		return
	}
	for _, tb := range sortedKeys(p.sample) {
		a, ok := addrs[tb]
		if !ok {
			continue
		}
		for name, srv := range p.servers {
			if srv.Addr == a.IP && int(srv.Port) == a.Port {
				s.clients[route] = &stickyClient{route: route, cookie: p.sample[tb], backend: p.backend, server: name, testbed: tb}
				return
			}
		}
	}
}

func serverOf(b *model.Backend, name string) (model.Server, bool) {
	if b == nil {
		return model.Server{}, false
	}
	i := sort.Search(len(b.Servers), func(i int) bool { return b.Servers[i].Name >= name })
	if i < len(b.Servers) && b.Servers[i].Name == name {
		return b.Servers[i], true
	}
	return model.Server{}, false
}

// Feel runs the probe checks of a walk and keeps what they need across steps.
type Feel struct {
	Sticky *Sticky
	Stats  FeelStats
	addrs  map[string]Addr // testbed backends by name
	next   int             // rotation over the probe candidates
	// versionKnown: Sticky.KeepAcrossRename is set from HAProxy A's version.
	versionKnown bool
}

// NewFeel returns the probe checks of a walk over the given testbed backends.
func NewFeel(addrs []Addr) *Feel {
	f := &Feel{Sticky: NewSticky(), addrs: map[string]Addr{}}
	for _, a := range addrs {
		f.addrs[a.Name] = a
	}
	return f
}

// Check runs one step's probe checks: identity and kept cookies in A, then the Route the step
// changed and one more (in rotation) probed through A and B. xs are the step's corpus exchanges: a
// Route is probed on its own URL when both answered it alike and B from the Route.
func (f *Feel) Check(ctx context.Context, d *Driver, clientA *testkit.Client, b *Fresh, xs []Exchange, mutated string) ([]string, error) {
	if !f.versionKnown {
		caps, err := socket.DetectCapabilities(ctx, d.Admin)
		if err != nil {
			return nil, fmt.Errorf("HAProxy A's version: %w", err)
		}
		f.Sticky.KeepAcrossRename, f.versionKnown = caps.AddServerCookie, true
	}
	out := f.Sticky.Identity(d.Applied, &f.Stats)
	urls := map[string]string{}
	var candidates []string
	for _, x := range xs {
		if x.Main && x.B.Status == http.StatusOK && x.B.Route == x.Route && x.A.Same(x.B) && urls[x.Route] == "" {
			urls[x.Route] = x.URL
			candidates = append(candidates, x.Route)
		}
	}
	sort.Strings(candidates)
	out = append(out, f.Sticky.Check(clientA, d.Applied, urls, &f.Stats)...)
	var routes []string
	if urls[mutated] != "" {
		routes = append(routes, mutated)
	}
	if len(candidates) > 0 {
		if r := candidates[f.next%len(candidates)]; r != mutated {
			routes = append(routes, r)
		}
		f.next++
	}
	sa := side{name: "A", admin: d.Admin, client: clientA, cfg: d.Applied}
	sb := side{name: "B", admin: b.Admin, client: b.Client, cfg: b.Config}
	for _, route := range routes {
		riB := routeInfo(b.Config, route)
		bb := b.Config.Backend(riB.Backend)
		usable := 0
		for _, s := range bb.Servers {
			if s.State == model.StateReady && s.Weight > 0 {
				usable++
			}
		}
		n := min(max(probePerServer*usable, probePerServer), probeMax)
		passthrough := bb.Mode == model.ModeTCP
		pa, err := probeRoute(ctx, sa, route, urls[route], n, passthrough)
		if err != nil {
			return out, err
		}
		pb, err := probeRoute(ctx, sb, route, urls[route], n, passthrough)
		if err != nil {
			return out, err
		}
		out = append(out, compareProbes(route, bb.Balance, bb.Mode, pa, pb, &f.Stats)...)
		f.Sticky.Keep(route, pa, f.addrs)
	}
	return out, nil
}
