//go:build e2e

package cluster

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	routev1 "github.com/openshift/api/route/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/haroute/haroute/e2e/framework"
	"github.com/haroute/haroute/e2e/operatorenv"
	"github.com/haroute/haroute/e2e/testbed"
	"github.com/haroute/haroute/internal/testkit"
)

// TestOperatorEnvironments runs haroute with each router environment the ingress operator renders
// (testdata/operator: 22 IngressControllers captured from cluster-ingress-operator), against one API
// server, one variant after the other. Each variant's environment is kept whole, but for what cannot
// be taken as it is on a test machine (ports, file paths, the master socket, a syslog server:
// remapEnv says why for each); the Secrets and ConfigMaps the operator mounts are files the test
// writes the kubelet's way, with generated certificates. The `default` variant runs in the sidecar
// shape the operator deploys (the test starts HAProxy, haroute gets its master socket); the others
// with a managed HAProxy.
//
// Every variant must: start (with HAProxy 2.6, whose OpenSSL 3.0 does not know the operator's
// X25519MLKEM768, haroute leaves that group out and says so), serve a plain Route, an edge Route with
// its own certificate, an edge Route on the default certificate (the Secret mount's), reencrypt
// Routes verified by their destinationCACertificate and by the service CA bundle, answer the probes
// and /metrics over HTTPS on the stats port with the metrics certificate (/metrics with the stats
// credentials from the files), write Route status with ROUTER_SERVICE_NAME and
// ROUTER_CANONICAL_HOSTNAME, and negotiate exactly the TLS versions, cipher suites, groups and ALPN
// protocols its settings allow. The settings a variant adds are checked where they show: mutual
// TLS, PROXY protocol, header actions, unique IDs, header-name case, forwarded headers, error pages,
// compression, syslog access logs, sharding, IPv6 listeners, tuning. `default` also rotates its
// default certificate Secret and must serve the new one without a reload.
func TestOperatorEnvironments(t *testing.T) {
	variants, err := operatorenv.Load(filepath.Join("testdata", "operator"))
	if err != nil {
		t.Fatal(err)
	}
	if len(variants) == 0 {
		t.Fatal("no captured variant in testdata/operator")
	}
	for name := range opWantChecks {
		if _, ok := variants[name]; !ok {
			t.Errorf("variant %s has checks of its own but no file in testdata/operator", name)
		}
	}
	fx := newOpFixture(t, variants)
	t.Logf("HAProxy: %s", testkit.HAProxyBinary())
	names := make([]string, 0, len(variants))
	for name := range variants {
		names = append(names, name)
	}
	sort.Strings(names)
	passed := map[string][]string{}
	for _, name := range names {
		start, ran := time.Now(), false
		ok := t.Run(name, func(t *testing.T) {
			ran = true
			o := fx.newRun(t, variants[name])
			o.runChecks()
			passed[name] = o.passed
		})
		if !ran { // left out by -run
			continue
		}
		t.Logf("%s: %s in %v: %s", name, map[bool]string{true: "passed", false: "FAILED"}[ok],
			time.Since(start).Round(100*time.Millisecond), strings.Join(passed[name], ", "))
		if !ok {
			continue
		}
		for _, want := range opWantChecks[name] {
			if !slices.Contains(passed[name], want) {
				t.Errorf("%s: the check %q of this variant did not run", name, want)
			}
		}
	}
}

// opWantChecks are the checks a variant must have run besides the common ones: the settings it was
// captured for.
var opWantChecks = map[string][]string{
	"default":                 {"sidecar", "no h2", "groups", "rotation without reload"},
	"modern-tls":              {"tls 1.3 only"},
	"custom-tls":              {"tls 1.2 suites", "groups"},
	"old-tls":                 {"tls 1.2 suites"},
	"client-tls":              {"mutual tls required", "subject filter"},
	"client-tls-optional":     {"mutual tls optional"},
	"proxy-protocol":          {"proxy protocol"},
	"aws":                     {"proxy protocol"},
	"headers":                 {"request header actions", "response header actions", "unique id", "header case", "forwarded replace"},
	"headers-uniqueid-format": {"unique id", "forwarded if-none"},
	"error-pages":             {"error page 404", "error page 503"},
	"compression":             {"compression"},
	"http2":                   {"h2"},
	"dual-stack":              {"ipv4 and ipv6"},
	"v6":                      {"ipv6 only"},
	"tuning":                  {"syslog", "tuning"},
	"tuning-maxconn-auto":     {"tuning"},
	"container-logging":       {"syslog"},
	"sharding":                {"route labels", "namespace labels", "wildcard"},
}

