//go:build e2e

package framework

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	_ "embed"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	routeclientset "github.com/openshift/client-go/route/clientset/versioned"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"

	"github.com/haroute/haroute/internal/testkit"
)

// routeCRD is route/v1/zz_generated.crd-manifests/routes.crd.yaml of github.com/openshift/api.
//
//go:embed testdata/routes.crd.yaml
var routeCRD []byte

// Names of the router's identity and its RBAC objects.
const (
	RouterNamespace = "haroute"
	RouterAccount   = "router"
	RouterUser      = "system:serviceaccount:" + RouterNamespace + ":" + RouterAccount
	routerRole      = "haroute-router"
	startTimeout    = 90 * time.Second
	apiTimeout      = 30 * time.Second
	pollInterval    = 100 * time.Millisecond
)

// Cluster is a running etcd + kube-apiserver.
type Cluster struct {
	// URL is the API server's https URL.
	URL string
	// Kube and Routes are admin clients (system:masters) for the test.
	Kube   kubernetes.Interface
	Routes routeclientset.Interface
	// Kubeconfig is a file authenticating as RouterUser (RBAC-limited, not an admin).
	Kubeconfig string
	// RouterKube and RouterRoutes are clients with the router's token (to check its rights).
	RouterKube   kubernetes.Interface
	RouterRoutes routeclientset.Interface

	dir       string
	caPEM     []byte
	etcd      *testkit.Process
	apiserver *testkit.Process
	// apiserverBin and apiserverArgs restart the API server (RestartAPIServer).
	apiserverBin  string
	apiserverArgs []string
	adminToken    string
	// serviceCA stands for OpenShift's service CA (ServiceCA).
	serviceCA *testkit.CA
}

// Start runs etcd and kube-apiserver for the test, installs the Route CRD and the router's RBAC.
func Start(t *testing.T) *Cluster {
	t.Helper()
	bin := binDir(t)
	dir := t.TempDir()
	ports := freePorts(t, 3)
	etcdClient := "http://127.0.0.1:" + strconv.Itoa(ports[0])
	etcdPeer := "http://127.0.0.1:" + strconv.Itoa(ports[1])
	c := &Cluster{dir: dir, URL: "https://127.0.0.1:" + strconv.Itoa(ports[2])}

	var err error
	if c.caPEM, err = servingCert(dir); err != nil {
		t.Fatal(err)
	}
	if err := serviceAccountKeys(dir); err != nil {
		t.Fatal(err)
	}
	adminToken, routerToken := randomToken(), randomToken()
	tokens := adminToken + `,haroute-e2e-admin,haroute-e2e-admin,"system:masters"` + "\n" +
		routerToken + "," + RouterUser + ",router-uid," +
		`"system:serviceaccounts,system:serviceaccounts:` + RouterNamespace + `"` + "\n"
	if err := os.WriteFile(filepath.Join(dir, "tokens.csv"), []byte(tokens), 0o600); err != nil {
		t.Fatalf("token file: %v", err)
	}

	c.etcd = startProcess(t, "etcd", exec.Command(filepath.Join(bin, "etcd"),
		"--name=e2e",
		"--data-dir="+filepath.Join(dir, "etcd"),
		"--listen-client-urls="+etcdClient,
		"--advertise-client-urls="+etcdClient,
		"--listen-peer-urls="+etcdPeer,
		"--initial-advertise-peer-urls="+etcdPeer,
		"--initial-cluster=e2e="+etcdPeer,
		"--unsafe-no-fsync=true",
		"--log-level=warn",
	))
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	plain := &http.Client{Timeout: 2 * time.Second}
	if err := waitOK(ctx, plain, etcdClient+"/health", ""); err != nil {
		t.Fatalf("etcd: %v", err)
	}
	c.apiserverArgs = []string{
		"--etcd-servers=" + etcdClient,
		"--bind-address=127.0.0.1",
		"--advertise-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(ports[2]),
		"--tls-cert-file=" + filepath.Join(dir, "serving.crt"),
		"--tls-private-key-file=" + filepath.Join(dir, "serving.key"),
		"--cert-dir=" + filepath.Join(dir, "certs"),
		"--token-auth-file=" + filepath.Join(dir, "tokens.csv"),
		"--authorization-mode=RBAC",
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file=" + filepath.Join(dir, "sa.pub"),
		"--service-account-signing-key-file=" + filepath.Join(dir, "sa.key"),
		"--service-cluster-ip-range=10.0.0.0/24",
		"--disable-admission-plugins=ServiceAccount",
	}
	c.apiserverBin = filepath.Join(bin, "kube-apiserver")
	c.adminToken = adminToken
	c.apiserver = startProcess(t, "kube-apiserver", exec.Command(c.apiserverBin, c.apiserverArgs...))
	if err := c.waitAPIServer(ctx); err != nil {
		t.Fatalf("kube-apiserver: %v", err)
	}

	admin := c.restConfig(adminToken)
	router := c.restConfig(routerToken)
	if c.Kube, err = kubernetes.NewForConfig(admin); err != nil {
		t.Fatalf("admin client: %v", err)
	}
	if c.Routes, err = routeclientset.NewForConfig(admin); err != nil {
		t.Fatalf("admin route client: %v", err)
	}
	if c.RouterKube, err = kubernetes.NewForConfig(router); err != nil {
		t.Fatalf("router client: %v", err)
	}
	if c.RouterRoutes, err = routeclientset.NewForConfig(router); err != nil {
		t.Fatalf("router route client: %v", err)
	}
	dyn, err := dynamic.NewForConfig(admin)
	if err != nil {
		t.Fatalf("dynamic client: %v", err)
	}
	if err := installCRD(ctx, dyn, routeCRD); err != nil {
		t.Fatal(err)
	}
	if err := c.grantRouter(ctx); err != nil {
		t.Fatal(err)
	}
	if err := c.waitRouterRights(ctx); err != nil {
		t.Fatal(err)
	}
	c.Kubeconfig = filepath.Join(dir, "router.kubeconfig")
	if err := os.WriteFile(c.Kubeconfig, c.kubeconfig(routerToken), 0o600); err != nil {
		t.Fatalf("kubeconfig: %v", err)
	}
	return c
}

