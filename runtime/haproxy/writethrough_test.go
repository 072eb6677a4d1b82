package haproxy_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	routev1 "github.com/openshift/api/route/v1"
	discoveryv1 "k8s.io/api/discovery/v1"

	"github.com/haroute/haroute/e2e/testbed"
	"github.com/haroute/haroute/internal/testkit"
	"github.com/haroute/haroute/mapping"
	"github.com/haroute/haroute/mapping/layout"
	"github.com/haroute/haroute/mapping/render"
	"github.com/haroute/haroute/runtime/haproxy"
	"github.com/haroute/haroute/runtime/reload"
	"github.com/haroute/haroute/runtime/socket"
)

// TestWriteThroughIsAFreshRender walks a seeded series of changes (endpoints replaced, added and
// removed, Routes added and deleted) through an Instance driving a real HAProxy, and checks after
// every Update that the HAProxy directory holds exactly the files a fresh render of Applied() gives:
// the files written through (only the changed ones) are always a complete configuration of the state
// HAProxy runs, so a restart or a reload never loads anything older. HAProxy then reloads from those
// files by hand, and accepts them.
func TestWriteThroughIsAFreshRender(t *testing.T) {
	const routes, steps = 150, 60
	ctx := context.Background()
	in := benchInputN(routes, 2)
	opts := testbed.RouterOptions(t)
	opts.CheckInterval = "1h"
	first, _ := mapping.Translate(in, opts)
	dir := testkit.TempDir(t)
	ca := testkit.NewCA(t, "write-through CA")
	ro := render.Options{DefaultCertificatePEM: ca.IssueBundle(t, "default.example.com")}
	u, h := startInstance(t, dir, ro, first)
	ro.Dir = dir

	rng := rand.New(rand.NewPCG(2026, 11))
	added := 0
	runtime, reloads := 0, 0
	for step := range steps {
		var what string
		switch k := rng.IntN(4); {
		case k == 0 || k == 1:
			i := rng.IntN(len(in.EndpointSlices))
			s := in.EndpointSlices[i].DeepCopy()
			n := 100000 + step
			addr := fmt.Sprintf("127.2.%d.%d", n>>8&0xff, n&0xff)
			switch {
			case len(s.Endpoints) > 1 && k == 0:
				s.Endpoints[rng.IntN(len(s.Endpoints))].Addresses = []string{addr}
				what = "endpoint replaced in " + s.Name
			case len(s.Endpoints) > 1:
				s.Endpoints = s.Endpoints[:len(s.Endpoints)-1]
				what = "endpoint removed from " + s.Name
			default:
				s.Endpoints = append(s.Endpoints, discoveryv1.Endpoint{Addresses: []string{addr}})
				what = "endpoint added to " + s.Name
			}
			in.EndpointSlices = slices.Clone(in.EndpointSlices)
			in.EndpointSlices[i] = s
		case k == 2 || added == 0:
			// A Route of its own Service: a copy of the first Route under a new name.
			more := benchInputN(1, 2)
			r, svc, sl := more.Routes[0].DeepCopy(), more.Services[0].DeepCopy(), more.EndpointSlices[0].DeepCopy()
			name := fmt.Sprintf("new%03d", step)
			r.Namespace, r.Name, r.Spec.Host, r.Spec.To.Name = "extra", name, name+".extra.example.com", name
			svc.Namespace, svc.Name = "extra", name
			sl.Namespace, sl.Name, sl.Labels[discoveryv1.LabelServiceName] = "extra", name+"-1", name
			in.Routes = append(slices.Clone(in.Routes), r)
			in.Services = append(slices.Clone(in.Services), svc)
			in.EndpointSlices = append(slices.Clone(in.EndpointSlices), sl)
			added++
			what = "Route added: extra/" + name
		default:
			i := slices.IndexFunc(in.Routes, func(r *routev1.Route) bool { return r.Namespace == "extra" })
			if i < 0 {
				continue
			}
			what = "Route deleted: extra/" + in.Routes[i].Name
			in.Routes = slices.Delete(slices.Clone(in.Routes), i, i+1)
			added--
		}
		desired, _ := mapping.Translate(in, opts)
		out, err := u.Update(ctx, desired)
		if err != nil {
			t.Fatalf("step %d (%s): %v", step, what, err)
		}
		if out.Reloaded {
			reloads++
		} else {
			runtime++
		}
		sameAsFreshRender(t, fmt.Sprintf("step %d (%s)", step, what), dir, ro, u)
	}
	if runtime < steps/2 {
		t.Fatalf("%d runtime updates and %d reloads: the walk tests too little write-through", runtime, reloads)
	}
	t.Logf("%d runtime updates, %d reloads", runtime, reloads)
	if err := testbed.CheckConfig(layout.For(dir).Config()); err != nil {
		t.Fatalf("haproxy -c on the written files: %v", err)
	}
	files, err := render.Render(u.Applied(), ro)
	if err != nil {
		t.Fatal(err)
	}
	r := reload.New(testkit.HAProxyBinary(), dir, socket.NewMaster(h.MasterSocket, socket.Options{}))
	if _, err := r.Reload(ctx, files); err != nil {
		t.Fatalf("a reload from the written files: %v", err)
	}
}

// sameAsFreshRender fails unless the files under dir (conf/ and router/, hidden files aside) are the
// files of a fresh render of u.Applied().
func sameAsFreshRender(t *testing.T, what, dir string, ro render.Options, u *haproxy.Instance) {
	t.Helper()
	want, err := render.Render(u.Applied(), ro)
	if err != nil {
		t.Fatalf("%s: render Applied(): %v", what, err)
	}
	got := map[string][]byte{}
	for _, sub := range []string{"conf", "router"} {
		err := filepath.WalkDir(filepath.Join(dir, sub), func(p string, d fs.DirEntry, err error) error {
			if errors.Is(err, fs.ErrNotExist) && p == filepath.Join(dir, sub) {
				return nil // no certificates: no router/
			}
			if err != nil || d.IsDir() || strings.HasPrefix(d.Name(), ".") {
				return err
			}
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(dir, p)
			got[filepath.ToSlash(rel)] = b
			return nil
		})
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	for _, f := range want {
		if b, ok := got[f.Path]; !ok || !bytes.Equal(b, f.Data) {
			t.Fatalf("%s: %s on disk is not the fresh render's (present %v)", what, f.Path, ok)
		}
		delete(got, f.Path)
	}
	for p := range got {
		t.Fatalf("%s: %s on disk is not a file of the fresh render", what, p)
	}
}