// Labels every Route and variant namespace carries: the sharding variant's ROUTE_LABELS
// (type=sharded) and NAMESPACE_LABELS (env in (prod,stage)) select them; the others ignore them.
const (
	opRouteLabel, opRouteLabelValue = "type", "sharded"
	opNSLabel, opNSLabelValue       = "env", "prod"
)

// Clients the mutual TLS checks use, by name: two whose subjects the client-tls variant's filter
// allows (its two patterns), one from the same CA outside it, and one from a CA the router does not
// trust.
const (
	clientFilterA  = "filter-a"
	clientFilterB  = "filter-b"
	clientOutsider = "outsider"
	clientStranger = "stranger"
)

// opClientSubjects are the clients' subjects, RDNs in certificate order (as ssl_c_s_dn prints them).
var opClientSubjects = map[string][]string{
	clientFilterA:  {"CN=example.com", "ST=NC", "C=US", "O=Security", "OU=OpenShift"},
	clientFilterB:  {"CN=www.apps.example.com", "O=Example Inc", "C=US"},
	clientOutsider: {"CN=intruder.example.org", "O=Elsewhere", "C=US"},
	clientStranger: {"CN=example.com", "ST=NC", "C=US", "O=Security", "OU=OpenShift"},
}

// Error pages the error-pages variant's ConfigMap holds: raw HTTP responses.
const (
	opPage503 = "HTTP/1.0 503 Service Unavailable\r\nCache-Control: no-cache\r\nConnection: close\r\n" +
		"Content-Type: text/html\r\nX-Error-Page: operator-503\r\n\r\n<html><body>operator 503: no pod</body></html>\n"
	opPage404 = "HTTP/1.0 404 Not Found\r\nCache-Control: no-cache\r\nConnection: close\r\n" +
		"Content-Type: text/html\r\nX-Error-Page: operator-404\r\n\r\n<html><body>operator 404: no route</body></html>\n"
)

// opCurvesWarning is the start of the warning haroute logs when it leaves groups of ROUTER_CURVES out.
const opCurvesWarning = "ROUTER_CURVES names key-exchange groups this HAProxy's TLS library does not know"

// opFixture is what the variants share: the cluster, the pods and the CAs.
type opFixture struct {
	c *framework.Cluster
	// web is the plain pod; reDest and reSvc are the TLS pods of the reencrypt Routes, their
	// certificates from destCA and serviceCA for <service>.op-<variant>.svc of every variant.
	web, reDest, reSvc *framework.Backend
	// routeCA signs the Routes' own certificates; defaultCA the default certificates; metricsCA the
	// metrics certificates; clientCA the client certificates the router trusts, strangerCA others.
	routeCA, destCA, serviceCA, defaultCA, metricsCA, clientCA, strangerCA *testkit.CA
	clients                                                                map[string]*tls.Certificate

	mu     sync.Mutex
	groups map[string]bool // binary + " " + group → whether its TLS library knows the group
}

