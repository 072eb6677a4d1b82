package oracle

import (
	"sort"
	"testing"

	"github.com/haroute/haroute/mapping"
	"github.com/haroute/haroute/mapping/model"
)

// corpusWorld translates a few Routes of every kind (no own certificates, so no CA is needed).
func corpusWorld(t *testing.T) *model.Config {
	t.Helper()
	wk := NewWalker(1, NewWorld(fakeAddrs(8, 4), ""), WalkOptions{})
	for _, spec := range []RouteSpec{
		{Namespace: "ns-a", Name: "api", Host: "h.test", Path: "/api", Kind: KindHTTP, Endpoints: []int{1}},
		{Namespace: "ns-a", Name: "shop", Host: "s.test", Kind: KindEdge, Insecure: "Redirect", Endpoints: []int{1}},
		{Namespace: "ns-b", Name: "pass", Host: "p.test", Kind: KindPassthrough, Endpoints: []int{1}},
		{Namespace: "ns-b", Name: "wild", Host: "*.w.test", Wildcard: true, Kind: KindEdge, Endpoints: []int{1}},
	} {
		if _, err := wk.AddRoute(spec); err != nil {
			t.Fatal(err)
		}
	}
	opts := mapping.DefaultOptions()
	opts.AllowLoopbackEndpoints, opts.AllowWildcardRoutes = true, true
	cfg, problems := mapping.Translate(wk.World.Input(), opts)
	if len(problems) > 0 {
		t.Fatalf("problems: %v", problems)
	}
	return cfg
}

func TestBuildCorpus(t *testing.T) {
	corpus := BuildCorpus(corpusWorld(t))
	got := map[string]Request{}
	var urls []string
	for _, r := range corpus {
		if _, dup := got[r.URL]; dup {
			t.Fatalf("URL %s twice", r.URL)
		}
		got[r.URL] = r
		urls = append(urls, r.URL)
	}
	if !sort.StringsAreSorted(urls) {
		t.Fatal("corpus not sorted by URL")
	}
	for url, want := range map[string]Request{
		"http://h.test/api":                  {Route: "ns-a/api", Main: true},
		"http://h.test/api/x":                {Route: "ns-a/api"},
		"http://h.test/apix":                 {Route: "ns-a/api"},
		"http://H.TEST:1234/api":             {Route: "ns-a/api"},
		"http://xh.test/api":                 {Route: "ns-a/api"},
		"https://s.test/":                    {Route: "ns-a/shop", Main: true},
		"http://s.test/":                     {Route: "ns-a/shop"},
		"https://S.TEST:1234/":               {Route: "ns-a/shop"},
		"https://p.test/":                    {Route: "ns-b/pass", Main: true},
		"http://p.test/":                     {Route: "ns-b/pass"},
		"https://xp.test/":                   {Route: "ns-b/pass"},
		"https://zz.w.test/x":                {Route: "ns-b/wild"},
		"https://zz.w.test/":                 {Route: "ns-b/wild", Main: true},
		"https://w.test/":                    {Route: "ns-b/wild"},
		"http://" + unknownHost + "/":        {},
		"https://" + unknownHost + "/":       {},
		"https://ZZ.W.TEST:" + anyPort + "/": {Route: "ns-b/wild"},
	} {
		r, ok := got[url]
		if !ok {
			t.Errorf("corpus lacks %s", url)
			continue
		}
		if r.Route != want.Route || r.Main != want.Main {
			t.Errorf("%s: route %q main %v, want %q %v", url, r.Route, r.Main, want.Route, want.Main)
		}
	}
	if _, ok := got["https://h.test/api"]; ok {
		t.Error("an http Route got an https URL")
	}
}

func TestAnswersAndUnserved(t *testing.T) {
	desired := corpusWorld(t)
	ok := Answer{Status: 200, Route: "ns-a/api", Backend: "h00"}
	other := ok
	other.Backend = "h01" // the balance within a Route is random
	if !ok.Same(other) {
		t.Error("answers from two backends of one Route must agree")
	}
	for _, b := range []Answer{{Status: 503}, {Status: 200, Route: "ns-b/pass"}, {Status: 200, Route: "ns-a/api", Cert: "x"}, {Status: 302, Location: "https://h.test/"}} {
		if ok.Same(b) {
			t.Errorf("%v and %v must differ", ok, b)
		}
	}
	xs := []Exchange{
		{Request: Request{URL: "http://h.test/api", Route: "ns-a/api", Main: true}, B: Answer{Status: 503}},
		{Request: Request{URL: "https://s.test/", Route: "ns-a/shop", Main: true}, B: Answer{Status: 200, Route: "ns-a/shop"}},
		{Request: Request{URL: "http://h.test/apix", Route: "ns-a/api"}, B: Answer{Status: 503}},
	}
	un := Unserved(xs, desired)
	if len(un) != 1 || un[0].URL != "http://h.test/api" {
		t.Fatalf("Unserved = %v, want the 503 of the main URL only", un)
	}
	// A terminated host that a passthrough Route takes over on the TLS port is not expected to be
	// served by the terminated Route.
	desired.Map(model.MapTCP).Entries = append(desired.Map(model.MapTCP).Entries, model.MapEntry{Key: "s.test", Value: "be_tcp:ns-b:pass"})
	if !tlsTakenByPassthrough(desired, "https://s.test/", "ns-a/shop") {
		t.Error("s.test is taken by the passthrough Route")
	}
	if tlsTakenByPassthrough(desired, "https://p.test/", "ns-b/pass") || tlsTakenByPassthrough(desired, "http://s.test/", "ns-a/shop") {
		t.Error("a passthrough Route's own host, or plain http, is not taken over")
	}
}
