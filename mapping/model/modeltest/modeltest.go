// Package modeltest holds what tests of the model and of its consumers share: a backend with every
// option set, and a walk that changes each of its fields in turn. Tests that compare backends use
// them to fail when a field is added without a comparison.
package modeltest

import (
	"fmt"
	"reflect"

	"github.com/haroute/haroute/mapping/model"
)

// FullBackend returns a backend with every field set, each pointer and slice holding a value.
func FullBackend() model.Backend {
	return model.Backend{
		Name: "be_http:ns:r", Kind: model.KindHTTP, Mode: model.ModeHTTP, Route: "ns/r", Balance: "random",
		Cookie: &model.Cookie{Name: "c", Key: "k"}, CheckInterval: "5000ms", Allowlist: []string{"10.0.0.1"},
		RateLimit: &model.RateLimit{RateTCP: 1}, Rewrite: &model.Rewrite{Prefix: "/a", Target: "/"},
		TLS:             &model.BackendTLS{CAFile: "ca"},
		RequestHeaders:  []model.HeaderRule{{Action: model.HeaderSet, Name: "X-A", Key: "be_http:ns:r/req/0"}},
		ResponseHeaders: []model.HeaderRule{{Action: model.HeaderSet, Name: "X-B", Value: "%[res.hdr(X-C)]"}},
		Servers:         []model.Server{{Name: "s", ID: 1, Addr: "10.0.0.2", Port: 80, Weight: 1, State: model.StateReady}},
	}
}

// ChangeEachLeaf changes, one at a time, every leaf field reachable from *b — through structs,
// pointers and the first element of slices — calls changed with the field's path while the change
// holds, then restores the field. A string gets an "x", a bool flips, an integer grows by one. It
// returns how many fields it changed, or an error for a kind it cannot change.
func ChangeEachLeaf(b *model.Backend, changed func(path string)) (int, error) {
	n := 0
	var visit func(path string, v reflect.Value) error
	visit = func(path string, v reflect.Value) error {
		switch v.Kind() {
		case reflect.Struct:
			for i := range v.NumField() {
				if err := visit(path+"."+v.Type().Field(i).Name, v.Field(i)); err != nil {
					return err
				}
			}
			return nil
		case reflect.Pointer:
			if v.IsNil() {
				return nil
			}
			return visit(path, v.Elem())
		case reflect.Slice:
			if v.Len() > 0 {
				return visit(path+"[0]", v.Index(0))
			}
			return nil
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
			return fmt.Errorf("%s: kind %s not handled", path, v.Kind())
		}
		n++
		changed(path)
		v.Set(old)
		return nil
	}
	err := visit("Backend", reflect.ValueOf(b).Elem())
	return n, err
}