func newOpFixture(t *testing.T, variants map[string]operatorenv.Deployment) *opFixture {
	t.Helper()
	c := framework.Start(t)
	pods := framework.NewPodNetwork(t)
	fx := &opFixture{
		c:          c,
		routeCA:    testkit.NewCA(t, "route-ca"),
		destCA:     testkit.NewCA(t, "destination-ca"),
		serviceCA:  testkit.NewCA(t, "openshift-service-serving-signer"),
		defaultCA:  testkit.NewCA(t, "ingress-operator"),
		metricsCA:  testkit.NewCA(t, "metrics-ca"),
		clientCA:   testkit.NewCA(t, "client-ca"),
		strangerCA: testkit.NewCA(t, "stranger-ca"),
		clients:    map[string]*tls.Certificate{},
		groups:     map[string]bool{},
	}
	var destNames, svcNames []string
	for name := range variants {
		destNames = append(destNames, "re-dest."+opNamespace(name)+".svc")
		svcNames = append(svcNames, "re-svcca."+opNamespace(name)+".svc")
	}
	fx.web = pods.StartBackend("web")
	crt, key := fx.destCA.Issue(t, destNames...)
	fx.reDest = pods.StartTLSBackend("re-dest", crt, key)
	crt, key = fx.serviceCA.Issue(t, svcNames...)
	fx.reSvc = pods.StartTLSBackend("re-svcca", crt, key)
	for name, subject := range opClientSubjects {
		ca := fx.clientCA
		if name == clientStranger {
			ca = fx.strangerCA
		}
		crt, key := ca.IssueClient(t, rdns(t, subject))
		kp := testkit.KeyPair(t, crt, key)
		fx.clients[name] = &kp
	}
	return fx
}

// opNamespace is the namespace of a variant's Routes.
func opNamespace(variant string) string { return "op-" + variant }

// rdns builds a subject from "TYPE=value" RDNs, in order.
func rdns(t *testing.T, subject []string) pkix.RDNSequence {
	t.Helper()
	oids := map[string]asn1.ObjectIdentifier{"CN": {2, 5, 4, 3}, "C": {2, 5, 4, 6}, "ST": {2, 5, 4, 8}, "O": {2, 5, 4, 10}, "OU": {2, 5, 4, 11}}
	var seq pkix.RDNSequence
	for _, r := range subject {
		typ, v, _ := strings.Cut(r, "=")
		oid, ok := oids[typ]
		if !ok {
			t.Fatalf("subject RDN %q: unknown type", r)
		}
		seq = append(seq, pkix.RelativeDistinguishedNameSET{{Type: oid, Value: v}})
	}
	return seq
}

