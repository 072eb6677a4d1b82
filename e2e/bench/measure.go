//go:build e2e

package bench

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"testing"
	"time"

	routev1 "github.com/openshift/api/route/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/haroute/haroute/e2e/framework"
	"github.com/haroute/haroute/internal/testkit"
)

// Bounds of WaitServed.
const (
	servedPoll = 500 * time.Millisecond
	// sampleSize is about how many hosts WaitServed requests per attempt (spread evenly, the last
	// Route included).
	sampleSize = 20
)

// Served says when a router was first seen serving a workload: Answered when a sample of the hosts
// first answered from their backends, Admitted when every Route first carried its Admitted=True
// entry; Served is the later of the two.
type Served struct {
	Answered, Admitted time.Time
}

// Served returns the later of Answered and Admitted.
func (s Served) Served() time.Time {
	if s.Answered.After(s.Admitted) {
		return s.Answered
	}
	return s.Admitted
}

// WaitServed waits (bounded by timeout) until router routerName serves the whole workload: every
// Route carries its Admitted=True entry from it (unless admitted is false: the stock router writes
// status at 5 requests a second, 33 minutes for 10,000 Routes) and a sample of the hosts, requested
// through client, answers 200 from one of its Service's backends. It closes the client's idle connections on return
// (a kept-alive connection would hold an HAProxy of an older generation).
func WaitServed(t testing.TB, c *framework.Cluster, w *Workload, routerName string, client *testkit.Client, admitted bool, timeout time.Duration) Served {
	t.Helper()
	defer client.CloseIdleConnections()
	var s Served
	err := testkit.Eventually(timeout, servedPoll, func() error {
		var errs []error
		if s.Answered.IsZero() {
			if err := checkSample(client, w); err != nil {
				errs = append(errs, err)
			} else {
				s.Answered = time.Now()
			}
		}
		if s.Admitted.IsZero() && admitted {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			if n, err := admittedBy(ctx, c, w.Namespace, routerName); err != nil {
				errs = append(errs, err)
			} else if n < w.Routes {
				errs = append(errs, fmt.Errorf("%d of %d Routes admitted by %q", n, w.Routes, routerName))
			} else {
				s.Admitted = time.Now()
			}
		}
		return errors.Join(errs...)
	})
	if err != nil {
		t.Fatalf("router %q does not serve the workload: %v", routerName, err)
	}
	return s
}

// checkSample requests a sample of the workload's hosts (sample) and checks their answers.
func checkSample(client *testkit.Client, w *Workload) error {
	for _, i := range sample(w.Routes) {
		if err := checkAnswer(client, w, i); err != nil {
			return err
		}
	}
	return nil
}

// sample returns the indices of about sampleSize Routes spread over 0…n-1, n-1 included.
func sample(n int) []int {
	step := max(1, n/sampleSize)
	var out []int
	for i := 0; i < n; i += step {
		out = append(out, i)
	}
	if out[len(out)-1] != n-1 {
		out = append(out, n-1)
	}
	return out
}

// checkAnswer requests Route i's host and checks that one of its Service's backends answered 200.
func checkAnswer(client *testkit.Client, w *Workload, i int) error {
	return checkAnswerFrom(client, w.Host(i), w.BackendsOf(i))
}

// checkAnswerFrom requests host and checks that one of backends answered 200.
func checkAnswerFrom(client *testkit.Client, host string, backends []*framework.Backend) error {
	resp, err := client.Do(http.MethodGet, "http://"+host+"/", nil)
	if err != nil {
		return fmt.Errorf("GET %s: %w", host, err)
	}
	names := backendNames(backends)
	if resp.Status != http.StatusOK || !slices.Contains(names, resp.Backend) {
		return fmt.Errorf("GET %s: answer %d from %q, want 200 from one of %v", host, resp.Status, resp.Backend, names)
	}
	return nil
}

// backendNames returns the pod names of backends.
func backendNames(backends []*framework.Backend) []string {
	names := make([]string, len(backends))
	for i, b := range backends {
		names[i] = b.Name
	}
	return names
}

// admittedBy counts the Routes of ns whose status has an Admitted=True entry from routerName.
func admittedBy(ctx context.Context, c *framework.Cluster, ns, routerName string) (int, error) {
	list, err := c.Routes.RouteV1().Routes(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return 0, fmt.Errorf("list routes of %s: %w", ns, err)
	}
	n := 0
	for _, r := range list.Items {
		for _, in := range r.Status.Ingress {
			if in.RouterName == routerName && admitted(in.Conditions) {
				n++
				break
			}
		}
	}
	return n, nil
}

func admitted(conds []routev1.RouteIngressCondition) bool {
	for _, c := range conds {
		if c.Type == routev1.RouteAdmitted && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

// Memory is what one router uses, in kB, with its HAProxy processes.
type Memory struct {
	// HAProxyPIDs are the HAProxy processes measured.
	HAProxyPIDs []int
	// HAProxyRSS and HAProxyPSS sum VmRSS and Pss over them (RSS counts the pages a master shares
	// with its forked workers in each; PSS divides them).
	HAProxyRSS, HAProxyPSS int
	// RouterRSS and RouterPSS are the router process's.
	RouterRSS, RouterPSS int
}

// Measure reads the memory of the router process routerPID and of the HAProxy processes pids.
func Measure(routerPID int, pids []int) (Memory, error) {
	m := Memory{HAProxyPIDs: pids}
	var err error
	if m.HAProxyRSS, err = RSS(pids); err != nil {
		return m, err
	}
	if m.HAProxyPSS, err = PSS(pids); err != nil {
		return m, err
	}
	if m.RouterRSS, err = RSS([]int{routerPID}); err != nil {
		return m, err
	}
	if m.RouterPSS, err = PSS([]int{routerPID}); err != nil {
		return m, err
	}
	return m, nil
}
