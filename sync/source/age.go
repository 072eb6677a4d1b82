package source

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/haroute/haroute/mapping"
)

// stampAges gives every Route of in whose manifest has no creationTimestamp the time the folder first
// showed that Route, and forgets the Routes in no longer holds. It runs on every scan, on Run's
// goroutine.
//
// mapping.Translate admits Routes oldest first: of two Routes claiming one host from different
// namespaces, the older keeps it. Manifests rarely carry a creationTimestamp, and without one every
// Route is equally old, so namespace/name decides and a new file whose namespace sorts first would take
// a host from the Routes serving it. A Route keeps its time while it stays in the folder, across edits
// of its file and moves to another file (the Route is keyed by namespace and name, not by file); one
// that leaves the folder and comes back later is new again. The clock is read once per scan, so the
// Routes of the first scan (and any that appear in one scan together) are equally old and the
// translation's own tie-breaks (UID, namespace/name) decide between them, as for identical input they
// always do. An explicit creationTimestamp is left as it is. Routes are the only kind stamped: the
// translation orders other kinds by time only between two definitions of the same object, which the
// folder never hands over (a file that defines an object again is left out, see merge).
func (f *Folder) stampAges(in *mapping.Input) {
	var now time.Time // read at the first Route this scan shows for the first time
	ages := make(map[string]time.Time, len(in.Routes))
	for i, r := range in.Routes {
		if r == nil {
			continue
		}
		key := r.Namespace + "/" + r.Name
		at, ok := f.ages[key]
		if !ok {
			if now.IsZero() {
				now = f.now()
			}
			at = now
		}
		ages[key] = at
		if r.CreationTimestamp.IsZero() {
			// A shallow copy: the file's decoded Route stays as decoded (so that a Route that leaves and
			// comes back is stamped anew), and Snapshot hands out deep copies.
			c := *r
			c.CreationTimestamp = metav1.NewTime(at)
			in.Routes[i] = &c
		}
	}
	f.ages = ages
}
