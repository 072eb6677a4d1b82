package plan

import (
	"reflect"
	"testing"

	"github.com/haroute/haroute/mapping/model"
)

// TestSameOptionsAgreesWithOptionNames changes every field of a backend, down to the values it points
// to, and expects the fast check and the named differences to agree: a backend option added to one
// and not the other fails here.
func TestSameOptionsAgreesWithOptionNames(t *testing.T) {
	base := func() model.Backend {
		return model.Backend{
			Name: "be_http:ns:r", Kind: model.KindHTTP, Mode: model.ModeHTTP, Route: "ns/r", Balance: "random",
			Cookie: &model.Cookie{Name: "c", Key: "k"}, CheckInterval: "5000ms", Allowlist: []string{"10.0.0.1"},
			RateLimit: &model.RateLimit{RateTCP: 1}, Rewrite: &model.Rewrite{Prefix: "/a", Target: "/"},
			TLS: &model.BackendTLS{CAFile: "ca"}, Servers: []model.Server{{Name: "s", ID: 1}},
		}
	}
	changed := 0
	var visit func(path string, v reflect.Value, a *model.Backend)
	visit = func(path string, v reflect.Value, a *model.Backend) {
		switch v.Kind() {
		case reflect.Struct:
			for i := range v.NumField() {
				visit(path+"."+v.Type().Field(i).Name, v.Field(i), a)
			}
			return
		case reflect.Pointer:
			visit(path, v.Elem(), a)
			return
		case reflect.Slice:
			if v.Len() > 0 {
				visit(path+"[0]", v.Index(0), a)
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
			t.Fatalf("%s: kind %s not handled", path, v.Kind())
		}
		b := base()
		if same, names := sameOptions(a, &b), optionNames(a, &b); same != (len(names) == 0) {
			t.Errorf("%s changed: sameOptions %v, optionNames %v", path, same, names)
		}
		changed++
		v.Set(old)
	}
	for i := range reflect.TypeOf(model.Backend{}).NumField() {
		b := base()
		a := b.Clone()
		visit("Backend."+reflect.TypeOf(a).Field(i).Name, reflect.ValueOf(&a).Elem().Field(i), &a)
	}
	if changed < 20 {
		t.Fatalf("only %d fields changed", changed)
	}
}
