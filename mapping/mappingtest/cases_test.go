package mappingtest

import (
	"strings"
	"testing"
)

func TestParseEnvLine(t *testing.T) {
	env, err := ParseEnvLine([]byte("# env: A=1 B=x=y  C=\napiVersion: v1\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(env) != 3 || env["A"] != "1" || env["B"] != "x=y" || env["C"] != "" {
		t.Fatalf("got %v", env)
	}
	env, err = ParseEnvLine([]byte("# a comment\n# env: A=1\n"))
	if err != nil || len(env) != 0 {
		t.Fatalf("env line not first: got %v, %v; want none", env, err)
	}
	for _, bad := range []string{"# env: A", "# env: =1", "# env: A=1 A=2"} {
		if _, err := ParseEnvLine([]byte(bad)); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

const caseYAML = `# env: ROUTER_SERVICE_HTTP_PORT=8080 ROUTER_ALLOW_WILDCARD_ROUTES=true ROUTE_LABELS=shard=a
apiVersion: route.openshift.io/v1
kind: Route
metadata:
  name: web
  namespace: demo
spec:
  host: www.example.com
  to:
    kind: Service
    name: web
`

func TestParseCase(t *testing.T) {
	in, opts, err := ParseCase([]byte(caseYAML), "case.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(in.Routes) != 1 || in.Routes[0].Name != "web" {
		t.Fatalf("routes %v", in.Routes)
	}
	if opts.HTTPPort != 8080 || !opts.AllowWildcardRoutes || !opts.AllowLoopbackEndpoints || opts.RouteLabels == nil ||
		opts.RouteLabels.String() != "shard=a" || opts.HTTPSPort != 443 {
		t.Fatalf("options %+v", opts)
	}
}

func TestParseCaseErrors(t *testing.T) {
	tests := map[string]string{
		"bad env value": "# env: ROUTER_SERVICE_HTTP_PORT=http\n",
		"bad env field": "# env: NOEQUALS\n",
		"bad yaml":      "apiVersion: v1\nkind: Service\nmetadata: [\n",
	}
	for name, data := range tests {
		_, _, err := ParseCase([]byte(data), "src.yaml")
		if err == nil || !strings.Contains(err.Error(), "src.yaml") {
			t.Errorf("%s: got %v, want an error naming the source", name, err)
		}
	}
}
