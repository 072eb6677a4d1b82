package parity

import (
	"path"
	"strings"
	"testing"

	"github.com/haroute/haroute/mapping/compat"
)

// TestKnownDifferences: every entry of testdata/known-differences.yaml names an existing row of the
// compatibility table that says Different or NotSupported (or is marked open), a known field, and
// request patterns that each match a request of the corpus.
func TestKnownDifferences(t *testing.T) {
	known, err := ReadKnown(KnownFile)
	if err != nil {
		t.Fatal(err)
	}
	rows := compat.Rows()
	reqs := Build().Requests()
	for i, k := range known {
		if err := k.Check(rows); err != nil {
			t.Errorf("%s entry %d (%s %v): %v", KnownFile, i+1, strings.Join(k.Requests, ","), k.Fields, err)
		}
		for _, p := range k.Requests {
			matched := false
			for _, r := range reqs {
				if ok, _ := path.Match(p, r.ID); ok {
					matched = true
					break
				}
			}
			if !matched {
				t.Errorf("%s entry %d: request pattern %q matches no request of the corpus", KnownFile, i+1, p)
			}
		}
	}
}

// TestKnownCheck: Check refuses entries without a row or open mark, with both, with a row the table
// lacks or one that says Supported, with an unknown field or a bad version range.
func TestKnownCheck(t *testing.T) {
	rows := []compat.Row{
		{Kind: compat.Annotation, Name: "a/different", Status: compat.Different},
		{Kind: compat.Annotation, Name: "a/not-supported", Status: compat.NotSupported},
		{Kind: compat.Annotation, Name: "a/supported", Status: compat.Supported},
		{Kind: compat.RouteField, Name: "spec.x", Status: compat.Different},
	}
	good := Known{Requests: []string{"host/*"}, Fields: []Field{FieldStatus, FieldPod}, Row: &RowRef{Kind: "annotation", Name: "a/different"}, Note: "n"}
	for _, c := range []struct {
		name string
		edit func(*Known)
		want string // "" for no error, else a part of the error
	}{
		{"different row", func(*Known) {}, ""},
		{"not-supported row", func(k *Known) { k.Row = &RowRef{Kind: "annotation", Name: "a/not-supported"} }, ""},
		{"field row", func(k *Known) { k.Row = &RowRef{Kind: "field", Name: "spec.x"} }, ""},
		{"open", func(k *Known) { k.Row, k.Open = nil, OpenIssue }, ""},
		{"versions", func(k *Known) { k.HAProxy = "<3.0" }, ""},
		{"supported row", func(k *Known) { k.Row = &RowRef{Kind: "annotation", Name: "a/supported"} }, "is supported"},
		{"missing row", func(k *Known) { k.Row = &RowRef{Kind: "annotation", Name: "a/missing"} }, "not in the compatibility table"},
		{"kind mismatch", func(k *Known) { k.Row = &RowRef{Kind: "env", Name: "a/different"} }, "not in the compatibility table"},
		{"neither", func(k *Known) { k.Row = nil }, "neither"},
		{"both", func(k *Known) { k.Open = OpenIssue }, "both"},
		{"other open text", func(k *Known) { k.Row, k.Open = nil, "later" }, "open is"},
		{"unknown field", func(k *Known) { k.Fields = []Field{FieldStatus, "colour"} }, "unknown field"},
		{"no fields", func(k *Known) { k.Fields = nil }, "no fields"},
		{"bad pattern", func(k *Known) { k.Requests = []string{"[x"} }, "request pattern"},
		{"no requests", func(k *Known) { k.Requests = nil }, "no requests"},
		{"bad version", func(k *Known) { k.HAProxy = "3.0" }, "haproxy"},
		{"no note", func(k *Known) { k.Note = " " }, "no note"},
	} {
		t.Run(c.name, func(t *testing.T) {
			k := good
			c.edit(&k)
			err := k.Check(rows)
			switch {
			case c.want == "" && err != nil:
				t.Errorf("Check: %v, want no error", err)
			case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
				t.Errorf("Check: %v, want an error with %q", err, c.want)
			}
		})
	}
}

// TestKnownMatches: an entry accepts a difference of its field, detail (any case), request pattern
// and HAProxy range only.
func TestKnownMatches(t *testing.T) {
	k := Known{Requests: []string{"cookies/*", "host/plain"}, Fields: []Field{FieldStatus, FieldRequestHeaders}, Detail: "forwarded", HAProxy: ">=3.0"}
	d := Difference{Request: "cookies/sticky-1", Field: FieldRequestHeaders, Detail: "Forwarded"}
	v32, v26 := Version{3, 2}, Version{2, 6}
	if !k.Matches(d, v32) {
		t.Errorf("%+v does not match %+v on %s", k, d, v32)
	}
	for _, c := range []struct {
		name string
		d    Difference
		v    Version
	}{
		{"version", d, v26},
		{"field", Difference{Request: d.Request, Field: FieldResponseHeaders, Detail: "Forwarded"}, v32},
		{"detail", Difference{Request: d.Request, Field: d.Field, Detail: "X-Forwarded-For"}, v32},
		{"request", Difference{Request: "host/plain-upper", Field: d.Field, Detail: d.Detail}, v32},
	} {
		if k.Matches(c.d, c.v) {
			t.Errorf("%s: %+v matches %+v on %s", c.name, k, c.d, c.v)
		}
	}
}

// TestCorpusCoversTable: every annotation and Route field of the compatibility table is set by some
// Route (or Service, for the one Service annotation) of the corpus.
func TestCorpusCoversTable(t *testing.T) {
	c := Build()
	used := map[string]bool{"spec.to.kind": true, "spec.to.name": true}
	for _, s := range c.Services() {
		for k := range s.Annotations {
			used[k] = true
		}
	}
	for _, r := range c.Routes() {
		for k := range r.Annotate {
			used[k] = true
		}
		set := func(field string, ok bool) { used[field] = used[field] || ok }
		set("spec.alternateBackends", len(r.Alternates) > 0)
		set("spec.host", r.Host != "")
		set("spec.subdomain", r.Subdomain != "")
		set("spec.path", r.Path != "")
		set("spec.port.targetPort", r.TargetPort != nil)
		set("spec.to.weight", r.To.Weight != nil)
		set("spec.wildcardPolicy", r.Wildcard)
		if h := r.Headers; h != nil {
			set("spec.httpHeaders.actions.request", len(h.Request) > 0)
			set("spec.httpHeaders.actions.response", len(h.Response) > 0)
		}
		if tls := r.TLS; tls != nil {
			set("spec.tls.termination", true)
			set("spec.tls.insecureEdgeTerminationPolicy", tls.Insecure != "")
			set("spec.tls.certificate", tls.OwnCert)
			set("spec.tls.key", tls.OwnCert)
			set("spec.tls.caCertificate", tls.CAChain)
			set("spec.tls.destinationCACertificate", tls.DestCA)
			set("spec.tls.externalCertificate.name", tls.External != "")
		}
	}
	for _, row := range compat.Rows() {
		if (row.Kind == compat.Annotation || row.Kind == compat.RouteField) && !used[row.Name] {
			t.Errorf("the corpus sets no %s %s: add a Route that does (and, for a new field, teach this test to see it)", row.Kind, row.Name)
		}
	}
}
