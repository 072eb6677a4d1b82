package model

import (
	"reflect"
	"sort"
	"testing"
)

// TestBackendCloneCoversEveryReference fails when Backend (or a struct it points to) gains a field
// that Clone would share: every pointer and slice field must be in the list Clone handles.
func TestBackendCloneCoversEveryReference(t *testing.T) {
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
				if e := f.Type.Elem(); f.Type.Kind() == reflect.Slice && e.Kind() == reflect.Struct {
					walk(prefix+f.Name+"[].", e)
				}
			case reflect.Struct:
				walk(prefix+f.Name+".", f.Type)
			}
		}
	}
	walk("", reflect.TypeOf(Backend{}))
	sort.Strings(refs)
	want := []string{"Allowlist", "Cookie", "RateLimit", "Rewrite", "Servers", "TLS"}
	if !reflect.DeepEqual(refs, want) {
		t.Fatalf("Backend's reference fields are %v; Clone handles %v: update Clone and this list", refs, want)
	}
}

func TestBackendClone(t *testing.T) {
	b := Backend{
		Name: "be", Cookie: &Cookie{Name: "c"}, RateLimit: &RateLimit{RateTCP: 1}, Rewrite: &Rewrite{Prefix: "/a"},
		TLS: &BackendTLS{CAFile: "ca"}, Allowlist: []string{"10.0.0.1"}, Servers: []Server{{Name: "s", Weight: 1}},
	}
	c := b.Clone()
	if !reflect.DeepEqual(b, c) {
		t.Fatalf("clone differs: %+v", c)
	}
	c.Cookie.Name, c.RateLimit.RateTCP, c.Rewrite.Prefix, c.TLS.CAFile = "x", 2, "/b", "y"
	c.Allowlist[0], c.Servers[0].Weight = "x", 2
	if b.Cookie.Name != "c" || b.RateLimit.RateTCP != 1 || b.Rewrite.Prefix != "/a" || b.TLS.CAFile != "ca" ||
		b.Allowlist[0] != "10.0.0.1" || b.Servers[0].Weight != 1 {
		t.Fatalf("changing the clone changed the original: %+v", b)
	}
	if z := (Backend{}).Clone(); !reflect.DeepEqual(z, Backend{}) {
		t.Fatalf("clone of the zero backend: %+v", z)
	}
}
