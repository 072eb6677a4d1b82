package model

import (
	"strings"
	"testing"
)

// TestMappedHeaderValue: a literal value is encoded into one map word that decodes to the bytes
// HAProxy writes for the value ("%%" is one '%'); a dynamic value or an encoding over the bound stays
// in its rule.
func TestMappedHeaderValue(t *testing.T) {
	for _, tc := range []struct{ value, enc, header string }{
		{"DENY", "DENY", "DENY"},
		{"a  b", "a%20%20b", "a  b"},
		{" lead", "%20lead", " lead"},
		{"trail ", "trail%20", "trail "},
		{`q"'\#$x`, "q%22%27%5C%23%24x", `q"'\#$x`},
		{"café", "caf%C3%A9", "café"},
		{"50%%+1?+", "50%25%2B1%3F%2B", "50%+1?+"},
		{"a;b<<c", "a%3Bb%3C%3Cc", "a;b<<c"},
		{"max-age=1, no-cache (x) !*@:/", "max-age=1,%20no-cache%20(x)%20!*@:/", "max-age=1, no-cache (x) !*@:/"},
	} {
		enc, ok := MappedHeaderValue(tc.value)
		if !ok || enc != tc.enc {
			t.Errorf("MappedHeaderValue(%q) = %q, %v; want %q", tc.value, enc, ok, tc.enc)
			continue
		}
		if !ValidMapToken(enc) {
			t.Errorf("%q: %q is no map token", tc.value, enc)
		}
		if got, err := DecodeMappedHeaderValue(enc); err != nil || got != tc.header {
			t.Errorf("DecodeMappedHeaderValue(%q) = %q, %v; want %q", enc, got, err, tc.header)
		}
	}
	for _, v := range []string{"%[req.hdr(Host)]", "a %{+Q}[ssl_c_der]", "100%", strings.Repeat(" ", MaxMappedHeaderValue/3+1), ""} {
		if enc, ok := MappedHeaderValue(v); ok {
			t.Errorf("MappedHeaderValue(%.20q...) = %q: the map must not carry it", v, enc)
		}
	}
	if _, ok := MappedHeaderValue(strings.Repeat("v", MaxMappedHeaderValue)); !ok {
		t.Error("a value of exactly the bound is not carried")
	}
	for _, bad := range []string{"%2", "%zz", "a b", "a'b"} {
		if _, err := DecodeMappedHeaderValue(bad); err == nil {
			t.Errorf("DecodeMappedHeaderValue(%q) accepted it", bad)
		}
	}
}

// TestRouteHeaderRules: Set values the map can carry get a key and an entry; the others and Deletes
// are written into their rules.
func TestRouteHeaderRules(t *testing.T) {
	rules, entries := RouteHeaderRules("be_http:ns:r", true, []HeaderAction{
		{Action: HeaderDelete, Name: "Server"},
		{Action: HeaderSet, Name: "X-A", Value: "one two"},
		{Action: HeaderSet, Name: "X-B", Value: "%[res.hdr(X-C)]"},
	})
	want := []HeaderRule{
		{Action: HeaderDelete, Name: "Server"},
		{Action: HeaderSet, Name: "X-A", Key: "be_http:ns:r/res/1"},
		{Action: HeaderSet, Name: "X-B", Value: "%[res.hdr(X-C)]"},
	}
	if len(rules) != len(want) || rules[0] != want[0] || rules[1] != want[1] || rules[2] != want[2] {
		t.Fatalf("rules %+v, want %+v", rules, want)
	}
	if len(entries) != 1 || entries[0] != (MapEntry{Key: "be_http:ns:r/res/1", Value: "one%20two"}) {
		t.Fatalf("entries %+v", entries)
	}
	if r, e := RouteHeaderRules("be", false, nil); r != nil || e != nil {
		t.Fatal("no actions should give nil")
	}
}

// TestValidateHeaderRules: a backend's rules validate only as the Route API allows them, with the key
// the backend's name gives, in mode http.
func TestValidateHeaderRules(t *testing.T) {
	base := func() Backend {
		return Backend{Name: "be_http:ns:r", Kind: KindHTTP, Mode: ModeHTTP, Balance: "random",
			RequestHeaders:  []HeaderRule{{Action: HeaderSet, Name: "X-A", Key: "be_http:ns:r/req/0"}, {Action: HeaderDelete, Name: "X-B"}},
			ResponseHeaders: []HeaderRule{{Action: HeaderSet, Name: "X-C", Value: "%[res.hdr(X-D),lower]"}}}
	}
	b := base()
	if err := b.Validate(); err != nil {
		t.Fatalf("valid rules refused: %v", err)
	}
	for _, tc := range []struct {
		name   string
		change func(*Backend)
		want   string
	}{
		{"tcp mode", func(b *Backend) { b.Mode = ModeTCP }, "request header rules need mode http"},
		{"reserved name", func(b *Backend) { b.RequestHeaders[1].Name = "Set-Cookie" }, "request header rule 1: header name \"Set-Cookie\": reserved"},
		{"bad name", func(b *Backend) { b.ResponseHeaders[0].Name = "X C" }, "response header rule 0: header name \"X C\": want an HTTP token"},
		{"a Set with both", func(b *Backend) { b.RequestHeaders[0].Value = "v" }, "request header rule 0: a Set needs either a value or a map key"},
		{"a Set with neither", func(b *Backend) { b.ResponseHeaders[0].Value = "" }, "response header rule 0: a Set needs either a value or a map key"},
		{"another backend's key", func(b *Backend) { b.RequestHeaders[0].Key = "be_http:ns:other/req/0" }, "request header rule 0: map key \"be_http:ns:other/req/0\": want \"be_http:ns:r/req/0\""},
		{"a Delete with a value", func(b *Backend) { b.RequestHeaders[1].Value = "v" }, "request header rule 1: a Delete has no value"},
		{"a request fetch on a response", func(b *Backend) { b.ResponseHeaders[0].Value = "%[req.hdr(Host)]" }, "response header rule 0: header value \"%[req.hdr(Host)]\""},
		{"an unknown action", func(b *Backend) { b.RequestHeaders[1].Action = "Add" }, "request header rule 1: action \"Add\""},
		{"too many", func(b *Backend) {
			for len(b.RequestHeaders) <= MaxRouteHeaderActions {
				b.RequestHeaders = append(b.RequestHeaders, HeaderRule{Action: HeaderDelete, Name: "X-More"})
			}
		}, "21 request header rules: at most 20"},
	} {
		b := base()
		b.RequestHeaders = append([]HeaderRule(nil), b.RequestHeaders...)
		b.ResponseHeaders = append([]HeaderRule(nil), b.ResponseHeaders...)
		tc.change(&b)
		err := b.Validate()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error with %q", tc.name, err, tc.want)
		}
	}
}

// TestCheckRouteHeaderName: names are HTTP tokens of 1-255 bytes, reserved ones refused in any case.
func TestCheckRouteHeaderName(t *testing.T) {
	for _, ok := range []string{"X-A", "!#$%&'*+-.^_`|~", strings.Repeat("a", 255), "Host", "Content-Type", "Connection"} {
		if err := CheckRouteHeaderName(ok); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	for _, bad := range append([]string{"", strings.Repeat("a", 256), "X A", "X:A", "X\"A", "X(A)", "X/A", "X\nA", "é"},
		"Strict-Transport-Security", "PROXY", "cookie", "Set-Cookie", "set-COOKIE",
		"Content-Length", "transfer-encoding", "TRANSFER-ENCODING") { // framing: refused by haroute only
		if err := CheckRouteHeaderName(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
