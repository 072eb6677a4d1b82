package operatorenv

import (
	"strings"
	"testing"
)

const dir = "../cluster/testdata/operator"

func TestLoad(t *testing.T) {
	all, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{"default", "modern-tls", "custom-tls", "old-tls", "client-tls",
		"proxy-protocol", "headers", "error-pages", "compression", "http2", "dual-stack", "tuning"} {
		if _, ok := all[v]; !ok {
			t.Errorf("variant %s missing", v)
		}
	}
	for name, d := range all {
		if !strings.Contains(d.Provenance, "github.com/openshift/cluster-ingress-operator at ") ||
			!strings.Contains(d.Provenance, "desiredRouterDeployment") {
			t.Errorf("%s: no provenance comment: %q", name, d.Provenance)
		}
		if d.Container != "router" || len(d.EnvVars) == 0 {
			t.Errorf("%s: container %q with %d env entries", name, d.Container, len(d.EnvVars))
		}
		seen := map[string]bool{}
		for _, e := range d.EnvVars {
			if e.Name == "" || seen[e.Name] {
				t.Errorf("%s: env name %q empty or repeated", name, e.Name)
			}
			seen[e.Name] = true
		}
		vols := map[string]bool{}
		for _, v := range d.Volumes {
			vols[v.Name] = true
		}
		for _, m := range d.VolumeMounts {
			if !vols[m.Name] || !strings.HasPrefix(m.MountPath, "/") {
				t.Errorf("%s: mount %s at %q has no volume or a relative path", name, m.Name, m.MountPath)
			}
		}
		meta, _ := d.IngressController["metadata"].(map[string]any)
		if got := d.Env()["ROUTER_SERVICE_NAME"]; meta == nil || got != meta["name"] {
			t.Errorf("%s: ROUTER_SERVICE_NAME %q is not the IngressController's name", name, got)
		}
	}
	if got := all["client-tls"].Env()["ROUTER_MUTUAL_TLS_AUTH"]; got != "required" {
		t.Errorf("client-tls: ROUTER_MUTUAL_TLS_AUTH = %q", got)
	}
	if got := all["http2"].Env()["ROUTER_DISABLE_HTTP2"]; got != "false" {
		t.Errorf("http2: ROUTER_DISABLE_HTTP2 = %q", got)
	}
}
