package model_test

import (
	"reflect"
	"testing"

	"github.com/haroute/haroute/mapping/model"
	"github.com/haroute/haroute/mapping/model/modeltest"
)

// TestBackendEqualCoversEveryField changes each field of a backend in turn, down to the fields of the
// values it points to and of its servers, and expects Equal to see every change: a field added to
// Backend, Server or a pointed-to struct without a comparison in Equal fails here.
func TestBackendEqualCoversEveryField(t *testing.T) {
	a := modeltest.FullBackend()
	if b := modeltest.FullBackend(); !a.Equal(&b) {
		t.Fatal("equal backends compare unequal")
	}
	a = a.Clone() // the walk changes a's own memory only
	n, err := modeltest.ChangeEachLeaf(&a, func(path string) {
		if b := modeltest.FullBackend(); b.Equal(&a) || a.Equal(&b) {
			t.Errorf("Equal misses a change of %s", path)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if fields := reflect.TypeOf(model.Backend{}).NumField(); n < fields {
		t.Fatalf("only %d fields changed", n)
	}
}

func TestBackendEqualNilAndEmpty(t *testing.T) {
	a, b := model.Backend{Name: "x"}, model.Backend{Name: "x", Servers: []model.Server{}, Allowlist: []string{}}
	if !a.Equal(&b) {
		t.Fatal("nil and empty slices should be equal")
	}
	var nilB *model.Backend
	if nilB.Equal(&a) || a.Equal(nil) || !nilB.Equal(nil) {
		t.Fatal("nil backends")
	}
}
