package model

import (
	"reflect"
	"sort"
	"testing"
)

// TestCloneCoversEveryReference fails when Config (or a struct it holds or points to) gains a field
// that the Clone methods would share: every pointer and slice field must be in the list they handle.
func TestCloneCoversEveryReference(t *testing.T) {
	var refs []string
	var walk func(prefix string, typ reflect.Type)
	walk = func(prefix string, typ reflect.Type) {
		for i := range typ.NumField() {
			f := typ.Field(i)
			switch f.Type.Kind() {
			case reflect.Pointer:
				refs = append(refs, prefix+f.Name)
				walk(prefix+f.Name+".", f.Type.Elem())
			case reflect.Slice, reflect.Map, reflect.Interface, reflect.Func, reflect.Chan:
				refs = append(refs, prefix+f.Name)
				e := f.Type.Elem()
				if f.Type.Kind() == reflect.Slice && e.Kind() == reflect.Pointer {
					e = e.Elem() // []*Backend: Clone copies each element too
				}
				if f.Type.Kind() == reflect.Slice && e.Kind() == reflect.Struct {
					walk(prefix+f.Name+"[].", e)
				}
			case reflect.Struct:
				walk(prefix+f.Name+".", f.Type)
			}
		}
	}
	walk("", reflect.TypeOf(Config{}))
	sort.Strings(refs)
	want := []string{"Backends", "Backends[].Allowlist", "Backends[].Cookie", "Backends[].RateLimit", "Backends[].RequestHeaders",
		"Backends[].ResponseHeaders", "Backends[].Rewrite",
		"Backends[].Servers", "Backends[].TLS", "CAFiles", "Certificates", "Certificates[].SNI", "Frontends", "Maps",
		"Maps[].Entries", "Routes"}
	if !reflect.DeepEqual(refs, want) {
		t.Fatalf("Config's reference fields are %v; Clone handles %v: update Clone and this list", refs, want)
	}
}

func TestBackendClone(t *testing.T) {
	b := Backend{
		Name: "be", Cookie: &Cookie{Name: "c"}, RateLimit: &RateLimit{RateTCP: 1}, Rewrite: &Rewrite{Prefix: "/a"},
		TLS: &BackendTLS{CAFile: "ca"}, Allowlist: []string{"10.0.0.1"}, Servers: []Server{{Name: "s", Weight: 1}},
		RequestHeaders: []HeaderRule{{Action: HeaderDelete, Name: "X-A"}}, ResponseHeaders: []HeaderRule{{Action: HeaderDelete, Name: "X-B"}},
	}
	c := b.Clone()
	if !reflect.DeepEqual(b, c) {
		t.Fatalf("clone differs: %+v", c)
	}
	c.Cookie.Name, c.RateLimit.RateTCP, c.Rewrite.Prefix, c.TLS.CAFile = "x", 2, "/b", "y"
	c.Allowlist[0], c.Servers[0].Weight, c.RequestHeaders[0].Name, c.ResponseHeaders[0].Name = "x", 2, "x", "x"
	if b.Cookie.Name != "c" || b.RateLimit.RateTCP != 1 || b.Rewrite.Prefix != "/a" || b.TLS.CAFile != "ca" ||
		b.Allowlist[0] != "10.0.0.1" || b.Servers[0].Weight != 1 || b.RequestHeaders[0].Name != "X-A" || b.ResponseHeaders[0].Name != "X-B" {
		t.Fatalf("changing the clone changed the original: %+v", b)
	}
	if z := (Backend{}).Clone(); !reflect.DeepEqual(z, Backend{}) {
		t.Fatalf("clone of the zero backend: %+v", z)
	}
}

func TestConfigClone(t *testing.T) {
	c := &Config{
		Frontends:    []Frontend{{Name: "public"}},
		Maps:         []MapFile{{Name: "m", Entries: []MapEntry{{Key: "k", Value: "v"}}}},
		Backends:     []*Backend{{Name: "be", Cookie: &Cookie{Name: "c"}, Servers: []Server{{Name: "s"}}}},
		Certificates: []Certificate{{Name: "crt", SNI: []string{"a.example.com"}}},
		CAFiles:      []CAFile{{Name: "ca", PEM: "P"}},
		Routes:       []RouteInfo{{Namespace: "ns", Name: "r"}},
	}
	d := c.Clone()
	if !reflect.DeepEqual(c, d) {
		t.Fatalf("clone differs: %+v", d)
	}
	d.Frontends[0].Name, d.Maps[0].Entries[0].Value, d.Backends[0].Cookie.Name = "x", "x", "x"
	d.Backends[0].Servers[0].Name, d.Certificates[0].SNI[0], d.CAFiles[0].PEM, d.Routes[0].Name = "x", "x", "x", "x"
	if c.Frontends[0].Name != "public" || c.Maps[0].Entries[0].Value != "v" || c.Backends[0].Cookie.Name != "c" ||
		c.Backends[0].Servers[0].Name != "s" || c.Certificates[0].SNI[0] != "a.example.com" || c.CAFiles[0].PEM != "P" ||
		c.Routes[0].Name != "r" {
		t.Fatalf("changing the clone changed the original: %+v", c)
	}
}

func TestCloneKeepsNil(t *testing.T) {
	c := &Config{Backends: []*Backend{{Name: "be"}}}
	if d := c.Clone(); !reflect.DeepEqual(c, d) {
		t.Fatalf("clone of a config with nil slices differs: %+v", d)
	}
}