// knowsGroup reports whether the TLS library of the HAProxy binary knows the key-exchange group: it
// runs `binary -c` on a configuration that sets it, as an administrator would try it.
func (fx *opFixture) knowsGroup(t *testing.T, binary, group string) bool {
	t.Helper()
	fx.mu.Lock()
	defer fx.mu.Unlock()
	if known, ok := fx.groups[binary+" "+group]; ok {
		return known
	}
	dir := testkit.TempDir(t)
	cert := filepath.Join(dir, "cert.pem")
	if err := os.WriteFile(cert, fx.routeCA.IssueBundle(t, "probe.example.com"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "haproxy.cfg")
	text := "global\n  ssl-default-bind-curves " + group + "\ndefaults\n  mode http\n  timeout connect 1s\n" +
		"  timeout client 1s\n  timeout server 1s\nfrontend probe\n  bind unix@" + filepath.Join(dir, "p.sock") + " ssl crt " + cert + "\n"
	if err := os.WriteFile(cfg, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err := exec.CommandContext(ctx, binary, "-c", "-q", "-f", cfg).Run()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatalf("%s -c: %v", binary, err)
	}
	fx.groups[binary+" "+group] = err == nil
	return err == nil
}

// opRoute is one Route of a variant.
type opRoute struct {
	// backend is the Service and the name of the pod that answers.
	name, host, backend string
	https               bool
	// ca signs the certificate the Route serves (nil: the default certificate).
	ca *testkit.CA
	// backendTLS: the pod is reached over TLS (reencrypt).
	backendTLS bool
	opts       []framework.RouteOption
}

// url is the Route's URL for path.
func (r opRoute) url(path string) string {
	if r.https {
		return "https://" + r.host + path
	}
	return "http://" + r.host + path
}

// opRun is one variant's run.
type opRun struct {
	t   *testing.T
	fx  *opFixture
	d   operatorenv.Deployment
	env map[string]string // the operator's values
	ns  string
	r   *framework.ClusterRouter
	// sidecar: HAProxy was started by the test, not by haroute.
	sidecar bool
	mounts  podMounts
	// ep reaches the public listeners; src is the client address HAProxy sees.
	ep                       endpoint
	src                      string
	routes                   []opRoute
	defaultCert, metricsCert *x509.Certificate
	metricsName              string
	statsUser, statsPassword string
	syslog                   *logReceiver
	passed                   []string
}

// check runs one named check: its error fails the test, nil records it as passed.
func (o *opRun) check(name string, f func() error) {
	o.t.Helper()
	if err := f(); err != nil {
		o.t.Errorf("%s: %v", name, err)
		return
	}
	o.passed = append(o.passed, name)
}

func (o *opRun) domain() string { return o.env["ROUTER_DOMAIN"] }

// newRun prepares and starts the router of variant d: its namespace, Services and Routes, its
// mounted files, its environment.
func (fx *opFixture) newRun(t *testing.T, d operatorenv.Deployment) *opRun {
	t.Helper()
	o := &opRun{t: t, fx: fx, d: d, env: d.Env(), ns: opNamespace(d.Variant)}
	for _, name := range []string{"ROUTER_SERVICE_NAME", "ROUTER_SERVICE_NAMESPACE", "ROUTER_CANONICAL_HOSTNAME", "ROUTER_DOMAIN"} {
		if o.env[name] == "" {
			t.Fatalf("%s: the operator did not set %s", d.Variant, name)
		}
	}
	o.createObjects()
	o.r = fx.c.NewRouter(t)
	var args []string
	if mode := o.env["ROUTER_IP_V4_V6_MODE"]; mode == "v6" || mode == "v4v6" {
		// The harness passes --bind-address 127.0.0.1, which wins over ROUTER_IP_V4_V6_MODE (as
		// ROUTER_BIND_ADDRESS does): an empty one lets the mode choose the listeners, ":port" and/or
		// ":::port v6only", so that [::1] is reached. Their ports must be free on every address.
		args = []string{"--bind-address="}
		dualStackPorts(t, o.r)
	}
	root := testkit.TempDir(t)
	var err error
	if o.mounts, err = newPodMounts(d, o.r.Dir, root); err != nil {
		t.Fatal(err)
	}
	o.writeVolumes()
	syslogUDP := ""
	if addr := o.env["ROUTER_SYSLOG_ADDRESS"]; addr != "" {
		if strings.HasPrefix(addr, "/") {
			local, ok := o.mounts.path(addr)
			if !ok {
				t.Fatalf("ROUTER_SYSLOG_ADDRESS=%s: no mount holds it", addr)
			}
			o.syslog = listenSyslog(t, "unixgram", local)
		} else {
			o.syslog = listenSyslog(t, "udp", "127.0.0.1:0")
			syslogUDP = o.syslog.conn.LocalAddr().String()
		}
	}
	env := remapEnv(t, d, o.r, o.mounts, syslogUDP)
	t.Logf("%d variables, remapped: %s", len(env.vars), strings.Join(env.changed, "; "))

	// The operator runs HAProxy in a sidecar: so does the default variant here. The others let
	// haroute manage it, which the harness's bounds and cleanup are made for.
	o.sidecar = d.Variant == "default"
	if o.sidecar {
		// The HAProxy it checks the key-exchange groups with is the matrix's ($HAROUTE_HAPROXY).
		o.r.StartSidecar(t, append([]string{"--check-binary=" + testkit.HAProxyBinary()}, args...), env.vars...)
	} else {
		o.r.Start(append([]string{testbed.ManagedHAProxyFlag()}, args...), env.vars...)
	}

	o.ep = endpoint{host: "127.0.0.1", httpPort: o.r.HTTPPort, httpsPort: o.r.HTTPSPort}
	if o.env["ROUTER_IP_V4_V6_MODE"] == "v6" {
		o.ep.host = "::1"
	}
	o.src = o.ep.host
	if o.env["ROUTER_USE_PROXY_PROTOCOL"] == "true" {
		o.ep.proxySrc, o.src = "192.0.2.10", "192.0.2.10"
	}
	if o.env["ROUTER_MUTUAL_TLS_AUTH"] == "required" {
		o.ep.cert = fx.clients[clientFilterA]
	}
	return o
}

// createObjects creates the variant's namespace, Services and Routes; the Routes are deleted when
// the variant ends (after its router has stopped), so that later routers do not serve them.
func (o *opRun) createObjects() {
	t, c := o.t, o.fx.c
	ctx := context.Background()
	mkNS := func(name string, labels map[string]string) {
		if _, err := c.Kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{
			ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}, metav1.CreateOptions{}); err != nil {
			t.Fatalf("create namespace %s: %v", name, err)
		}
		t.Cleanup(func() {
			if err := c.Routes.RouteV1().Routes(name).DeleteCollection(context.Background(), metav1.DeleteOptions{}, metav1.ListOptions{}); err != nil {
				t.Errorf("delete the Routes of %s: %v", name, err)
			}
		})
	}
	mkNS(o.ns, map[string]string{opNSLabel: opNSLabelValue})
	c.CreateService(t, o.ns, "web", o.fx.web)
	c.CreateService(t, o.ns, "re-dest", o.fx.reDest)
	c.CreateService(t, o.ns, "re-svcca", o.fx.reSvc)
	c.CreateService(t, o.ns, "empty")

	host := func(name string) string { return name + "." + o.d.Variant + ".e2e.test" }
	edgeCert, edgeKey := o.fx.routeCA.Issue(t, host("edge"))
	reCert, reKey := o.fx.routeCA.Issue(t, host("re-dest"))
	edgeDefault := func(r *routev1.Route) {
		r.Spec.TLS = &routev1.TLSConfig{Termination: routev1.TLSTerminationEdge}
	}
	reDefault := func(r *routev1.Route) {
		r.Spec.TLS = &routev1.TLSConfig{Termination: routev1.TLSTerminationReencrypt}
	}
	o.routes = []opRoute{
		{name: "plain", host: host("plain"), backend: "web"},
		{name: "edge", host: host("edge"), backend: "web", https: true, ca: o.fx.routeCA,
			opts: []framework.RouteOption{framework.Edge(edgeCert, edgeKey, routev1.InsecureEdgeTerminationPolicyNone)}},
		{name: "edge-default", host: host("edge-default"), backend: "web", https: true, opts: []framework.RouteOption{edgeDefault}},
		{name: "re-dest", host: host("re-dest"), backend: "re-dest", https: true, ca: o.fx.routeCA, backendTLS: true,
			opts: []framework.RouteOption{framework.Reencrypt(reCert, reKey, o.fx.destCA.PEM())}},
		{name: "re-svcca", host: host("re-svcca"), backend: "re-svcca", https: true, backendTLS: true,
			opts: []framework.RouteOption{reDefault}},
	}
	if o.env["ROUTER_ALLOW_WILDCARD_ROUTES"] == "true" {
		o.routes = append(o.routes, opRoute{name: "wild", host: "www.wild." + o.d.Variant + ".e2e.test", backend: "web",
			opts: []framework.RouteOption{framework.Wildcard()}})
	}
	labelled := framework.Labels(opRouteLabel, opRouteLabelValue)
	for _, r := range o.routes {
		c.CreateRoute(t, o.ns, r.name, r.host, r.backend, append(slices.Clone(r.opts), labelled)...)
	}
	c.CreateRoute(t, o.ns, "empty", host("empty"), "empty", labelled)
	if o.env["ROUTE_LABELS"] != "" {
		c.CreateRoute(t, o.ns, "unlabelled", host("unlabelled"), "web")
	}
	if o.env["NAMESPACE_LABELS"] != "" {
		other := o.ns + "-other"
		mkNS(other, nil)
		c.CreateService(t, other, "web", o.fx.web)
		c.CreateRoute(t, other, "elsewhere", host("elsewhere"), "web", labelled)
	}
}

