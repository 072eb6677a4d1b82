package traffic

import (
	"strconv"
	"strings"
	"testing"

	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/haroute/haroute/e2e/testbed"
	"github.com/haroute/haroute/internal/testkit"
	"github.com/haroute/haroute/mapping"
)

// TestIdledService: a Route whose Service was idled (idling.alpha.openshift.io/idled-at) and has no
// ready endpoint sends its requests to the Service's cluster IP and port, as OpenShift's router
// does, where the platform wakes the pods (here a server stands in for it); the same Service
// without the annotation answers 503.
func TestIdledService(t *testing.T) {
	f := newFixture(t)
	waker := testkit.StartHTTPBackend(t, "127.0.0.7", "cluster-ip")
	f.m.ServiceAt("idle", "sleeping").ServiceAt("idle", "plain")
	f.m.Route("idle", "sleeping", "sleeping.example.com", "", "sleeping")
	f.m.Route("idle", "plain", "plain.example.com", "", "plain")
	in := f.m.Input(t)
	emptyPort := int32(8080)
	for _, svc := range in.Services {
		svc.Spec.ClusterIP = waker.IP
		svc.Spec.Ports[0].Port = int32(waker.Port)
		if svc.Name == "sleeping" {
			svc.Annotations = map[string]string{mapping.AnnotationIdledAt: "2024-01-01T00:00:00Z"}
		}
		// The slice of a scaled-down Service: its port, no endpoint.
		in.EndpointSlices = append(in.EndpointSlices, &discoveryv1.EndpointSlice{
			ObjectMeta: metav1.ObjectMeta{Namespace: svc.Namespace, Name: svc.Name + "-empty",
				Labels: map[string]string{discoveryv1.LabelServiceName: svc.Name}},
			AddressType: discoveryv1.AddressTypeIPv4,
			Ports:       []discoveryv1.EndpointPort{{Name: &svc.Spec.Ports[0].Name, Port: &emptyPort}},
		})
	}
	r := testbed.StartStaticHAProxy(t, in, testbed.RouterOptions(t), f.ca.IssueBundle(t, defaultCertName), f.ca.Pool())
	r.RequireAdmitted(t)

	expect(t, r.Client, "http://sleeping.example.com/wake?x=1", want{200, "cluster-ip", "/wake"})
	expect(t, r.Client, "http://plain.example.com/", want{503, "", ""})
	if n := waker.Requests(); n != 1 {
		t.Errorf("the cluster IP received %d requests, want the one for the idled Service", n)
	}
	server := "  server ept:sleeping:" + testbed.PortName + ":" + waker.IP + ":" + strconv.Itoa(waker.Port) + " "
	found := false
	for _, file := range r.Files {
		found = found || strings.Contains(string(file.Data), server)
	}
	if !found {
		t.Errorf("no server line starts with %q: the idled Service's server is not named as OpenShift names it", server)
	}
}
