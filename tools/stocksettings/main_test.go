package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// writeTree writes files (slash paths relative to dir) into dir.
func writeTree(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, text := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestExtractSmallTrees runs the extraction on two small made-up trees that hold one case of every
// rule: helpers and os reads (constants of the package and of another one), reads inside the helpers,
// test files and vendor/ left out, template env calls and annotation lookups through a variable,
// script expansions of assigned and unassigned names, the excluded names, nested and inlined API
// structs, and the operator's EnvVar literals and manifest.
func TestExtractSmallTrees(t *testing.T) {
	router, operator := t.TempDir(), t.TempDir()
	writeTree(t, router, map[string]string{
		"go.mod": "module example.com/router\n",
		"pkg/cmd/infra/router/router.go": `package router
import (
	"os"
	"example.com/router/pkg/names"
)
const portVar = "ROUTER_PORT"
func env(key, def string) string { if v := os.Getenv(key); v != "" { return v }; return def }
func envInt(key string, def int) int { _ = env(key, ""); return def }
func isTrue(s string) bool { return s == "true" }
type obj struct{ Annotations map[string]string }
func bind(o obj) {
	_ = env(portVar, "80")
	_ = envInt("ROUTER_THREADS", 0)
	_ = isTrue(env("ROUTER_" + "STRICT", ""))
	_, _ = os.LookupEnv(names.Socket)
	_ = os.Getenv("ROUTER_SHUTDOWN")
	_ = o.Annotations[names.Idled]
	_ = o.Annotations["example.com/literal"]
	for _, k := range []string{"not/constant"} { _ = o.Annotations[k] }
}
`,
		"pkg/names/names.go":                  "package names\nconst (\n\tSocket = \"ADMIN_SOCKET\"\n\tIdled = \"idling.example.com/idled-at\"\n)\n",
		"pkg/cmd/infra/router/router_test.go": "package router\nimport \"os\"\nfunc init() { _ = os.Getenv(\"TEST_ONLY\") }\n",
		"cmd/main.go":                         "package main\nimport \"os\"\nfunc main() { _ = os.Getenv(\"ON_PANIC\") }\n",
		"pkg/vendor/x/x.go":                   "package x\nimport \"os\"\nfunc f() { _ = os.Getenv(\"VENDORED\") }\n",
		routerTemplate: `{{- $ann := "example.com/set-forwarded" }}
# a comment: env "NOT_AN_ACTION"
{{ env "ROUTER_PORT" "80" }} {{ if isTrue (env "ROUTER_GZIP") }}{{ end }}
{{ index $cfg.Annotations "example.com/balance" }} {{ index $cfg.Annotations $ann }}
`,
		routerScripts + "/reload":     "#!/bin/bash\nwait=${WAIT_TIME:-30}\nlocal port=${ROUTER_PORT:-80}\necho ${wait} ${port} ${ROUTER_SHUTDOWN-} ${HTTP_PROXY}\n",
		routerScripts + "/Dockerfile": "FROM x\nENV A=${NOT_A_SCRIPT}\n",
		routeAPI + "/types.go": "package v1\n" +
			"type RouteSpec struct {\n\tHost string `json:\"host,omitempty\"`\n\tTo Target `json:\"to\"`\n\tMore []Target `json:\"alternateBackends\"`\n\tTLS *TLSConfig `json:\"tls,omitempty\"`\n\tInline `json:\",inline\"`\n\tSkip string `json:\"-\"`\n}\n" +
			"type Target struct {\n\tName string `json:\"name\"`\n\tWeight *int32 `json:\"weight\"`\n}\n" +
			"type TLSConfig struct {\n\tKey string `json:\"key\" protobuf:\"bytes,1\"`\n}\n" +
			"type Inline struct {\n\tPath string `json:\"path\"`\n}\n",
	})
	writeTree(t, operator, map[string]string{
		"go.mod": "module example.com/operator\n",
		operatorIngress + "/deployment.go": `package ingress
import corev1 "k8s.io/api/core/v1"
const threadsEnv = "ROUTER_THREADS"
func env() []corev1.EnvVar {
	env := []corev1.EnvVar{{Name: "ROUTER_PORT", Value: "80"}}
	env = append(env, corev1.EnvVar{Name: threadsEnv, Value: "4"})
	return env
}
`,
		operatorIngress + "/deployment_test.go": "package ingress\nimport corev1 \"k8s.io/api/core/v1\"\nvar _ = corev1.EnvVar{Name: \"ROUTER_GZIP\"}\n",
		operatorManifest:                        "spec:\n  template:\n    spec:\n      containers:\n      - name: router\n        env:\n        - name: ADMIN_SOCKET\n          value: /run/admin.sock\n",
	})
	s, err := extract(router, operator)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"ADMIN_SOCKET", "ON_PANIC", "ROUTER_GZIP", "ROUTER_PORT", "ROUTER_STRICT", "ROUTER_THREADS", "WAIT_TIME"}; !slices.Equal(s.env, want) {
		t.Errorf("env = %v, want %v", s.env, want)
	}
	if want := []string{"example.com/balance", "example.com/literal", "example.com/set-forwarded", "idling.example.com/idled-at"}; !slices.Equal(s.annotations, want) {
		t.Errorf("annotations = %v, want %v", s.annotations, want)
	}
	if want := []string{"spec.alternateBackends", "spec.host", "spec.path", "spec.tls.key", "spec.to.name", "spec.to.weight"}; !slices.Equal(s.fields, want) {
		t.Errorf("fields = %v, want %v", s.fields, want)
	}
	out := s.format("r123", "o456")
	for _, want := range []string{"# router: github.com/openshift/router r123\n", "env ADMIN_SOCKET operator\n", "env ROUTER_GZIP -\n",
		"env ROUTER_THREADS operator\n", "annotation example.com/balance\n", "field spec.to.weight\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if commit(router) != "(not a git checkout: commit unknown)" {
		t.Errorf("commit of a plain directory: %q", commit(router))
	}
}

