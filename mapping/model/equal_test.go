package model

import (
	"reflect"
	"testing"
)

// TestBackendEqualCoversEveryField changes each field of a backend in turn, down to the fields of the
// values it points to and of its servers, and expects Equal to see every change: a field added to
// Backend, Server or a pointed-to struct without a comparison in Equal fails here.
func TestBackendEqualCoversEveryField(t *testing.T) {
	base := func() Backend {
		return Backend{
			Name: "be_http:ns:r", Kind: KindHTTP, Mode: ModeHTTP, Route: "ns/r", Balance: "random",
			Cookie: &Cookie{Name: "c", Key: "k"}, CheckInterval: "5000ms", Allowlist: []string{"10.0.0.1"},
			RateLimit: &RateLimit{RateTCP: 1}, Rewrite: &Rewrite{Prefix: "/a", Target: "/"},
			TLS: &BackendTLS{CAFile: "ca"}, Servers: []Server{{Name: "s", ID: 1, Addr: "10.0.0.2", Port: 80, Weight: 1, State: StateReady}},
		}
	}
	a := base()
	if b := base(); !a.Equal(&b) {
		t.Fatal("equal backends compare unequal")
	}
	var visit func(path string, v reflect.Value)
	n := 0
	visit = func(path string, v reflect.Value) {
		switch v.Kind() {
		case reflect.Struct:
			for i := range v.NumField() {
				visit(path+"."+v.Type().Field(i).Name, v.Field(i))
			}
			return
		case reflect.Pointer:
			visit(path, v.Elem())
			return
		case reflect.Slice:
			if v.Len() > 0 {
				visit(path+"[0]", v.Index(0))
			}
			return
		}
		old := reflect.New(v.Type()).Elem()
		old.Set(v)
		switch v.Kind() {
		case reflect.String:
			v.SetString(v.String() + "x")
		case reflect.Bool:
			v.SetBool(!v.Bool())
		case reflect.Int, reflect.Int32, reflect.Int64:
			v.SetInt(v.Int() + 1)
		default:
			t.Fatalf("%s: kind %s not handled by this test", path, v.Kind())
		}
		n++
		b := base()
		if b.Equal(&a) || a.Equal(&b) {
			t.Errorf("Equal misses a change of %s", path)
		}
		v.Set(old) // each change is compared on its own
	}
	// Every leaf of a fresh copy is changed, compared and restored in turn.
	fields := reflect.TypeOf(Backend{}).NumField()
	for i := range fields {
		b := base()
		bv := reflect.ValueOf(&b).Elem()
		a = b.Clone()
		visit("Backend."+bv.Type().Field(i).Name, reflect.ValueOf(&a).Elem().Field(i))
	}
	if n < fields {
		t.Fatalf("only %d fields changed", n)
	}
}

func TestBackendEqualNilAndEmpty(t *testing.T) {
	a, b := Backend{Name: "x"}, Backend{Name: "x", Servers: []Server{}, Allowlist: []string{}}
	if !a.Equal(&b) {
		t.Fatal("nil and empty slices should be equal")
	}
	var nilB *Backend
	if nilB.Equal(&a) || a.Equal(nil) || !nilB.Equal(nil) {
		t.Fatal("nil backends")
	}
}