func (c *Cluster) restConfig(token string) *rest.Config {
	return &rest.Config{
		Host:            c.URL,
		BearerToken:     token,
		TLSClientConfig: rest.TLSClientConfig{CAData: c.caPEM},
		QPS:             200,
		Burst:           400,
		Timeout:         apiTimeout,
	}
}

// kubeconfig returns a kubeconfig file's content for token.
func (c *Cluster) kubeconfig(token string) []byte {
	cfg := map[string]any{
		"apiVersion": "v1",
		"kind":       "Config",
		"clusters": []any{map[string]any{"name": "e2e", "cluster": map[string]any{
			"server": c.URL, "certificate-authority-data": c.caPEM}}},
		"users":           []any{map[string]any{"name": "router", "user": map[string]any{"token": token}}},
		"contexts":        []any{map[string]any{"name": "e2e", "context": map[string]any{"cluster": "e2e", "user": "router"}}},
		"current-context": "e2e",
	}
	b, _ := yaml.Marshal(cfg) // a map of strings and []byte always marshals
	return b
}

// Namespace creates a namespace for the test, named after it, and returns its name.
func (c *Cluster) Namespace(t *testing.T, prefix string) string {
	t.Helper()
	ns, err := c.Kube.CoreV1().Namespaces().Create(context.Background(), &corev1.Namespace{
		ObjectMeta: metav1.ObjectMeta{GenerateName: prefix + "-"},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create namespace: %v", err)
	}
	return ns.Name
}

var crdGVR = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// installCRD creates the CRD in data and waits until it is Established and its resource is served.
func installCRD(ctx context.Context, dyn dynamic.Interface, data []byte) error {
	var obj map[string]any
	if err := yaml.Unmarshal(data, &obj); err != nil {
		return fmt.Errorf("decode CRD: %w", err)
	}
	u := &unstructured.Unstructured{Object: obj}
	if _, err := dyn.Resource(crdGVR).Create(ctx, u, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create CRD %s: %w", u.GetName(), err)
	}
	for ctx.Err() == nil {
		got, err := dyn.Resource(crdGVR).Get(ctx, u.GetName(), metav1.GetOptions{})
		if err == nil && established(got) {
			gvr := schema.GroupVersionResource{Group: "route.openshift.io", Version: "v1", Resource: "routes"}
			if _, err := dyn.Resource(gvr).List(ctx, metav1.ListOptions{Limit: 1}); err == nil {
				return nil
			}
		}
		sleep(ctx, pollInterval)
	}
	return fmt.Errorf("CRD %s not established: %w", u.GetName(), ctx.Err())
}

func established(u *unstructured.Unstructured) bool {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		m, ok := c.(map[string]any)
		if ok && m["type"] == "Established" && m["status"] == "True" {
			return true
		}
	}
	return false
}

// grantRouter creates the router's namespace, ClusterRole and ClusterRoleBinding, the ClusterRole's
// rules read from the deploy manifests (manifests/base/rbac.yaml): every scenario then proves they are
// enough.
func (c *Cluster) grantRouter(ctx context.Context) error {
	rules, err := manifestRules()
	if err != nil {
		return err
	}
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: routerRole}, Rules: rules}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: routerRole},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: routerRole},
		Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Namespace: RouterNamespace, Name: RouterAccount}},
	}
	if _, err := c.Kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{
		ObjectMeta: metav1.ObjectMeta{Name: RouterNamespace}}, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create namespace %s: %w", RouterNamespace, err)
	}
	if _, err := c.Kube.RbacV1().ClusterRoles().Create(ctx, role, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create cluster role: %w", err)
	}
	if _, err := c.Kube.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create cluster role binding: %w", err)
	}
	return nil
}

