package testkit

import (
	"fmt"
	"strings"
)

// YAML manifests for the folder-mode tests (`haroute run --manifests`), all in namespace e2e.

// ServiceYAML returns a Service named svc (port name http) with one EndpointSlice per backend.
func ServiceYAML(svc string, backends ...*Backend) string {
	var b strings.Builder
	fmt.Fprintf(&b, `apiVersion: v1
kind: Service
metadata: {name: %s, namespace: e2e}
spec:
  ports: [{name: http, port: 80, targetPort: http}]
`, svc)
	for _, be := range backends {
		b.WriteString("---\n" + SliceYAML(svc, be.Name, be.IP, be.Port))
	}
	return b.String()
}

// SliceYAML returns an EndpointSlice of Service svc with one ready endpoint, pod name at ip:port.
func SliceYAML(svc, name, ip string, port int) string {
	return fmt.Sprintf(`apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  name: %s-%s-%d
  namespace: e2e
  labels: {kubernetes.io/service-name: %s}
addressType: IPv4
ports: [{name: http, port: %d, protocol: TCP}]
endpoints:
- addresses: [%q]
  conditions: {ready: true}
  targetRef: {kind: Pod, namespace: e2e, name: %s}
`, svc, strings.ReplaceAll(ip, ".", "-"), port, svc, port, ip, name)
}

// RouteYAML returns a Route name for host to Service svc (target port http), with annotations
// (key, value pairs).
func RouteYAML(name, host, svc string, annotations ...string) string {
	var ann string
	if len(annotations) > 0 {
		ann = "\n  annotations:"
		for i := 0; i+1 < len(annotations); i += 2 {
			ann += fmt.Sprintf("\n    %s: %q", annotations[i], annotations[i+1])
		}
	}
	return fmt.Sprintf(`apiVersion: route.openshift.io/v1
kind: Route
metadata:
  name: %s
  namespace: e2e%s
spec:
  host: %s
  to: {kind: Service, name: %s}
  port: {targetPort: http}
`, name, ann, host, svc)
}
