package mapping

import (
	"strings"
	"testing"
)

const goodManifests = `# A comment before the first document.
---
apiVersion: route.openshift.io/v1
kind: Route
metadata:
  name: www
  namespace: shop
  annotations:
    haproxy.router.openshift.io/timeout: 5s
spec:
  host: www.apps.example.com
  path: /api
  to:
    kind: Service
    name: web
    weight: 100
  port:
    targetPort: http
  tls:
    termination: edge
    insecureEdgeTerminationPolicy: Redirect
---
# comment-only document
---
---
apiVersion: v1
kind: Service
metadata:
  name: web
spec:
  ports:
  - name: http
    port: 80
    targetPort: 8080
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  name: web-1
  namespace: shop
  labels:
    kubernetes.io/service-name: web
addressType: IPv4
ports:
- name: http
  port: 8080
endpoints:
- addresses: ["10.128.0.1"]
  conditions: {ready: true}
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: ignored
spec:
  whatever: [1, 2]
...
---
apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Namespace
  metadata:
    name: shop
    labels: {router: public}
- apiVersion: v1
  kind: Secret
  metadata:
    name: creds
  data:
    a: YQ==
  stringData:
    b: bee
- apiVersion: v1
  kind: ConfigMap
  metadata:
    name: skipped
`

func TestDecodeManifestsGood(t *testing.T) {
	in, err := DecodeManifests("good.yaml", []byte(goodManifests))
	if err != nil {
		t.Fatalf("DecodeManifests: %v", err)
	}
	if len(in.Routes) != 1 || len(in.Services) != 1 || len(in.EndpointSlices) != 1 ||
		len(in.Namespaces) != 1 || len(in.Secrets) != 1 {
		t.Fatalf("got %d routes, %d services, %d slices, %d namespaces, %d secrets; want one of each",
			len(in.Routes), len(in.Services), len(in.EndpointSlices), len(in.Namespaces), len(in.Secrets))
	}
	r := in.Routes[0]
	if r.Namespace != "shop" || r.Name != "www" || r.Spec.Host != "www.apps.example.com" || r.Spec.Path != "/api" {
		t.Errorf("route = %s/%s host %q path %q", r.Namespace, r.Name, r.Spec.Host, r.Spec.Path)
	}
	if r.Spec.To.Weight == nil || *r.Spec.To.Weight != 100 || r.Spec.Port == nil || r.Spec.Port.TargetPort.StrVal != "http" {
		t.Errorf("route to/port not decoded: %+v %+v", r.Spec.To, r.Spec.Port)
	}
	if r.Spec.TLS == nil || r.Spec.TLS.Termination != "edge" || r.Spec.TLS.InsecureEdgeTerminationPolicy != "Redirect" {
		t.Errorf("route tls = %+v", r.Spec.TLS)
	}
	if r.Annotations["haproxy.router.openshift.io/timeout"] != "5s" {
		t.Errorf("route annotations = %v", r.Annotations)
	}
	if s := in.Services[0]; s.Namespace != "default" || s.Spec.Ports[0].TargetPort.IntVal != 8080 {
		t.Errorf("service = %s/%s %+v; want namespace defaulted to default", s.Namespace, s.Name, s.Spec.Ports)
	}
	es := in.EndpointSlices[0]
	if es.Labels["kubernetes.io/service-name"] != "web" || len(es.Endpoints) != 1 || es.Endpoints[0].Addresses[0] != "10.128.0.1" ||
		es.Endpoints[0].Conditions.Ready == nil || !*es.Endpoints[0].Conditions.Ready || *es.Ports[0].Port != 8080 {
		t.Errorf("endpoint slice = %+v", es)
	}
	if ns := in.Namespaces[0]; ns.Name != "shop" || ns.Namespace != "" || ns.Labels["router"] != "public" {
		t.Errorf("namespace = %q/%q labels %v", ns.Namespace, ns.Name, ns.Labels)
	}
	sec := in.Secrets[0]
	if sec.Namespace != "default" || string(sec.Data["a"]) != "a" || string(sec.Data["b"]) != "bee" || sec.StringData != nil {
		t.Errorf("secret = %s/%s data %q stringData %v; want stringData merged into data", sec.Namespace, sec.Name, sec.Data, sec.StringData)
	}
}

func TestDecodeManifestsOrderAndJSON(t *testing.T) {
	data := "apiVersion: v1\nkind: Service\nmetadata: {name: b}\n---\napiVersion: v1\nkind: Service\nmetadata: {name: a}\n"
	in, err := DecodeManifests("s.yaml", []byte(data))
	if err != nil {
		t.Fatal(err)
	}
	if len(in.Services) != 2 || in.Services[0].Name != "b" || in.Services[1].Name != "a" {
		t.Errorf("services not in file order: %v", in.Services)
	}

	js := "{\n\t\"apiVersion\": \"route.openshift.io/v1\",\n\t\"kind\": \"Route\",\n\t\"metadata\": {\"name\": \"j\", \"namespace\": \"n\"},\n\t\"spec\": {\"host\": \"j.apps.example.com\", \"to\": {\"kind\": \"Service\", \"name\": \"s\"}}\n}\n"
	in, err = DecodeManifests("r.json", []byte(js))
	if err != nil {
		t.Fatal(err)
	}
	if len(in.Routes) != 1 || in.Routes[0].Name != "j" || in.Routes[0].Spec.Host != "j.apps.example.com" {
		t.Errorf("json route = %+v", in.Routes)
	}
}