// waitRouterRights waits until the router's token can list Routes (the RBAC cache has caught up).
func (c *Cluster) waitRouterRights(ctx context.Context) error {
	var last error
	for ctx.Err() == nil {
		if _, last = c.RouterRoutes.RouteV1().Routes("").List(ctx, metav1.ListOptions{Limit: 1}); last == nil {
			return nil
		}
		sleep(ctx, pollInterval)
	}
	return fmt.Errorf("router token cannot list routes: %w", errors.Join(ctx.Err(), last))
}

func sleep(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}

// waitOK polls url (with a bearer token when set) until it answers 200.
func waitOK(ctx context.Context, client *http.Client, url, token string) error {
	last := "no answer"
	for ctx.Err() == nil {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return fmt.Errorf("request %s: %w", url, err)
		}
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := client.Do(req)
		if err == nil {
			body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			last = fmt.Sprintf("status %d: %s", resp.StatusCode, tail(string(body), 300))
		} else {
			last = err.Error()
		}
		sleep(ctx, pollInterval)
	}
	return fmt.Errorf("%s not ready: %w (last answer: %s)", url, ctx.Err(), last)
}

func randomToken() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b) // crypto/rand.Read never fails on Linux
	return hex.EncodeToString(b)
}

func writePEM(path, typ string, der []byte) error {
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// servingCert writes dir/serving.{crt,key}, self-signed for 127.0.0.1, and returns the certificate PEM.
func servingCert(dir string) ([]byte, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("serving key: %w", err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "kube-apiserver"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
		IPAddresses:           []net.IP{net.ParseIP("127.0.0.1")},
		DNSNames:              []string{"localhost"},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, fmt.Errorf("serving cert: %w", err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, fmt.Errorf("serving key: %w", err)
	}
	if err := writePEM(filepath.Join(dir, "serving.crt"), "CERTIFICATE", der); err != nil {
		return nil, err
	}
	if err := writePEM(filepath.Join(dir, "serving.key"), "PRIVATE KEY", keyDER); err != nil {
		return nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), nil
}

// serviceAccountKeys writes dir/sa.{key,pub} for the API server's service account tokens.
func serviceAccountKeys(dir string) error {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return fmt.Errorf("service account key: %w", err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return fmt.Errorf("service account key: %w", err)
	}
	pubDER, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		return fmt.Errorf("service account public key: %w", err)
	}
	if err := writePEM(filepath.Join(dir, "sa.key"), "PRIVATE KEY", keyDER); err != nil {
		return err
	}
	return writePEM(filepath.Join(dir, "sa.pub"), "PUBLIC KEY", pubDER)
}

// KillAPIServer SIGKILLs kube-apiserver (etcd keeps its data).
func (c *Cluster) KillAPIServer(t *testing.T) {
	t.Helper()
	if err := c.apiserver.Kill(); err != nil {
		t.Fatal(err)
	}
}

// RestartAPIServer starts kube-apiserver again with the same flags (same port, same etcd) and waits
// until it is ready.
func (c *Cluster) RestartAPIServer(t *testing.T) {
	t.Helper()
	if !c.apiserver.Exited() {
		t.Fatal("RestartAPIServer: kube-apiserver still runs")
	}
	// Its cleanup runs before the router's (last in, first out): a graceful stop would wait for the
	// router's watches.
	opts := processOptions()
	opts.KillOnStop = true
	c.apiserver = testkit.StartProcess(t, "kube-apiserver (restarted)", exec.Command(c.apiserverBin, c.apiserverArgs...), opts)
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	if err := c.waitAPIServer(ctx); err != nil {
		t.Fatalf("restarted kube-apiserver: %v", err)
	}
}

// waitAPIServer waits until the API server answers /readyz with 200.
func (c *Cluster) waitAPIServer(ctx context.Context) error {
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(c.caPEM)
	secure := &http.Client{
		Timeout:   2 * time.Second,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}},
	}
	return waitOK(ctx, secure, c.URL+"/readyz", c.adminToken)
}

// Setup is the start of most scenarios: a cluster, a namespace for the test (named prefix-…) and a
// pod network.
func Setup(t *testing.T, prefix string) (*Cluster, string, *PodNetwork) {
	t.Helper()
	c := Start(t)
	return c, c.Namespace(t, prefix), NewPodNetwork(t)
}

// manifestRules returns the rules of the ClusterRole in manifests/base/rbac.yaml (its first document).
func manifestRules() ([]rbacv1.PolicyRule, error) {
	_, self, _, ok := runtime.Caller(0)
	if !ok {
		return nil, errors.New("manifest rules: no source path")
	}
	path := filepath.Join(filepath.Dir(self), "..", "..", "manifests", "base", "rbac.yaml")
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("manifest rules: %w", err)
	}
	first, _, _ := strings.Cut(string(raw), "\n---\n")
	var role rbacv1.ClusterRole
	if err := yaml.UnmarshalStrict([]byte(first), &role); err != nil {
		return nil, fmt.Errorf("manifest rules: %s: %w", path, err)
	}
	if role.Kind != "ClusterRole" || len(role.Rules) == 0 {
		return nil, fmt.Errorf("manifest rules: %s: the first document is no ClusterRole with rules", path)
	}
	return role.Rules, nil
}
