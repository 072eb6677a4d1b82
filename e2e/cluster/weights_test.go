//go:build e2e

package cluster

import (
	"math"
	"net/http"
	"testing"

	"github.com/haroute/haroute/e2e/framework"
)

// TestWeightedAlternateBackends: a Route to Service a (weight 3) with alternateBackends b (weight 1,
// two pods) and c (weight 0). Each Service gets its share of the requests whatever its number of
// pods: a 75 %, b 25 % split evenly over its pods, c nothing.
func TestWeightedAlternateBackends(t *testing.T) {
	c, ns, pods := framework.Setup(t, "weights")
	bs := pods.StartBackends("a-1", "b-1", "b-2", "c-1")
	c.CreateService(t, ns, "a", bs[0])
	c.CreateService(t, ns, "b", bs[1], bs[2])
	c.CreateService(t, ns, "c", bs[3])
	r := c.StartRouter(t)

	const host = "split.e2e.test"
	c.CreateRoute(t, ns, "split", host, "a", framework.Weight(3), framework.Alternate("b", 1), framework.Alternate("c", 0))
	r.WaitBackends(host, "/", "a-1", "b-1", "b-2")

	const n = 400
	counts := map[string]int{}
	for range n {
		code, be, err := r.Get(host, "/")
		if err != nil || code != http.StatusOK {
			t.Fatalf("GET %s: %d from %q, %v", host, code, be, err)
		}
		counts[be]++
	}
	t.Logf("answers of %d requests: %v", n, counts)
	share := func(names ...string) float64 {
		sum := 0
		for _, name := range names {
			sum += counts[name]
		}
		return float64(sum) / n
	}
	// Weights are spread by HAProxy's round robin: the shares are exact up to a few requests.
	for _, w := range []struct {
		names []string
		want  float64
	}{{[]string{"a-1"}, 0.75}, {[]string{"b-1", "b-2"}, 0.25}, {[]string{"b-1"}, 0.125}, {[]string{"b-2"}, 0.125}, {[]string{"c-1"}, 0}} {
		if got := share(w.names...); math.Abs(got-w.want) > 0.05 {
			t.Errorf("share of %v = %.3f, want %.3f ± 0.05", w.names, got, w.want)
		}
	}
}