func TestDecodeManifestsEmpty(t *testing.T) {
	for _, data := range []string{"", "\n\n", "# nothing\n", "---\n---\n# c\n...\n", "\xef\xbb\xbf---\r\n# only\r\n"} {
		in, err := DecodeManifests("e.yaml", []byte(data))
		if err != nil {
			t.Errorf("%q: %v", data, err)
		}
		if len(in.Routes)+len(in.Services)+len(in.EndpointSlices)+len(in.Namespaces)+len(in.Secrets) != 0 {
			t.Errorf("%q: decoded objects from an empty stream: %+v", data, in)
		}
	}
}

func TestDecodeManifestsBad(t *testing.T) {
	const route = "apiVersion: route.openshift.io/v1\nkind: Route\n"
	const okService = "apiVersion: v1\nkind: Service\nmetadata:\n  name: ok\n"
	tests := []struct {
		name string
		data string
		want []string // substrings of the error
	}{
		{
			name: "bad indentation",
			data: okService + "---\n" + route + "metadata:\n  name: r\n spec:\n  host: a\n",
			want: []string{"bad.yaml: document 2 (line 6): line 9: "},
		},
		{
			name: "unknown field",
			data: route + "metadata:\n  name: r\nspec:\n  hots: a.example.com\n",
			want: []string{"bad.yaml: document 1 (line 1): ", `unknown field "spec.hots"`},
		},
		{
			name: "field with wrong case",
			data: route + "metadata:\n  name: r\nspec:\n  Host: a.example.com\n",
			want: []string{"document 1 (line 1): ", "spec.Host"},
		},
		{
			name: "duplicate key",
			data: "# header\n\n" + route + "metadata:\n  name: r\n  name: s\n",
			want: []string{"document 1 (line 3): ", "line 7: ", `"name" already set`},
		},
		{
			name: "missing name",
			data: okService + "---\n" + okService + "---\n\n" + route + "metadata:\n  namespace: x\nspec:\n  host: a\n",
			want: []string{"document 3 (line 12): metadata.name is missing"},
		},
		{
			name: "missing metadata",
			data: "apiVersion: v1\nkind: Secret\n",
			want: []string{"document 1 (line 1): metadata.name is missing"},
		},
		{
			name: "kind with wrong apiVersion",
			data: "apiVersion: v1\nkind: Route\nmetadata: {name: r}\n",
			want: []string{"kind Route needs apiVersion route.openshift.io/v1", `"v1"`},
		},
		{
			name: "EndpointSlice with beta apiVersion",
			data: "apiVersion: discovery.k8s.io/v1beta1\nkind: EndpointSlice\nmetadata: {name: e}\naddressType: IPv4\n",
			want: []string{"kind EndpointSlice needs apiVersion discovery.k8s.io/v1"},
		},
		{
			name: "missing kind",
			data: "apiVersion: v1\nmetadata: {name: r}\n",
			want: []string{"kind is missing"},
		},
		{
			name: "missing apiVersion",
			data: "kind: Service\nmetadata: {name: r}\n",
			want: []string{"kind Service: apiVersion is missing"},
		},
		{
			name: "not an object",
			data: "- a\n- b\n",
			want: []string{"not an object"},
		},
		{
			name: "wrong type",
			data: route + "metadata: {name: r}\nspec:\n  to: {kind: Service, name: s, weight: heavy}\n",
			want: []string{"document 1 (line 1): ", "weight"},
		},
		{
			name: "unquoted YAML 1.1 boolean as a name",
			data: route + "metadata:\n  name: y\n",
			want: []string{"metadata.name", "quote the value"},
		},
		{
			name: "unquoted number as an annotation",
			data: route + "metadata:\n  name: r\n  annotations:\n    haproxy.router.openshift.io/rate-limit-connections.rate-http: 10\n",
			want: []string{"annotations", "quote the value"},
		},
		{
			name: "bad list item",
			data: "apiVersion: v1\nkind: List\nitems:\n- " + strings.ReplaceAll(strings.TrimSuffix(okService, "\n"), "\n", "\n  ") +
				"\n- apiVersion: v1\n  kind: Service\n  metadata: {name: x}\n  spec: {portz: []}\n",
			want: []string{"document 1 (line 1): items[1]: ", `unknown field "spec.portz"`},
		},
		{
			name: "tab indentation",
			data: okService + "---\n" + route + "metadata:\n\tname: r\n",
			want: []string{"document 2 (line 6): "},
		},
		{
			name: "unterminated flow",
			data: "# c\n---\n" + route + "metadata: {name: r\n",
			want: []string{"document 1 (line 3): line 5: "},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in, err := DecodeManifests("bad.yaml", []byte(tt.data))
			if err == nil {
				t.Fatalf("no error; decoded %+v", in)
			}
			msg := err.Error()
			t.Log(msg)
			if !strings.HasPrefix(msg, "bad.yaml: document ") {
				t.Errorf("error %q does not start with the source and document", msg)
			}
			if strings.Contains(msg, "\n") {
				t.Errorf("error %q spans several lines", msg)
			}
			for _, w := range tt.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q does not contain %q", msg, w)
				}
			}
		})
	}
}

func TestSplitDocumentsLines(t *testing.T) {
	data := "# lead\n---\na: 1\n---   # c\n\n  b: 2\n...\n# trailing\n--- {c: 3}\n"
	docs := splitDocuments([]byte(data))
	want := []struct{ index, line int }{{1, 3}, {2, 6}, {3, 9}}
	if len(docs) != len(want) {
		t.Fatalf("got %d documents, want %d: %+v", len(docs), len(want), docs)
	}
	for i, w := range want {
		if docs[i].index != w.index || docs[i].line != w.line {
			t.Errorf("document %d: index %d line %d, want %d %d", i, docs[i].index, docs[i].line, w.index, w.line)
		}
	}
	if got := string(docs[2].text); got != "    {c: 3}\n" {
		t.Errorf("marker-line document text = %q", got)
	}
}