// TestExtractRefusesUnresolvedName checks that an environment read whose name is no constant, outside
// the helpers, is an error rather than a silent gap in the list.
func TestExtractRefusesUnresolvedName(t *testing.T) {
	router := t.TempDir()
	writeTree(t, router, map[string]string{
		"go.mod":     "module example.com/router\n",
		"pkg/a/a.go": "package a\nimport \"os\"\nfunc f(n string) string { return os.Getenv(n) }\n",
	})
	if _, _, err := scanRouterGo(router, []string{"pkg"}); err == nil || !strings.Contains(err.Error(), "no constant") {
		t.Errorf("err = %v, want one about a name that is no constant", err)
	}
}

// TestCommittedListIsCurrent compares mapping/compat/testdata/stock-settings.txt with a fresh listing
// of the checkouts in STOCK_ROUTER_SRC and STOCK_OPERATOR_SRC, when both are set.
func TestCommittedListIsCurrent(t *testing.T) {
	router, operator := os.Getenv("STOCK_ROUTER_SRC"), os.Getenv("STOCK_OPERATOR_SRC")
	if router == "" || operator == "" {
		t.Skip("set STOCK_ROUTER_SRC and STOCK_OPERATOR_SRC to checkouts to compare the committed list with them")
	}
	s, err := extract(router, operator)
	if err != nil {
		t.Fatal(err)
	}
	committed := filepath.Join("..", "..", "mapping", "compat", "testdata", "stock-settings.txt")
	want, err := os.ReadFile(committed)
	if err != nil {
		t.Fatal(err)
	}
	if got := s.format(commit(router), commit(operator)); got != string(want) {
		t.Errorf("%s is not what the checkouts give: run make stock-settings", committed)
	}
}
