package mapping

import (
	"fmt"
	"strings"
	"testing"

	routev1 "github.com/openshift/api/route/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/haroute/haroute/mapping/routetest"
)

// portInput is one Route on Service web, whose slice has port "http" 8080, with spec.port tp.
func portInput(tp intstr.IntOrString) Input {
	return Input{
		Routes:         []*routev1.Route{newRoute("ns", "r", "www.example.com", 0, routetest.TargetPort(tp))},
		Services:       []*corev1.Service{newService("ns", "web")},
		EndpointSlices: []*discoveryv1.EndpointSlice{newSlice("ns", "web-1", "web", "10.0.0.1")},
	}
}

// TestTargetPortValid: port names and numbers are admitted; a number written as a string selects the
// same servers as the number (OpenShift compares both with the endpoint's port number), and neither
// selects through the Service's ports.
func TestTargetPortValid(t *testing.T) {
	tests := []struct {
		tp      intstr.IntOrString
		servers int
	}{
		{intstr.FromString("http"), 1},
		{intstr.FromInt32(8080), 1},
		{intstr.FromString("8080"), 1},
		{intstr.FromInt32(80), 0}, // the Service's port number: as in OpenShift, only endpoint ports count
		{intstr.FromString("80"), 0},
		{intstr.FromString("a-1-b"), 0},
		{intstr.FromString("abcdefghijklmno"), 0}, // 15 characters
		{intstr.FromString("65535"), 0},
		{intstr.FromInt32(1), 0},
	}
	for _, tt := range tests {
		t.Run(tt.tp.String(), func(t *testing.T) {
			cfg, problems := translate(t, portInput(tt.tp), testOptions())
			if len(problems) != 0 || len(cfg.Routes) != 1 {
				t.Fatalf("problems %v, want the Route admitted", problems)
			}
			if got := len(cfg.Backends[0].Servers); got != tt.servers {
				t.Errorf("%d servers, want %d", got, tt.servers)
			}
		})
	}
}

// TestTargetPortInvalid: a targetPort that is neither a port name nor a number in 1-65535 rejects the
// Route with a reason (it used to be admitted without servers and without a word).
func TestTargetPortInvalid(t *testing.T) {
	tps := []intstr.IntOrString{
		intstr.FromInt32(0), intstr.FromInt32(-1), intstr.FromInt32(65536),
		intstr.FromString(""), intstr.FromString("http;quit"), intstr.FromString("8080\n"), intstr.FromString(" 8080"),
		intstr.FromString("0"), intstr.FromString("65536"), intstr.FromString("08080"), intstr.FromString("+80"),
		intstr.FromString("HTTP"), intstr.FromString("-http"), intstr.FromString("ht--tp"), intstr.FromString("abcdefghijklmnop"),
		intstr.FromString("%[env(HOME)]"), intstr.FromString("h_ttp"), {Type: 7},
	}
	for _, tp := range tps {
		t.Run(fmt.Sprintf("%d/%q/%d", tp.Type, tp.StrVal, tp.IntVal), func(t *testing.T) {
			cfg, problems := translate(t, portInput(tp), testOptions())
			if len(cfg.Routes) != 0 || len(problems) != 1 {
				t.Fatalf("routes %v problems %v, want the Route rejected", cfg.Routes, problems)
			}
			if p := problems[0]; p.Reason != ReasonInvalidRoute || !strings.HasPrefix(p.Message, "spec.port.targetPort") {
				t.Errorf("got %s, want InvalidRoute about spec.port.targetPort", p)
			}
		})
	}
}

// TestTargetPortInputUnchanged: turning a numeric string into a number does not touch the input.
func TestTargetPortInputUnchanged(t *testing.T) {
	in := portInput(intstr.FromString("8080"))
	translate(t, in, testOptions())
	if tp := in.Routes[0].Spec.Port.TargetPort; tp != intstr.FromString("8080") {
		t.Fatalf("the input's targetPort became %+v", tp)
	}
}