// writeVolumes writes every Secret and ConfigMap the router container mounts, the kubelet's way,
// with generated content.
func (o *opRun) writeVolumes() {
	t, fx := o.t, o.fx
	for mp, name := range o.mounts.volume {
		dir := o.mounts.local[mp]
		var files map[string][]byte
		switch name {
		case "haproxy-config":
			continue
		case "rsyslog-socket": // an emptyDir: the test's syslog receiver listens in it
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		case "default-certificate": // the Secret router-certs-<name> (or spec.defaultCertificate)
			crt, key := fx.defaultCA.Issue(t, "*."+o.domain())
			files = map[string][]byte{"tls.crt": crt, "tls.key": key}
			o.defaultCert = parseCert(t, crt)
		case "metrics-certs": // the service CA's serving certificate for router-internal-<name>
			o.metricsName = "router-internal-" + o.env["ROUTER_SERVICE_NAME"] + "." + o.env["ROUTER_SERVICE_NAMESPACE"] + ".svc"
			crt, key := fx.metricsCA.Issue(t, o.metricsName)
			files = map[string][]byte{"tls.crt": crt, "tls.key": key}
			o.metricsCert = parseCert(t, crt)
		case "stats-auth": // the operator's generated Secret router-stats-<name>
			o.statsUser, o.statsPassword = "op-"+o.d.Variant, randomHex(t)
			files = map[string][]byte{"statsUsername": []byte(o.statsUser), "statsPassword": []byte(o.statsPassword)}
		case "service-ca-bundle": // the ConfigMap the service CA injects its bundle into
			files = map[string][]byte{"service-ca.crt": fx.serviceCA.PEM()}
		case "client-ca": // the operator's copy of spec.clientTLS.clientCA
			files = map[string][]byte{"ca-bundle.pem": fx.clientCA.PEM()}
		case "error-pages": // the operator's copy of spec.httpErrorCodePages, keyed by file name
			files = map[string][]byte{}
			for v, page := range map[string]string{"ROUTER_ERRORFILE_503": opPage503, "ROUTER_ERRORFILE_404": opPage404} {
				if p := o.env[v]; strings.HasPrefix(p, mp+"/") {
					files[strings.TrimPrefix(p, mp+"/")] = []byte(page)
				}
			}
		default:
			t.Fatalf("%s mounts volume %s at %s, which the scenarios cannot fill", o.d.Variant, name, mp)
		}
		if err := framework.WriteKubeletVolume(dir, files); err != nil {
			t.Fatalf("volume %s: %v", name, err)
		}
	}
	if o.defaultCert == nil || o.metricsCert == nil || o.statsUser == "" {
		t.Fatalf("%s: no default certificate, metrics certificate or stats credentials mounted", o.d.Variant)
	}
}

