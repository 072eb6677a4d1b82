package traffic

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"testing"
	"time"

	routev1 "github.com/openshift/api/route/v1"

	"github.com/haroute/haroute/e2e/testbed"
	"github.com/haroute/haroute/internal/testkit"
	"github.com/haroute/haroute/mapping"
	"github.com/haroute/haroute/mapping/model"
	"github.com/haroute/haroute/mapping/plan"
	"github.com/haroute/haroute/mapping/render"
	"github.com/haroute/haroute/mapping/routetest"
	"github.com/haroute/haroute/runtime/haproxy"
	"github.com/haroute/haroute/runtime/socket"
)

// TestRouteHeaderActions drives a real HAProxy through the runtime path (haproxy.Instance) with Routes
// that set and delete request and response headers (spec.httpHeaders.actions), next to the router's
// own header actions (ROUTER_HTTP_REQUEST_HEADERS / _RESPONSE_HEADERS) on the same names:
//   - the backend receives the Route's literal and dynamic values, not the client's, and not a header
//     the Route deletes; on a request the Route's Set wins over the router's (it runs later, in the
//     backend), on a response the router's wins (the frontend's response rules run after the
//     backend's), as in OpenShift;
//   - the client receives the Route's response headers and not the ones it deletes;
//   - changing a literal value is a map entry: served at once, and HAProxy's master counts no reload;
//   - making a value dynamic is a reload (HeaderActionsChanged), and is then served.
func TestRouteHeaderActions(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	echo := startEcho(t, "127.0.0.2", "echo", http.Header{
		"Server": {"echo/1.0"}, "X-Up": {"MiXeD"}, "X-Both-Res": {"backend"},
	})
	opts := testbed.RouterOptions(t)
	opts.HTTP.RequestHeaders = model.FormatHeaderActions([]model.HeaderAction{{Action: model.HeaderSet, Name: "X-Both", Value: "router"}})
	opts.HTTP.ResponseHeaders = model.FormatHeaderActions([]model.HeaderAction{{Action: model.HeaderSet, Name: "X-Both-Res", Value: "router"}})

	const literal = `two  spaces; 'single' "double" \ 100% café`
	crt, key := f.ca.Issue(t, "secure.hdr.example.com")
	input := func(lit, frame string, dynamic bool) mapping.Input {
		var m testbed.Manifests
		m.ServiceAt("hdr", "echo", echo)
		value := strings.ReplaceAll(lit, "%", "%%")
		if dynamic {
			value = "%[req.hdr(X-Trace),lower]"
		}
		request := []routev1.RouteHTTPHeader{
			routetest.SetHeader("X-Lit", value),
			routetest.DeleteHeader("X-Drop"),
			routetest.SetHeader("X-Host", "%[req.hdr(Host),lower]"),
			routetest.SetHeader("X-Both", "route"),
		}
		response := []routev1.RouteHTTPHeader{
			routetest.SetHeader("X-Frame-Options", frame),
			routetest.DeleteHeader("Server"),
			routetest.SetHeader("X-Up-Lower", "%[res.hdr(X-Up),lower]"),
			routetest.SetHeader("X-Both-Res", "route"),
		}
		m.Route("hdr", "plain", "plain.hdr.example.com", "", "echo", testbed.RouteOption(routetest.Headers(request, response)))
		m.Route("hdr", "edge", "secure.hdr.example.com", "", "echo", testbed.Edge(crt, key), testbed.RouteOption(routetest.Headers(request, response)))
		return m.Input(t)
	}
	translate := func(in mapping.Input) *model.Config {
		t.Helper()
		cfg, problems := mapping.Translate(in, opts)
		if len(problems) > 0 {
			t.Fatalf("translate: %v", problems)
		}
		return cfg
	}

	dir := testkit.TempDir(t)
	inst, err := haproxy.New(haproxy.Config{Dir: dir, Render: render.Options{DefaultCertificatePEM: f.ca.IssueBundle(t, defaultCertName)}, Binary: testkit.HAProxyBinary()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := inst.WriteInitial(translate(input(literal, "DENY", false))); err != nil {
		t.Fatal(err)
	}
	h := testbed.Start(t, dir)
	master := socket.NewMaster(h.MasterSocket, socket.Options{})
	reloads := func() int {
		t.Helper()
		ps, err := master.ShowProc(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return ps.Master.Reloads
	}
	client := testkit.NewClient(t, opts.HTTPPort, opts.HTTPSPort, f.ca.Pool())

	// check asks both Routes and compares what the backend and the client received.
	check := func(step, lit, frame string) {
		t.Helper()
		for _, url := range []string{"http://Plain.HDR.example.com/", "https://secure.hdr.example.com/"} {
			resp, err := client.Do(http.MethodGet, url, http.Header{
				"X-Lit": {"spoofed"}, "X-Drop": {"client secret"}, "X-Both": {"client"}, "X-Trace": {"AbC-42"},
			})
			if err != nil {
				t.Fatalf("%s: GET %s: %v", step, url, err)
			}
			if resp.Status != http.StatusOK || resp.Backend != "echo" {
				t.Fatalf("%s: GET %s: %d from %s (body %q)", step, url, resp.Status, who(resp.Backend), resp.Body)
			}
			got := decodeEcho(t, url, resp.Body).Header
			host := strings.ToLower(strings.TrimPrefix(strings.TrimPrefix(strings.TrimSuffix(url, "/"), "http://"), "https://"))
			for name, want := range map[string][]string{
				"X-Lit": {lit}, "X-Drop": nil, "X-Host": {host}, "X-Both": {"route"}, "X-Trace": {"AbC-42"},
			} {
				if g := got.Values(name); strings.Join(g, "|") != strings.Join(want, "|") {
					t.Errorf("%s: GET %s: the backend received %s %q, want %q", step, url, name, g, want)
				}
			}
			for name, want := range map[string][]string{
				"X-Frame-Options": {frame}, "Server": nil, "X-Up-Lower": {"mixed"}, "X-Both-Res": {"router"}, "X-Up": {"MiXeD"},
			} {
				if g := resp.Header.Values(name); strings.Join(g, "|") != strings.Join(want, "|") {
					t.Errorf("%s: GET %s: the client received %s %q, want %q", step, url, name, g, want)
				}
			}
		}
	}
	check("start", literal, "DENY")
	r0 := reloads()

	// 1. New literal values: map entries, no reload.
	const changed = "changed  value, 'again' 50%"
	began := time.Now()
	out, err := inst.Update(ctx, translate(input(changed, "SAMEORIGIN", false)))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("new header values: %d runtime ops in %v", out.Result.Applied, time.Since(began).Round(time.Microsecond))
	if out.Reloaded || out.Result.Applied == 0 {
		t.Fatalf("a new header value: reloaded %v (reason %v), %d ops applied; want runtime ops", out.Reloaded, out.Reason, out.Result.Applied)
	}
	if n := reloads(); n != r0 {
		t.Fatalf("a new header value: HAProxy reloaded (%d → %d)", r0, n)
	}
	check("runtime value change", changed, "SAMEORIGIN")

	// 2. A dynamic value needs the rule itself: a reload.
	began = time.Now()
	out, err = inst.Update(ctx, translate(input(changed, "SAMEORIGIN", true)))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("a dynamic value: reload in %v", time.Since(began).Round(time.Microsecond))
	if !out.Reloaded || out.Reason.Kind != plan.HeaderActionsChanged {
		t.Fatalf("a dynamic value: reloaded %v, reason %v; want a HeaderActionsChanged reload", out.Reloaded, out.Reason)
	}
	if n := reloads(); n != r0+1 {
		t.Fatalf("a dynamic value: reloads %d → %d, want one", r0, n)
	}
	check("dynamic value", "abc-42", "SAMEORIGIN")
}

// TestRouteHeaderValueMapMatchesInline: a literal value read from haroute_header_values.map reaches the
// backend (request) and the client (response) byte for byte as the same value written into the rule,
// as OpenShift writes it: spaces (leading, trailing, repeated), quotes, backslash, '#', '$', ';',
// '+', '?', "%%" and UTF-8. Each value is set twice in one backend, once through the map (X-M-<i>)
// and once in the rule (X-I-<i>), and the raw header lines are compared.
func TestRouteHeaderValueMapMatchesInline(t *testing.T) {
	values := []string{" lead", "trail ", "a  b   c", `q"'\#$x;y`, "1+1?a+b", "100%% sure %%20", "café ü 日本", "${HOME}", "-m"}
	raw := startRawEcho(t, "127.0.0.3")
	var m testbed.Manifests
	m.ServiceAt("hdr", "raw", raw)
	var request, response []routev1.RouteHTTPHeader
	for i, v := range values {
		request = append(request, routetest.SetHeader(fmt.Sprintf("X-M-%d", i), v))
		response = append(response, routetest.SetHeader(fmt.Sprintf("X-M-%d", i), v))
	}
	m.Route("hdr", "raw", "raw.hdr.example.com", "", "raw", testbed.RouteOption(routetest.Headers(request, response)))
	opts := testbed.RouterOptions(t)
	cfg, problems := mapping.Translate(m.Input(t), opts)
	if len(problems) > 0 {
		t.Fatalf("translate: %v", problems)
	}
	b := cfg.Backend("be_http:hdr:raw").Clone()
	for i, v := range values {
		if b.RequestHeaders[i].Key == "" || b.ResponseHeaders[i].Key == "" {
			t.Fatalf("value %q is not carried by the map", v)
		}
		b.RequestHeaders = append(b.RequestHeaders, model.HeaderRule{Action: model.HeaderSet, Name: fmt.Sprintf("X-I-%d", i), Value: v})
		b.ResponseHeaders = append(b.ResponseHeaders, model.HeaderRule{Action: model.HeaderSet, Name: fmt.Sprintf("X-I-%d", i), Value: v})
	}
	cfg.Backends = []*model.Backend{&b}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	f := newFixture(t)
	dir := testkit.TempDir(t)
	inst, err := haproxy.New(haproxy.Config{Dir: dir, Render: render.Options{DefaultCertificatePEM: f.ca.IssueBundle(t, defaultCertName)}, Binary: testkit.HAProxyBinary()})
	if err != nil {
		t.Fatal(err)
	}
	first, err := inst.InitialFiles(cfg)
	if err != nil {
		t.Fatal(err)
	}
	testbed.StartHAProxy(t, dir, first.Files)

	got, err := rawExchange(fmt.Sprintf("127.0.0.1:%d", opts.HTTPPort), nil, nil, rawRequest("raw.hdr.example.com", "/"))
	if err != nil {
		t.Fatal(err)
	}
	head, body, _ := strings.Cut(string(got), "\r\n\r\n")
	for _, side := range []struct{ what, lines string }{{"response", head}, {"request", body}} {
		lines := rawHeaderLines(side.lines)
		for i, v := range values {
			mapped, inline := lines[fmt.Sprintf("x-m-%d", i)], lines[fmt.Sprintf("x-i-%d", i)]
			want := strings.ReplaceAll(v, "%%", "%")
			if mapped != inline || inline != want {
				t.Errorf("%s value %d: through the map %q, in the rule %q, want %q", side.what, i, mapped, inline, want)
			}
		}
	}
}

// rawHeaderLines returns the header lines of a raw HTTP/1 head by lower-case name: every byte after
// "name:" up to the line end, as sent (HAProxy writes one space after the colon).
func rawHeaderLines(head string) map[string]string {
	out := map[string]string{}
	for _, l := range strings.Split(head, "\r\n")[1:] {
		if name, value, ok := strings.Cut(l, ":"); ok {
			out[strings.ToLower(name)] = strings.TrimPrefix(value, " ")
		}
	}
	return out
}

// startRawEcho starts a server on ip that answers each request with 200 and, as body, the request's
// head exactly as received (then closes), and returns its address.
func startRawEcho(t *testing.T, ip string) netip.AddrPort {
	t.Helper()
	l, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				_ = c.SetDeadline(time.Now().Add(rawTimeout))
				var req []byte
				buf := make([]byte, 4096)
				for !bytes.Contains(req, []byte("\r\n\r\n")) {
					n, err := c.Read(buf)
					if err != nil {
						return // a health check, or a client gone
					}
					req = append(req, buf[:n]...)
				}
				head, _, _ := bytes.Cut(req, []byte("\r\n\r\n"))
				_, _ = fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s", len(head), head)
			}()
		}
	}()
	t.Cleanup(func() {
		_ = l.Close()
		<-done
	})
	return l.Addr().(*net.TCPAddr).AddrPort()
}
