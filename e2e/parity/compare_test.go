package parity

import (
	"io"
	"net/http"
	"net/netip"
	"reflect"
	"strings"
	"testing"

	"github.com/haroute/haroute/internal/testkit"
)

// testEndpoints are two pods of Service two and one of a.
var testEndpoints = Endpoints{
	{Pod: "pod-a", Service: "two", PortName: "http", Addr: netip.MustParseAddrPort("198.18.231.2:8080")},
	{Pod: "pod-b", Service: "two", PortName: "http", Addr: netip.MustParseAddrPort("198.18.231.3:8080")},
	{Pod: "pod-a", Service: "a", PortName: "http", Addr: netip.MustParseAddrPort("198.18.231.2:8080")},
}

// TestStockCookie: the stock router's cookie name and value, as `make parity` saw it set them
// (StockCookieName for parity/sticky is the name the stock router at the pinned commit gave the
// Route's cookie; the live run checks the values against the answering pod on every run).
func TestStockCookie(t *testing.T) {
	if got, want := StockCookieName("parity", "sticky"), "32e3908831f21d073657a8af466f3cc6"; got != want {
		t.Errorf("StockCookieName(parity, sticky) = %s, want %s", got, want)
	}
	e := testEndpoints[1]
	if got, want := e.StockID(), "pod:pod-b:two:http:198.18.231.3:8080"; got != want {
		t.Errorf("StockID = %s, want %s", got, want)
	}
	if got, want := e.StockValue(), "6dd78cb561986b275136935475671495"; got != want {
		t.Errorf("StockValue = %s, want %s (the hex MD5 of its StockID)", got, want)
	}
	got, err := testEndpoints.cookie(StockCookie{Namespace: "parity", Route: "sticky", Service: "two", Pod: "pod-b"})
	if err != nil || got != "32e3908831f21d073657a8af466f3cc6="+e.StockValue() {
		t.Errorf("cookie = %q, %v", got, err)
	}
	if _, err := testEndpoints.cookie(StockCookie{Service: "two", Pod: "pod-z"}); err == nil {
		t.Error("cookie for an unknown pod: no error")
	}
}

// TestNormalise: the rewrites normalise makes, and only those.
func TestNormalise(t *testing.T) {
	n := normCtx{target: Target{HTTPPort: 20001, HTTPSPort: 20002}, endpoints: testEndpoints, pods: map[string]string{"first": "pod-b"}}
	hdr := http.Header{
		"Location":   {"https://x.test:20002/p?q=1"},
		"Set-Cookie": {"c1=" + testEndpoints[1].StockValue() + "; path=/; HttpOnly", "c2=" + testEndpoints[0].StockValue() + "; Secure", "c3=abc"},
		"Date":       {"now"},
		"X-Backend":  {"pod-b"},
		"X-Other":    {"kept"},
	}
	o := observation{status: 200, header: hdr}
	o.echo = &testkit.EchoReply{Backend: "pod-b", URI: "/p", Host: "x.test", Header: http.Header{"X-Forwarded-Port": {"20001"}, "X-Forwarded-For": {"127.0.0.1"}}}
	a := normalise(Request{ID: "r", SamePodAs: "first"}, o, n)
	want := Answer{
		ID: "r", Status: "200", Pod: "=first", PodTarget: "/p", Location: "https://x.test:{https-port}/p?q=1",
		Cookies: []Cookie{
			{Name: "c1", Value: cookieAnswering, Attrs: []string{"HttpOnly", "path=/"}},
			{Name: "c2", Value: "stock-hash(pod-a)", Attrs: []string{"Secure"}},
			{Name: "c3", Value: cookieOther},
		},
		RequestHeaders:  map[string][]string{"Host": {"x.test"}, "X-Forwarded-Port": {"{http-port}"}, "X-Forwarded-For": {"127.0.0.1"}},
		ResponseHeaders: map[string][]string{"X-Backend": {"=first"}, "X-Other": {"kept"}},
	}
	if !reflect.DeepEqual(a, want) {
		t.Errorf("normalise:\n got %+v\nwant %+v", a, want)
	}
	if got := n.pod(Request{AnyPodOf: "two"}, "pod-a"); got != "any of two" {
		t.Errorf("AnyPodOf two, pod-a: %q", got)
	}
	if got := n.pod(Request{AnyPodOf: "a"}, "pod-b"); got != "pod-b" {
		t.Errorf("AnyPodOf a, pod-b (not one of a's): %q", got)
	}
	if got := normalise(Request{ID: "r"}, observation{err: io.EOF}, n).Status; got != OutcomeClosed {
		t.Errorf("a closed connection: status %q", got)
	}
}

