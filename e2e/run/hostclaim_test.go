package run

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/haroute/haroute/inspect/views"
	"github.com/haroute/haroute/internal/testkit"
	"github.com/haroute/haroute/mapping"
)

// claimHost is the host the Routes of TestNewRouteCannotTakeHost contend for.
const claimHost = "shop.example.test"

// TestNewRouteCannotTakeHost: in folder mode, Route shop/web (without creationTimestamp, as manifests
// usually are) serves a host; under load, a new file adds Route aaa-other/web for the same host, to
// another backend, from a namespace that sorts first. The new Route is younger: it is rejected
// (HostAlreadyClaimed in `haroute state routes`) and no request fails or reaches its backend. Once
// shop/web's file is removed, aaa-other/web takes the host, still without a failed request.
func TestNewRouteCannotTakeHost(t *testing.T) {
	t.Parallel()
	shop := testkit.StartHTTPBackend(t, "127.0.2.40", "shop")
	other := testkit.StartHTTPBackend(t, "127.0.2.41", "other")
	r := startRouter(t, map[string]string{"shop.yaml": appYAML("shop", claimHost, shop)})
	r.WaitAnswer(claimHost, "/", http.StatusOK, shop.Name)
	l := testkit.StartLoad(t, testkit.NewClient(t, r.HTTPPort, r.HTTPSPort, nil), "http://"+claimHost+"/", shop.Name)

	r.Write("other.yaml", appYAML("aaa-other", claimHost, other))
	row := waitRouteRow(t, r, "aaa-other", "web", nil)
	if row.Status != views.StatusRejected || row.Reason != mapping.ReasonHostAlreadyClaimed {
		t.Errorf("the new Route aaa-other/web: status %s, reason %s (%s); want it rejected as %s",
			row.Status, row.Reason, row.Message, mapping.ReasonHostAlreadyClaimed)
	}
	if row := waitRouteRow(t, r, "shop", "web", nil); row.Status != views.StatusServing {
		t.Errorf("the serving Route shop/web after the new file: status %s, reason %s (%s)", row.Status, row.Reason, row.Message)
	}
	// The load goes on for a while with both Routes in the folder.
	waitRequests(t, l, 500)

	l.Allow(shop.Name, other.Name)
	r.Remove("shop.yaml")
	l.WaitFirst(t, other.Name, applyTimeout)
	l.Allow(other.Name)
	waitRequests(t, l, 200)
	waitRouteRow(t, r, "aaa-other", "web", func(row views.RouteRow) bool { return row.Status == views.StatusServing })
	l.Check(t, 1000)
}

// appYAML returns Route web for host in namespace ns, its Service web and an EndpointSlice of backend.
func appYAML(ns, host string, backend *testkit.Backend) string {
	return fmt.Sprintf(`apiVersion: route.openshift.io/v1
kind: Route
metadata: {name: web, namespace: %[1]s}
spec:
  host: %[2]s
  to: {kind: Service, name: web}
  port: {targetPort: http}
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: %[1]s}
spec:
  ports: [{name: http, port: 80, targetPort: http}]
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  name: web-1
  namespace: %[1]s
  labels: {kubernetes.io/service-name: web}
addressType: IPv4
ports: [{name: http, port: %[3]d, protocol: TCP}]
endpoints:
- addresses: [%[4]q]
  conditions: {ready: true}
  targetRef: {kind: Pod, namespace: %[1]s, name: %[5]s}
`, ns, host, backend.Port, backend.IP, backend.Name)
}

// waitRouteRow waits (at most applyTimeout) until `haroute state routes` lists the Route ns/name with a
// row for which done holds (any row when done is nil), and returns that row.
func waitRouteRow(t *testing.T, r *folderRouter, ns, name string, done func(views.RouteRow) bool) views.RouteRow {
	t.Helper()
	var row views.RouteRow
	err := testkit.Eventually(applyTimeout, 50*time.Millisecond, func() error {
		out, code := inspectCmd(t, r, "state", "routes", "-o", "json")
		var rows []views.RouteRow
		if err := json.Unmarshal(out, &rows); err != nil {
			return fmt.Errorf("exit %d, %w: %s", code, err, strings.TrimSpace(string(out)))
		}
		for _, rr := range rows {
			if rr.Namespace != ns || rr.Name != name {
				continue
			}
			if done != nil && !done(rr) {
				return fmt.Errorf("%s/%s: status %s, reason %s (%s)", ns, name, rr.Status, rr.Reason, rr.Message)
			}
			row = rr
			return nil
		}
		return fmt.Errorf("no row for %s/%s in %+v", ns, name, rows)
	})
	if err != nil {
		t.Fatal(err)
	}
	return row
}

// waitRequests waits (at most applyTimeout) until the load sent n more requests.
func waitRequests(t *testing.T, l *testkit.Load, n int64) {
	t.Helper()
	want := l.Requests() + n
	err := testkit.Eventually(applyTimeout, 10*time.Millisecond, func() error {
		if got := l.Requests(); got < want {
			return fmt.Errorf("the load sent %d requests, waiting for %d", got, want)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
