package status

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	routev1 "github.com/openshift/api/route/v1"
	routefake "github.com/openshift/client-go/route/clientset/versioned/fake"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	k8stesting "k8s.io/client-go/testing"

	"github.com/haroute/haroute/mapping"
	"github.com/haroute/haroute/mapping/model"
)

// testWait bounds every wait of these tests; reaching it is a failure, never the expected path.
const testWait = 10 * time.Second

// state reports whether a snapshot still waits to be written (recorded, being written, or waiting
// to be retried) and the error of the last write (nil once a write succeeded, or before the first).
func (q *Queue) state() (pending bool, lastErr error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.next != nil || q.busy, q.lastErr
}

// startQueue runs q's worker until the test ends. The cleanup cancels it and fails the test when Run
// does not return within testWait; cleanups registered later (such as opening a gate) run before.
func startQueue(t *testing.T, q *Queue) (cancel context.CancelFunc, done <-chan struct{}) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	ch := make(chan struct{})
	go func() {
		defer close(ch)
		q.Run(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-ch:
		case <-time.After(testWait):
			t.Errorf("Queue.Run did not return within %s of its context's end", testWait)
		}
	})
	return cancel, ch
}

// waitFor polls cond until it holds, failing the test after testWait.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(testWait)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("still waiting after %s for %s", testWait, what)
		}
		time.Sleep(time.Millisecond)
	}
}

// waitWritten waits until q has written its last snapshot (nothing pending, no error).
func waitWritten(t *testing.T, q *Queue) {
	t.Helper()
	waitFor(t, "the queue to write its last snapshot", func() bool {
		pending, err := q.state()
		return !pending && err == nil
	})
}

// receive waits for a value on ch, failing the test after testWait.
func receive[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(testWait):
		t.Fatalf("still waiting after %s for %s", testWait, what)
		panic("unreachable")
	}
}

// gate holds every UpdateStatus until opened: the API server does not answer meanwhile. Note that
// the fake clientset holds its lock while a reactor runs, so the test must not call the client
// while the gate holds a call.
type gate struct {
	entered chan struct{} // one value per UpdateStatus that reached the gate
	release chan struct{}
	once    sync.Once
}

func blockStatus(t *testing.T, client *routefake.Clientset) *gate {
	g := &gate{entered: make(chan struct{}, 100), release: make(chan struct{})}
	client.PrependReactor("update", "routes", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if a.GetSubresource() == "status" {
			select {
			case g.entered <- struct{}{}:
			default:
			}
			<-g.release
		}
		return false, nil, nil
	})
	t.Cleanup(g.open) // a failed test must not leave the worker blocked
	return g
}

func (g *gate) open() { g.once.Do(func() { close(g.release) }) }

// failStatus makes the UpdateStatus calls fail with a server error while fail(n) says so (n counts
// the calls from 1).
func failStatus(client *routefake.Clientset, fail func(n int32) bool) *atomic.Int32 {
	var calls atomic.Int32
	client.PrependReactor("update", "routes", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if a.GetSubresource() != "status" {
			return false, nil, nil
		}
		if fail(calls.Add(1)) {
			return true, nil, apierrors.NewInternalError(errors.New("etcd is sad"))
		}
		return false, nil, nil
	})
	return &calls
}

func reject(reason string) []mapping.Problem {
	return []mapping.Problem{{Namespace: "ns", Name: "r", Reason: reason, Message: "m " + reason}}
}

