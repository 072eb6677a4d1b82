package plan_test

import (
	"strings"
	"testing"

	routev1 "github.com/openshift/api/route/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"

	"github.com/haroute/haroute/mapping"
	"github.com/haroute/haroute/mapping/model"
	"github.com/haroute/haroute/mapping/plan"
)

// TestIdledServiceWakesAtRuntime: the cluster IP server of an idled Service comes and goes like any
// server: idling (the pods gone, the annotation set), waking (a pod ready again) and a Route added
// to the idled Service are runtime plans, with the cluster IP server never health-checked.
func TestIdledServiceWakesAtRuntime(t *testing.T) {
	idled := newService("ns", "web")
	idled.Annotations = map[string]string{mapping.AnnotationIdledAt: "2024-01-01T00:00:00Z"}
	idled.Spec.ClusterIP = "172.30.0.10"
	route := newRoute("ns", "r", "www.example.com", 1, withService("web"))
	other := newRoute("ns", "r2", "two.example.com", 2, withService("web"))
	running := mapping.Input{Routes: []*routev1.Route{route}, Services: []*corev1.Service{idled},
		EndpointSlices: []*discoveryv1.EndpointSlice{newSlice("ns", "web", "10.0.0.5", "10.0.0.6")}}
	asleep := running
	asleep.EndpointSlices = []*discoveryv1.EndpointSlice{newSlice("ns", "web")}
	asleepTwo := asleep
	asleepTwo.Routes = []*routev1.Route{route, other}

	for _, step := range []struct {
		name     string
		from, to mapping.Input
		servers  []string
	}{
		{"idling", running, asleep, []string{"ept:web:http:172.30.0.10:80"}},
		{"a second Route to the idled Service", asleep, asleepTwo, []string{"ept:web:http:172.30.0.10:80"}},
		{"waking", asleep, running, []string{"pod:web-10-0-0-5:web:http:10.0.0.5:8080", "pod:web-10-0-0-6:web:http:10.0.0.6:8080"}},
	} {
		t.Run(step.name, func(t *testing.T) {
			p := runtimePlan(t, step.from, step.to)
			b := p.Next.Backend("be_http:ns:r")
			if b == nil {
				b = spareServing(p, "ns/r")
			}
			var got []string
			for _, s := range b.Servers {
				got = append(got, s.Name)
				if strings.HasPrefix(s.Name, "ept:") && s.HealthCheck {
					t.Errorf("the cluster IP server %s is health-checked", s.Name)
				}
			}
			if len(got) != len(step.servers) {
				t.Fatalf("servers %v, want %v", got, step.servers)
			}
			for i := range got {
				if got[i] != step.servers[i] {
					t.Fatalf("servers %v, want %v", got, step.servers)
				}
			}
		})
	}
}

// spareServing returns the backend of Next that serves route, or nil.
func spareServing(p plan.Plan, route string) *model.Backend {
	for _, b := range p.Next.Backends {
		if b.Route == route {
			return b
		}
	}
	return nil
}