// TestCompare: status and pod first, then every field; cookie values and stock-cookie pods under the
// HAProxy version condition.
func TestCompare(t *testing.T) {
	base := Answer{ID: "r", Status: "200", Pod: "pod-a", Cookies: []Cookie{{Name: "n", Value: cookieAnswering, Attrs: []string{"HttpOnly"}}},
		RequestHeaders: map[string][]string{"Forwarded": {"for=1"}, "Empty": {""}}}
	other := base
	other.Cookies = []Cookie{{Name: "n", Value: cookieOther, Attrs: []string{"HttpOnly", "Secure"}}}
	other.RequestHeaders = map[string][]string{"Forwarded": {`for="1"`}}

	diffs, conds := Comparison{HAProxy: Version{3, 2}}.Compare(Request{ID: "r"}, base, other)
	fields := fieldsOf(diffs)
	if want := "cookie value,cookie attributes,request headers Empty,request headers Forwarded"; fields != want || len(conds) != 0 {
		t.Errorf("3.2: differences %s (conditions %v), want %s", fields, conds, want)
	}
	diffs, conds = Comparison{HAProxy: Version{2, 6}}.Compare(Request{ID: "r"}, base, other)
	if want := "cookie attributes,request headers Empty,request headers Forwarded"; fieldsOf(diffs) != want ||
		len(conds) != 1 || conds[0].Field != FieldCookieValue {
		t.Errorf("2.6: differences %s, conditions %v: want %s and the cookie value left out", fieldsOf(diffs), conds, want)
	}

	router := Answer{ID: "r", Status: "503"}
	diffs, _ = Comparison{HAProxy: Version{3, 2}}.Compare(Request{ID: "r"}, base, router)
	if want := "status,pod"; fieldsOf(diffs) != want {
		t.Errorf("another status: differences %s, want only %s", fieldsOf(diffs), want)
	}
	stockCookie := Request{ID: "r", StockCookie: &StockCookie{}}
	moved := base
	moved.Pod = "pod-b"
	if diffs, conds := (Comparison{HAProxy: Version{2, 6}}).Compare(stockCookie, base, moved); len(diffs) != 0 || len(conds) != 2 {
		t.Errorf("2.6, stock cookie sent, another pod: differences %v, conditions %v; want none and two", diffs, conds)
	}
	if diffs, _ := (Comparison{HAProxy: Version{3, 0}}).Compare(stockCookie, base, moved); fieldsOf(diffs) != "pod" {
		t.Errorf("3.0, stock cookie sent, another pod: differences %s, want pod", fieldsOf(diffs))
	}
}

func fieldsOf(ds []Difference) string {
	var out []string
	for _, d := range ds {
		f := string(d.Field)
		if d.Detail != "" {
			f += " " + d.Detail
		}
		out = append(out, f)
	}
	return strings.Join(out, ",")
}

// TestEvaluate: agreeing requests, accepted and unexpected differences, fields counted once per
// request, unused known differences.
func TestEvaluate(t *testing.T) {
	reqs := []Request{{ID: "g/one"}, {ID: "g/two"}, {ID: "h/three"}}
	stock := []Answer{{ID: "g/one", Status: "200"}, {ID: "g/two", Status: "200", HSTS: "x"}, {ID: "h/three", Status: "200", Location: "a"}}
	haroute := []Answer{{ID: "g/one", Status: "200"}, {ID: "g/two", Status: "200"}, {ID: "h/three", Status: "200", Location: "b"}}
	known := []Known{
		{Requests: []string{"g/*"}, Fields: []Field{FieldHSTS}, Open: OpenIssue, Note: "n"},
		{Requests: []string{"g/*"}, Fields: []Field{FieldALPN}, Open: OpenIssue, Note: "unused"},
	}
	rep, err := Evaluate("test", reqs, stock, haroute, Comparison{HAProxy: Version{3, 2}}, known)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Requests != 3 || rep.Agreeing != 1 || len(rep.Accepted) != 1 || len(rep.Unexpected) != 1 ||
		rep.ByField[FieldHSTS] != 1 || rep.ByField[FieldLocation] != 1 || len(rep.Unused) != 1 {
		t.Errorf("report: %+v", rep)
	}
	if _, err := Evaluate("test", reqs, stock[:2], haroute, Comparison{}, nil); err == nil {
		t.Error("Evaluate with a missing answer: no error")
	}
	if !strings.Contains(rep.Text(), "h/three: location") {
		t.Errorf("report text lacks the unexpected difference:\n%s", rep.Text())
	}
}

// TestCorpus: the corpus is consistent, its digest stable, and Check finds a repeated request.
func TestCorpus(t *testing.T) {
	c := Build()
	if err := c.Check(); err != nil {
		t.Fatal(err)
	}
	if Build().Digest() != c.Digest() {
		t.Error("two builds of the corpus have other digests")
	}
	c.Groups = append(c.Groups, Group{Name: "again", Requests: []Request{c.Requests()[0]}})
	if err := c.Check(); err == nil {
		t.Error("Check: no error for a repeated request ID")
	}
}