// writesOf lists the UpdateStatus calls recorded for Route ns/name, each as the Admitted condition
// it carried ("True", or "False/<reason>"), failed calls included.
func writesOf(client *routefake.Clientset, ns, name string) []string {
	var out []string
	for _, a := range client.Actions() {
		u, ok := a.(k8stesting.UpdateAction)
		if !ok || a.GetVerb() != "update" || a.GetSubresource() != "status" {
			continue
		}
		r := u.GetObject().(*routev1.Route)
		if r.Namespace != ns || r.Name != name {
			continue
		}
		desc := "none"
		for _, in := range own(r) {
			if c := admittedCondition(&in); c != nil {
				desc = string(c.Status)
				if c.Status != corev1.ConditionTrue {
					desc += "/" + c.Reason
				}
			}
		}
		out = append(out, desc)
	}
	return out
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// blockedQueue starts a Queue over route ns/r whose first write (an admission) is in flight and held
// by the API server until g is opened.
func blockedQueue(t *testing.T) (*Queue, *routefake.Clientset, []*routev1.Route, *gate) {
	t.Helper()
	w, client, _ := newWriter(t, route("ns", "r", "r.example.com"))
	q := NewQueue(w, QueueOptions{})
	routes := list(t, client)
	startQueue(t, q)
	g := blockStatus(t, client)
	if err := q.Apply(context.Background(), routes, admitAll("r"), nil); err != nil {
		t.Fatalf("Apply: %v", err)
	}
	receive(t, g.entered, "the worker's UpdateStatus")
	return q, client, routes, g
}

// TestQueueApplyDoesNotWaitForTheAPIServer: with the worker stuck in an UpdateStatus the API server
// does not answer, Apply still returns (nil) and the snapshot waits; once the server answers, it is
// written.
func TestQueueApplyDoesNotWaitForTheAPIServer(t *testing.T) {
	q, client, routes, g := blockedQueue(t)
	ctx := context.Background()

	returned := make(chan error, 1)
	go func() { returned <- q.Apply(ctx, routes, &model.Config{}, reject(mapping.ReasonInvalidHost)) }()
	if err := receive(t, returned, "Apply to return while the API server does not answer"); err != nil {
		t.Fatalf("Apply while the API server is blocked: %v", err)
	}
	if pending, _ := q.state(); !pending {
		t.Errorf("State says nothing is pending while a write is blocked and another snapshot waits")
	}

	g.open()
	waitWritten(t, q)
	if _, c := onlyCondition(t, get(t, client, "ns", "r")); c.Status != corev1.ConditionFalse || c.Reason != mapping.ReasonInvalidHost {
		t.Errorf("condition %+v, want the second snapshot's InvalidHost", c)
	}
}

// TestQueueCoalesces: the snapshots recorded while a write is blocked collapse into the newest one;
// the ones in between never reach the API server.
func TestQueueCoalesces(t *testing.T) {
	q, client, routes, g := blockedQueue(t)
	ctx := context.Background()
	for _, reason := range []string{mapping.ReasonInvalidHost, mapping.ReasonHostAlreadyClaimed, mapping.ReasonInvalidAnnotation} {
		if err := q.Apply(ctx, routes, &model.Config{}, reject(reason)); err != nil {
			t.Fatalf("Apply (%s): %v", reason, err)
		}
	}
	g.open()
	waitWritten(t, q)

	wantWrites(t, client, mapping.ReasonInvalidAnnotation, "the blocked write, then only the newest snapshot")
}

// wantWrites checks that route ns/r got exactly two UpdateStatus calls, an admission and a rejection
// for reason, and ends rejected for reason (why says what the two calls stand for).
func wantWrites(t *testing.T, client *routefake.Clientset, reason, why string) {
	t.Helper()
	want := []string{"True", "False/" + reason}
	if got := writesOf(client, "ns", "r"); !equalStrings(got, want) {
		t.Errorf("UpdateStatus calls %v, want %v: %s", got, want, why)
	}
	if _, c := onlyCondition(t, get(t, client, "ns", "r")); c.Reason != reason {
		t.Errorf("condition %+v, want the newest snapshot's %s", c, reason)
	}
}

// TestQueueRetriesFailedWrites: a write the API server refuses is tried again until it succeeds, and
// State reports the failure meanwhile.
func TestQueueRetriesFailedWrites(t *testing.T) {
	w, client, _ := newWriter(t, route("ns", "r", "r.example.com"))
	q := NewQueue(w, QueueOptions{})
	q.retryInitial, q.retryMax = time.Millisecond, 2*time.Millisecond
	const failures = 3
	calls := failStatus(client, func(n int32) bool { return n <= failures })
	// The reactor runs inside the worker's write, so each retry sees the state the failure left.
	var reported atomic.Int32
	client.PrependReactor("update", "routes", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if a.GetSubresource() == "status" && calls.Load() >= 1 {
			if pending, err := q.state(); pending && apierrors.IsInternalError(err) {
				reported.Add(1)
			}
		}
		return false, nil, nil
	})
	startQueue(t, q)

	if err := q.Apply(context.Background(), list(t, client), admitAll("r"), nil); err != nil {
		t.Fatalf("Apply: %v", err)
	}
	waitWritten(t, q)
	if n := calls.Load(); n != failures+1 {
		t.Errorf("%d UpdateStatus calls, want %d (%d failures, then success)", n, failures+1, failures)
	}
	if n := reported.Load(); n != failures {
		t.Errorf("State reported the failure before %d retries, want %d", n, failures)
	}
	if _, c := onlyCondition(t, get(t, client, "ns", "r")); c.Status != corev1.ConditionTrue {
		t.Errorf("condition %+v, want admitted", c)
	}
}

