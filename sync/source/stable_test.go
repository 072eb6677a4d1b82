package source

import (
	"testing"

	routev1 "github.com/openshift/api/route/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/haroute/haroute/mapping"
)

func TestStableKeepsEqualObjects(t *testing.T) {
	mk := func(name, host string) *routev1.Route {
		return &routev1.Route{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name}, Spec: routev1.RouteSpec{Host: host}}
	}
	svc := func(name string) *corev1.Service {
		return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name}}
	}
	var s Stable
	first := s.Input(mapping.Input{Routes: []*routev1.Route{mk("a", "a.example.com"), mk("b", "b.example.com"), nil}, Services: []*corev1.Service{svc("a")}})
	in := mapping.Input{Routes: []*routev1.Route{mk("a", "a.example.com"), mk("b", "other.example.com"), nil}, Services: []*corev1.Service{svc("a")}}
	second := s.Input(in)
	if second.Routes[0] != first.Routes[0] || second.Services[0] != first.Services[0] {
		t.Error("an equal object did not get the previous pointer")
	}
	if second.Routes[1] != in.Routes[1] || second.Routes[1].Spec.Host != "other.example.com" {
		t.Error("a changed object did not stay the new one")
	}
	if second.Routes[2] != nil || in.Routes[0] == first.Routes[0] {
		t.Error("nil entries must stay nil, and the input's own list is not modified")
	}
	// A Service of the same namespace and name is another object than the Route.
	third := s.Input(mapping.Input{Routes: []*routev1.Route{mk("a", "a.example.com")}})
	if third.Routes[0] != first.Routes[0] || third.Services != nil {
		t.Errorf("third input: %+v", third)
	}
	// What left is forgotten: it comes back as the new object.
	back := svc("a")
	if fourth := s.Input(mapping.Input{Services: []*corev1.Service{back}}); fourth.Services[0] != back {
		t.Error("an object that was gone came back with an old pointer")
	}
}
