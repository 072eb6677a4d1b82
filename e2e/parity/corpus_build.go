package parity

// The corpus: every kind of Route, host, path, TLS policy, weight and annotation the compatibility
// table (mapping/compat) lists, hostile-looking values included, and the requests that tell how a
// router serves them. Adding a case: add its Service, Route and requests to a group (or a new group
// in Build), then record the stock router's answers with `make parity` (as root) and commit
// testdata/stock-answers.json with the change; the replay refuses a recording of another corpus.

// The corpus's pods. The plain ones serve HTTP; the others TLS with a certificate for their CertName,
// issued by the backend CA.
var pods = []Pod{
	{Name: "pod-a"}, {Name: "pod-b"}, {Name: "pod-c"}, {Name: "pod-d"}, {Name: "pod-e"},
	// pod-tls serves secure's name, as a backend with a service-serving certificate does.
	{Name: "pod-tls", CertName: "secure." + Namespace + ".svc"},
	// pod-tls-other's certificate names another host: a chain the backend CA verifies, a name it does not.
	{Name: "pod-tls-other", CertName: "elsewhere.parity.invalid"},
	// pod-pass terminates passthrough Routes' TLS itself.
	{Name: "pod-pass", CertName: "passthrough.parity.test"},
}

// IdledClusterIP is the cluster IP of the idled Service: the stock router sends an idled Service's
// traffic there (for the idler to wake its pods); the live run answers it with IdlerPod on
// ServicePort, as kube-proxy would forward it.
const (
	IdledClusterIP = "10.0.0.250"
	IdlerPod       = "idler"
)

// Build returns the corpus.
func Build() *Corpus {
	return &Corpus{Pods: pods, Groups: []Group{
		{Name: "services", Services: sharedServices()},
		hostGroup(), pathGroup(), tlsGroup(), weightGroup(), balanceGroup(), cookieGroup(),
		forwardedGroup(), actionsGroup(), accessGroup(), rateGroup(), annotationGroup(), rewriteGroup(),
		fieldGroup(),
	}}
}

// sharedServices are the Services every group shares: one per plain pod, two pods behind "two", the TLS
// pods', an empty one and an idled one.
func sharedServices() []Service {
	return []Service{
		{Namespace: Namespace, Name: "a", Pods: []string{"pod-a"}},
		{Namespace: Namespace, Name: "b", Pods: []string{"pod-b"}},
		{Namespace: Namespace, Name: "c", Pods: []string{"pod-c"}},
		{Namespace: Namespace, Name: "d", Pods: []string{"pod-d"}},
		{Namespace: Namespace, Name: "e", Pods: []string{"pod-e"}},
		{Namespace: Namespace, Name: "two", Pods: []string{"pod-a", "pod-b"}},
		{Namespace: Namespace, Name: "secure", Pods: []string{"pod-tls"}},
		{Namespace: Namespace, Name: "secure-other", Pods: []string{"pod-tls-other"}},
		{Namespace: Namespace, Name: "pass", Pods: []string{"pod-pass"}},
		{Namespace: Namespace, Name: "empty"},
		{Namespace: Namespace, Name: "idled", ClusterIP: IdledClusterIP,
			Annotations: map[string]string{"idling.alpha.openshift.io/idled-at": "2026-01-01T00:00:00Z"}},
		{Namespace: OtherNamespace, Name: "b2", Pods: []string{"pod-c"}},
	}
}

// host returns name.parity.test.
func host(name string) string { return name + ".parity.test" }

// weight returns a weight.
func weight(n int32) *int32 { return &n }

// route returns Route name of the corpus namespace for host(name) to svc.
func route(name, svc string) Route {
	return Route{Namespace: Namespace, Name: name, Host: host(name), To: Backend{Service: svc}}
}

// annotated returns r with annotations (key, value, …).
func annotated(r Route, kv ...string) Route {
	if r.Annotate == nil {
		r.Annotate = map[string]string{}
	}
	for i := 0; i+1 < len(kv); i += 2 {
		r.Annotate[kv[i]] = kv[i+1]
	}
	return r
}

// edge returns r edge-terminated with its own certificate and insecure policy.
func edge(r Route, insecure string) Route {
	r.TLS = &TLS{Termination: "edge", Insecure: insecure, OwnCert: true}
	return r
}

// reencrypt returns r re-encrypting with its own certificate, the backend CA and insecure policy.
func reencrypt(r Route, insecure string) Route {
	r.TLS = &TLS{Termination: "reencrypt", Insecure: insecure, OwnCert: true, DestCA: true}
	return r
}

// passthrough returns r passed through with insecure policy.
func passthrough(r Route, insecure string) Route {
	r.TLS = &TLS{Termination: "passthrough", Insecure: insecure}
	return r
}

// get is a plain-HTTP GET of path on host.
func get(id, host, path string) Request { return Request{ID: id, Host: host, Path: path} }

// gets is an HTTPS GET of path on host, with host as SNI.
func gets(id, host, path string) Request { return Request{ID: id, HTTPS: true, Host: host, Path: path} }

// withHeader returns r with more request headers (name, value, …).
func withHeader(r Request, kv ...string) Request {
	r.Header = append([][2]string(nil), r.Header...)
	for i := 0; i+1 < len(kv); i += 2 {
		r.Header = append(r.Header, [2]string{kv[i], kv[i+1]})
	}
	return r
}

// from returns r sent from source.
func from(r Request, source string) Request {
	r.Source = source
	return r
}

// repeat returns r sent n times.
func repeat(r Request, n int) Request {
	r.Repeat = n
	return r
}

// noted returns r with a note.
func noted(r Request, note string) Request {
	r.Note = note
	return r
}
