package controller

import (
	"context"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	routefake "github.com/openshift/client-go/route/clientset/versioned/fake"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	kubefake "k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/haroute/haroute/mapping"
	"github.com/haroute/haroute/mapping/model"
	"github.com/haroute/haroute/mapping/routetest"
	"github.com/haroute/haroute/sync/source"
)

// countingSource counts the snapshots taken from a Source.
type countingSource struct {
	source.Source
	snapshots atomic.Int64
}

func (s *countingSource) Snapshot() (mapping.Input, []source.FileError) {
	s.snapshots.Add(1)
	return s.Source.Snapshot()
}

// watching reports whether a watch on resource has been opened (the fake API server does not replay
// events that happen between an informer's list and its watch).
func watching(actions []k8stesting.Action, resource string) bool {
	for _, a := range actions {
		if a.GetVerb() == "watch" && a.GetResource().Resource == resource {
			return true
		}
	}
	return false
}

// lastUpdate returns the last desired state the fake HAProxy side accepted (nil: none).
func (u *fakeHAProxy) lastUpdate() *model.Config {
	ups, _ := u.snapshot()
	if len(ups) == 0 {
		return nil
	}
	return ups[len(ups)-1]
}

// TestClusterInformerDriven drives the controller through client-go informers over fake clientsets:
// objects are created, changed and deleted through the fake API, never handed to the controller.
func TestClusterInformerDriven(t *testing.T) {
	const wait = 10 * time.Second
	kube := kubefake.NewClientset(
		runtime.Object(routetest.Service("demo", "web")),
		runtime.Object(routetest.PodSlice("demo", "web", "10.0.0.1", "10.0.0.2")),
	)
	routes := routefake.NewClientset()
	cluster := source.NewCluster(kube, routes, source.ClusterOptions{Log: testLogger(t)})
	src := &countingSource{Source: cluster}
	up := newFakeHAProxy()
	st := &fakeStatus{}
	c := &Controller{
		Source:        src,
		HAProxy:       up,
		Status:        st,
		Options:       mapping.DefaultOptions(),
		Holdoff:       20 * time.Millisecond,
		MaxHoldoff:    200 * time.Millisecond,
		DriftInterval: time.Hour,
		Metrics:       NewMetrics(),
	}
	run(t, c)

	// The informers have not run: no translation.
	time.Sleep(150 * time.Millisecond)
	if n := src.snapshots.Load(); n != 0 || up.count("update") != 0 {
		t.Fatalf("%d snapshots, %d updates before the informers synced", n, up.count("update"))
	}

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- cluster.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("cluster Run: %v", err)
			}
		case <-time.After(wait):
			t.Errorf("cluster Run did not return within %s", wait)
		}
	})
	waitFor(t, wait, "the first sync (no Routes)", func() bool {
		cfg := up.lastUpdate()
		return cfg != nil && len(cfg.Routes) == 0
	})
	waitFor(t, wait, "the informers' watches", func() bool {
		return watching(routes.Fake.Actions(), "routes") && watching(kube.Fake.Actions(), "services") &&
			watching(kube.Fake.Actions(), "endpointslices")
	})

	bg := context.Background()
	// A Route created through the API is admitted with the Service's ready endpoints.
	if _, err := routes.RouteV1().Routes("demo").Create(bg, routetest.Route("demo", "web", "www.example.com", 0), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, wait, "the Route admitted with its servers", func() bool {
		return slices.Equal(serversOf(up.lastUpdate(), "demo", "web"), []string{"10.0.0.1", "10.0.0.2"})
	})
	if cfg := up.lastUpdate(); cfg.Routes[0].Host != "www.example.com" {
		t.Fatalf("admitted Route: %+v", cfg.Routes[0])
	}

	// A scaled EndpointSlice.
	if _, err := kube.DiscoveryV1().EndpointSlices("demo").Update(bg, routetest.PodSlice("demo", "web", "10.0.0.1", "10.0.0.2", "10.0.0.3"), metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, wait, "the third server", func() bool {
		return slices.Equal(serversOf(up.lastUpdate(), "demo", "web"), []string{"10.0.0.1", "10.0.0.2", "10.0.0.3"})
	})

	// A second Route claiming the same host is rejected; status sees the problem.
	late := routetest.Route("demo", "copy", "www.example.com", int(time.Hour/time.Second))
	if _, err := routes.RouteV1().Routes("demo").Create(bg, late, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, wait, "the conflicting Route's problem passed to status", func() bool {
		st.mu.Lock()
		defer st.mu.Unlock()
		for _, p := range st.last {
			if p.Name == "copy" && p.Reason == mapping.ReasonHostAlreadyClaimed {
				return true
			}
		}
		return false
	})

	// Deleting both Routes empties the desired state.
	for _, name := range []string{"web", "copy"} {
		if err := routes.RouteV1().Routes("demo").Delete(bg, name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, wait, "the Routes removed", func() bool {
		cfg := up.lastUpdate()
		return cfg != nil && len(cfg.Routes) == 0
	})
	if !c.Ready() {
		t.Fatal("not ready after successful syncs")
	}
}