func parseCert(t *testing.T, certPEM []byte) *x509.Certificate {
	t.Helper()
	b, _ := pem.Decode(certPEM)
	if b == nil {
		t.Fatal("no PEM certificate")
	}
	c, err := x509.ParseCertificate(b.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func randomHex(t *testing.T) string {
	t.Helper()
	b := make([]byte, 12)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

// dualStackPorts makes sure the router's three ports are free on every IPv4 and IPv6 address (the
// listeners of ROUTER_IP_V4_V6_MODE are wildcards), picking others when they are not.
func dualStackPorts(t *testing.T, r *framework.ClusterRouter) {
	t.Helper()
	free := func(p int) bool {
		for _, a := range []struct{ network, addr string }{{"tcp4", "0.0.0.0"}, {"tcp6", "::"}} {
			l, err := net.Listen(a.network, net.JoinHostPort(a.addr, strconv.Itoa(p)))
			if err != nil {
				return false
			}
			_ = l.Close()
		}
		return true
	}
	for range 20 {
		if free(r.HTTPPort) && free(r.HTTPSPort) && free(r.StatsPort) {
			r.Client.HTTPPort, r.Client.HTTPSPort = r.HTTPPort, r.HTTPSPort
			return
		}
		ps := testkit.ListenPorts(t, 3)
		r.HTTPPort, r.HTTPSPort, r.StatsPort = ps[0], ps[1], ps[2]
	}
	t.Fatal("no three ports free on both 0.0.0.0 and [::] after 20 attempts")
}