// TestQueueNewerSnapshotSupersedesRetry: after a failure, a newer snapshot replaces the one waiting
// for its retry and is written without waiting for the backoff (an hour here).
func TestQueueNewerSnapshotSupersedesRetry(t *testing.T) {
	w, client, _ := newWriter(t, route("ns", "r", "r.example.com"))
	q := NewQueue(w, QueueOptions{})
	q.retryInitial, q.retryMax = time.Hour, time.Hour
	failStatus(client, func(n int32) bool { return n == 1 })
	startQueue(t, q)
	ctx := context.Background()
	routes := list(t, client)

	if err := q.Apply(ctx, routes, admitAll("r"), nil); err != nil {
		t.Fatalf("Apply: %v", err)
	}
	waitFor(t, "the first write to fail", func() bool {
		_, err := q.state()
		return err != nil
	})
	if err := q.Apply(ctx, routes, &model.Config{}, reject(mapping.ReasonInvalidHost)); err != nil {
		t.Fatalf("Apply: %v", err)
	}
	waitWritten(t, q)

	wantWrites(t, client, mapping.ReasonInvalidHost, "the failed admission, then only the newer snapshot")
}

// TestQueueIgnoresCallersContext: the caller's context may be gone by the time the worker writes;
// the worker writes under Run's.
func TestQueueIgnoresCallersContext(t *testing.T) {
	w, client, _ := newWriter(t, route("ns", "r", "r.example.com"))
	q := NewQueue(w, QueueOptions{})
	startQueue(t, q)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := q.Apply(ctx, list(t, client), admitAll("r"), nil); err != nil {
		t.Fatalf("Apply with an ended context: %v", err)
	}
	waitWritten(t, q)
	if _, c := onlyCondition(t, get(t, client, "ns", "r")); c.Status != corev1.ConditionTrue {
		t.Errorf("condition %+v, want admitted", c)
	}
}

// blockingLimiter holds every Wait until its context ends, announcing each on entered.
type blockingLimiter struct{ entered chan struct{} }

func (l *blockingLimiter) TryAccept() bool { return false }
func (l *blockingLimiter) Accept()         { panic("the Writer is to use Wait") }
func (l *blockingLimiter) Stop()           {}
func (l *blockingLimiter) QPS() float32    { return 0 }
func (l *blockingLimiter) Wait(ctx context.Context) error {
	l.entered <- struct{}{}
	<-ctx.Done()
	return ctx.Err()
}

// TestQueueRunStopsWithItsContext: Run returns once its context ends, whether the worker is idle,
// waiting to retry a failed write, or waiting for the rate limiter inside a write (Run starts no
// goroutine of its own, so its return leaves nothing behind). Apply still returns at once afterwards.
func TestQueueRunStopsWithItsContext(t *testing.T) {
	cases := []struct {
		name string
		// setup prepares q and its client; ready, when set, is called after the first Apply and
		// returns once the worker is in the state under test.
		setup func(t *testing.T, q *Queue, client *routefake.Clientset) (ready func())
	}{
		{"idle", func(t *testing.T, q *Queue, client *routefake.Clientset) func() {
			return func() { waitWritten(t, q) }
		}},
		{"waiting to retry", func(t *testing.T, q *Queue, client *routefake.Clientset) func() {
			q.retryInitial, q.retryMax = time.Hour, time.Hour
			failStatus(client, func(int32) bool { return true })
			return func() {
				waitFor(t, "the write to fail", func() bool {
					_, err := q.state()
					return err != nil
				})
			}
		}},
		{"waiting for the limiter", func(t *testing.T, q *Queue, client *routefake.Clientset) func() {
			l := &blockingLimiter{entered: make(chan struct{}, 1)}
			q.w.limiter = l
			return func() { receive(t, l.entered, "the worker to wait for the limiter") }
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w, client, _ := newWriter(t, route("ns", "r", "r.example.com"))
			q := NewQueue(w, QueueOptions{})
			ready := tc.setup(t, q, client)
			routes := list(t, client)
			cancel, done := startQueue(t, q)
			if err := q.Apply(context.Background(), routes, admitAll("r"), nil); err != nil {
				t.Fatalf("Apply: %v", err)
			}
			ready()

			cancel()
			receive(t, done, "Run to return after its context ended")

			returned := make(chan error, 2)
			go func() {
				for range 2 { // the second finds the wake-up slot taken
					returned <- q.Apply(context.Background(), routes, &model.Config{}, reject(mapping.ReasonInvalidHost))
				}
			}()
			for range 2 {
				if err := receive(t, returned, "Apply to return after Run stopped"); err != nil {
					t.Fatalf("Apply after Run stopped: %v", err)
				}
			}
		})
	}
}

