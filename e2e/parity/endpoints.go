package parity

import (
	"crypto/md5" //nolint:gosec // the stock router's cookie values are MD5 hashes; this computes them
	"encoding/hex"
	"fmt"
	"net/netip"
	"sort"
)

// Endpoint is one endpoint of a Service in a run: a pod, the Service's port name, its address.
type Endpoint struct {
	Pod, Service, PortName string
	Addr                   netip.AddrPort
}

// StockID is the stock router's name of the endpoint, `pod:<pod>:<service>:<port name>:<ip>:<port>`
// (its server name, and the input of its cookie value: pkg/router/template/plugin.go,
// createRouterEndpoints, for endpoints whose targetRef is a Pod).
func (e Endpoint) StockID() string {
	return fmt.Sprintf("pod:%s:%s:%s:%s:%d", e.Pod, e.Service, e.PortName, e.Addr.Addr(), e.Addr.Port())
}

// StockValue is the value of the stock router's sticky-session cookie for the endpoint: the hex MD5
// of StockID (the server's `cookie` in its template).
func (e Endpoint) StockValue() string {
	sum := md5.Sum([]byte(e.StockID())) //nolint:gosec // the stock router's choice, reproduced
	return hex.EncodeToString(sum[:])
}

// Endpoints are the endpoints of every Service of a run. The pods are the same in every run; their
// addresses are the run's (the pod network, or loopback in the replay), so a cookie value is compared
// through the endpoint it names, never as a string.
type Endpoints []Endpoint

// Find returns the endpoint of pod in service.
func (es Endpoints) Find(service, pod string) (Endpoint, bool) {
	for _, e := range es {
		if e.Service == service && e.Pod == pod {
			return e, true
		}
	}
	return Endpoint{}, false
}

// Pods returns the pods of service, sorted.
func (es Endpoints) Pods(service string) []string {
	var out []string
	for _, e := range es {
		if e.Service == service {
			out = append(out, e.Pod)
		}
	}
	sort.Strings(out)
	return out
}

// byStockValue returns the endpoint whose stock cookie value is v.
func (es Endpoints) byStockValue(v string) (Endpoint, bool) {
	for _, e := range es {
		if e.StockValue() == v {
			return e, true
		}
	}
	return Endpoint{}, false
}

// StockCookieName is the stock router's default sticky-session cookie name of Route ns/name (without
// router.openshift.io/cookie_name or ROUTER_COOKIE_NAME): the hex MD5 of "<termination> <ns>:<name>"
// as createServiceAliasConfig (pkg/router/template/router.go) computes it, where the termination is
// still empty when the key is built, so the input is " <ns>:<name>" for every Route.
func StockCookieName(ns, name string) string {
	sum := md5.Sum([]byte(" " + ns + ":" + name)) //nolint:gosec // the stock router's choice, reproduced
	return hex.EncodeToString(sum[:])
}

// cookie returns the Cookie header the stock router's client would send for c, with this run's
// endpoints.
func (es Endpoints) cookie(c StockCookie) (string, error) {
	e, ok := es.Find(c.Service, c.Pod)
	if !ok {
		return "", fmt.Errorf("stock cookie: no endpoint of pod %s in service %s", c.Pod, c.Service)
	}
	name, value := c.Name, c.Value
	if name == "" {
		name = StockCookieName(c.Namespace, c.Route)
	}
	if value == "" {
		value = e.StockValue()
	}
	return name + "=" + value, nil
}
