package plan

import (
	"testing"

	"github.com/haroute/haroute/mapping/model/modeltest"
)

// TestSameOptionsAgreesWithOptionNames changes every field of a backend, down to the values it points
// to, and expects the fast check and the named differences to agree: a backend option added to one
// and not the other fails here.
func TestSameOptionsAgreesWithOptionNames(t *testing.T) {
	a := modeltest.FullBackend()
	a = a.Clone() // the walk changes a's own memory only
	n, err := modeltest.ChangeEachLeaf(&a, func(path string) {
		b := modeltest.FullBackend()
		if same, names := sameOptions(&a, &b), optionNames(&a, &b); same != (len(names) == 0) {
			t.Errorf("%s changed: sameOptions %v, optionNames %v", path, same, names)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if n < 20 {
		t.Fatalf("only %d fields changed", n)
	}
}