// countingLimiter lets everything through and counts how often it was asked.
type countingLimiter struct{ asked atomic.Int32 }

func (l *countingLimiter) TryAccept() bool { l.asked.Add(1); return true }
func (l *countingLimiter) Accept()         { l.asked.Add(1) }
func (l *countingLimiter) Stop()           {}
func (l *countingLimiter) QPS() float32    { return 0 }
func (l *countingLimiter) Wait(context.Context) error {
	l.asked.Add(1)
	return nil
}

// TestQueuePacesEveryWrite: the limiter is asked once per UpdateStatus: first writes, writes after
// a conflict and the removal of a departed Route's entry alike; nothing else asks it.
func TestQueuePacesEveryWrite(t *testing.T) {
	routes, cfg, problems := fixture()
	w, client, _ := newWriter(t, routes...)
	q := NewQueue(w, QueueOptions{})
	l := &countingLimiter{}
	w.limiter = l
	startQueue(t, q)
	ctx := context.Background()

	step := func(name string, view []*routev1.Route, cfg *model.Config, problems []mapping.Problem, wantWrites int) {
		t.Helper()
		client.ClearActions()
		before := l.asked.Load()
		if err := q.Apply(ctx, view, cfg, problems); err != nil {
			t.Fatalf("%s: Apply: %v", name, err)
		}
		waitWritten(t, q)
		writes := total(statusUpdates(client))
		if writes != wantWrites {
			t.Fatalf("%s: %d UpdateStatus calls, want %d", name, writes, wantWrites)
		}
		if asked := int(l.asked.Load() - before); asked != writes {
			t.Errorf("%s: limiter asked %d times for %d UpdateStatus calls", name, asked, writes)
		}
	}

	step("first snapshot", list(t, client), cfg, problems, 4)
	step("unchanged", list(t, client), cfg, problems, 0)

	// ns2/b leaves the router's view: its entry is removed (one write).
	var view []*routev1.Route
	for _, r := range list(t, client) {
		if r.Name != "b" {
			view = append(view, r)
		}
	}
	step("departed", view, cfg, nil, 1)

	// ns1/g is rejected now, and its first write meets a conflict: two writes of the same Route.
	calls := conflictOn(client, 1)
	var rejectG model.Config
	for _, ri := range cfg.Routes {
		if ri.Name != "g" {
			rejectG.Routes = append(rejectG.Routes, ri)
		}
	}
	gProblem := []mapping.Problem{{Namespace: "ns1", Name: "g", Reason: mapping.ReasonInvalidHost, Message: "bad"}}
	step("conflict", list(t, client), &rejectG, gProblem, 2)
	if n := calls.Load(); n != 2 {
		t.Errorf("%d UpdateStatus calls reached the conflict reactor, want 2", n)
	}
}

// TestNewQueueDefaults: zero options take the defaults; set ones are kept.
func TestNewQueueDefaults(t *testing.T) {
	w, _, _ := newWriter(t)
	NewQueue(w, QueueOptions{})
	if got := w.limiter.QPS(); got != DefaultQPS {
		t.Errorf("default QPS %v, want %v", got, DefaultQPS)
	}
	NewQueue(w, QueueOptions{QPS: 7, Burst: 3})
	if got := w.limiter.QPS(); got != 7 {
		t.Errorf("QPS %v, want 7", got)
	}
}
