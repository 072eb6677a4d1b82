package parity

import (
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Answer is what a router answered to one Request, in the form compared: normalised (normalise says
// what is rewritten and why) so that two routers that behave alike give equal Answers.
type Answer struct {
	// ID is the request's.
	ID string `json:"id"`
	// Status is the HTTP status, or an outcome without a response (closed, timeout, refused,
	// tls-failed); for a repeated request the distinct values seen, sorted, joined by "|".
	Status string `json:"status"`
	// Pod is the pod that answered ("" when the router answered itself), or "any of <service>" and
	// "=<request>" (see Request.AnyPodOf and SamePodAs); for a repeated request the distinct pods seen.
	Pod string `json:"pod,omitempty"`
	// PodTarget is the request target the pod received (a rewrite shows here).
	PodTarget string `json:"podTarget,omitempty"`
	// Location and HSTS are the Location and Strict-Transport-Security response headers.
	Location string `json:"location,omitempty"`
	HSTS     string `json:"hsts,omitempty"`
	// Cookies are the cookies the answer set, in order.
	Cookies []Cookie `json:"cookies,omitempty"`
	// RequestHeaders are the headers the pod received, Host included.
	RequestHeaders map[string][]string `json:"requestHeaders,omitempty"`
	// ResponseHeaders are the response headers but those compared on their own (Location,
	// Strict-Transport-Security, Set-Cookie) and those that change on every answer (Date,
	// Content-Length: the echo's length depends on the router's ports).
	ResponseHeaders map[string][]string `json:"responseHeaders,omitempty"`
	// Cert describes the certificate served over TLS: its common name, its issuer's, the chain's length.
	Cert string `json:"cert,omitempty"`
	// ALPN is the protocol the TLS handshake agreed on.
	ALPN string `json:"alpn,omitempty"`
}

// Cookie is one Set-Cookie of an answer.
type Cookie struct {
	Name string `json:"name"`
	// Value is the value as compared: "stock-hash(<pod>)" when it is the stock router's hash of the
	// endpoint of that pod in this run, "stock-hash(answering pod)" when that pod answered the
	// request, "other" otherwise (see normaliseCookieValue). The value as set is not kept: it
	// depends on the run's addresses and, after a pick at random, on the pod picked.
	Value string `json:"value"`
	// Attrs are the attributes as set, sorted.
	Attrs []string `json:"attrs,omitempty"`
}

// The cookie values normaliseCookieValue writes.
const (
	cookieAnswering = "stock-hash(answering pod)"
	cookieOther     = "other"
)

// The placeholders of the router's own ports, which differ from router to router.
const (
	httpPortHolder  = "{http-port}"
	httpsPortHolder = "{https-port}"
)

// normCtx is what normalisation needs to know about the run.
type normCtx struct {
	target    Target
	endpoints Endpoints
	// pods are the raw pods that answered earlier requests, by request ID (for SamePodAs).
	pods map[string]string
}

// normalise turns what one request brought back into its Answer.
//
// What it rewrites, and why each must differ between two routers that behave alike:
//   - the router's own ports (in X-Forwarded-Port and Location): each router listens on its own;
//   - cookie values: they hash the pod's address, which the replay's pods do not share with the
//     recording's, so a value is written as the endpoint it names (normaliseCookieValue);
//   - the pod picked at random, where the request says so (Request.AnyPodOf, SamePodAs);
//   - no response at all: a closed connection is one outcome whether it ended with a FIN or a reset.
func normalise(r Request, o observation, n normCtx) Answer {
	a := Answer{ID: r.ID}
	if o.tls != nil {
		a.Cert = describeCert(o)
		a.ALPN = o.tls.NegotiatedProtocol
	}
	if r.HandshakeOnly {
		a.Status = "handshake"
		if o.err != nil {
			a.Status = outcome(o.err)
		}
		return a
	}
	if o.err != nil {
		a.Status = outcome(o.err)
		return a
	}
	a.Status = strconv.Itoa(o.status)
	raw := rawPod(o)
	a.Pod = n.pod(r, raw)
	a.Location = n.ports(o.header.Get("Location"))
	a.HSTS = o.header.Get("Strict-Transport-Security")
	for _, line := range o.header.Values("Set-Cookie") {
		a.Cookies = append(a.Cookies, n.cookie(line, raw))
	}
	a.ResponseHeaders = responseHeaders(o.header, a.Pod)
	if o.echo != nil {
		a.PodTarget = o.echo.URI
		a.RequestHeaders = n.requestHeaders(o.echo.Header, o.echo.Host)
	}
	return a
}

// rawPod is the pod that answered: the echo's name, else the X-Backend header.
func rawPod(o observation) string {
	if o.echo != nil {
		return o.echo.Backend
	}
	return o.header.Get("X-Backend")
}

// pod writes the answering pod as the request compares it.
func (n normCtx) pod(r Request, raw string) string {
	if raw == "" {
		return ""
	}
	if r.SamePodAs != "" && n.pods[r.SamePodAs] == raw {
		return "=" + r.SamePodAs
	}
	if r.AnyPodOf != "" && slices.Contains(n.endpoints.Pods(r.AnyPodOf), raw) {
		return "any of " + r.AnyPodOf
	}
	return raw
}

// ports replaces the router's own ports in a URL-like value by placeholders.
func (n normCtx) ports(v string) string {
	if v == "" {
		return v
	}
	for port, holder := range map[int]string{n.target.HTTPPort: httpPortHolder, n.target.HTTPSPort: httpsPortHolder} {
		v = strings.ReplaceAll(v, ":"+strconv.Itoa(port)+"/", ":"+holder+"/")
		if strings.HasSuffix(v, ":"+strconv.Itoa(port)) {
			v = strings.TrimSuffix(v, strconv.Itoa(port)) + holder
		}
	}
	return v
}

// cookie parses one Set-Cookie line.
func (n normCtx) cookie(line, answering string) Cookie {
	parts := strings.Split(line, ";")
	name, value, _ := strings.Cut(strings.TrimSpace(parts[0]), "=")
	c := Cookie{Name: name, Value: n.normaliseCookieValue(value, answering)}
	for _, p := range parts[1:] {
		if p = strings.TrimSpace(p); p != "" {
			c.Attrs = append(c.Attrs, p)
		}
	}
	sort.Strings(c.Attrs)
	return c
}

// normaliseCookieValue writes a cookie value as the endpoint it names in the stock router's scheme:
// the hash of an endpoint of the run whose pod answered the request, of another pod, or neither.
func (n normCtx) normaliseCookieValue(v, answering string) string {
	e, ok := n.endpoints.byStockValue(v)
	switch {
	case !ok:
		return cookieOther
	case e.Pod == answering:
		return cookieAnswering
	}
	return "stock-hash(" + e.Pod + ")"
}

// requestHeaders are the headers the pod received, with Host, and the router's own port in
// X-Forwarded-Port replaced by its placeholder.
func (n normCtx) requestHeaders(h http.Header, host string) map[string][]string {
	out := map[string][]string{}
	for k, vs := range h {
		out[k] = slices.Clone(vs)
	}
	if host != "" {
		out["Host"] = []string{host}
	}
	for i, v := range out["X-Forwarded-Port"] {
		switch v {
		case strconv.Itoa(n.target.HTTPPort):
			out["X-Forwarded-Port"][i] = httpPortHolder
		case strconv.Itoa(n.target.HTTPSPort):
			out["X-Forwarded-Port"][i] = httpsPortHolder
		}
	}
	return out
}

// unlistedResponse are the response headers ResponseHeaders leaves out.
var unlistedResponse = []string{"Date", "Content-Length", "Location", "Strict-Transport-Security", "Set-Cookie"}

// responseHeaders returns the response headers compared: all but unlistedResponse, and the pod's
// X-Backend as the pod is compared (pod, below Answer.Pod).
func responseHeaders(h http.Header, pod string) map[string][]string {
	out := map[string][]string{}
	for k, vs := range h {
		if !slices.Contains(unlistedResponse, k) {
			out[k] = slices.Clone(vs)
		}
	}
	if _, ok := out["X-Backend"]; ok {
		out["X-Backend"] = []string{pod}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// describeCert writes the served certificate as "<CN> (issuer <CN>, chain <n>)".
func describeCert(o observation) string {
	certs := o.tls.PeerCertificates
	if len(certs) == 0 {
		return ""
	}
	return certs[0].Subject.CommonName + " (issuer " + certs[0].Issuer.CommonName + ", chain " + strconv.Itoa(len(certs)) + ")"
}

// aggregate folds the answers of a repeated request into one: the statuses and pods seen. When the
// request names the Service its pods are picked from (AnyPodOf), the pod is how many of its pods
// answered ("pods of two answering: 1": the balance kept the client on one, whichever), raw holding
// the pods as they answered.
func aggregate(r Request, as []Answer, raw []string) Answer {
	statuses, pods, distinct := map[string]bool{}, map[string]bool{}, map[string]bool{}
	for i, a := range as {
		statuses[a.Status] = true
		if a.Pod != "" {
			pods[a.Pod] = true
			distinct[raw[i]] = true
		}
	}
	pod := joinKeys(pods)
	if r.AnyPodOf != "" && pod == "any of "+r.AnyPodOf {
		pod = fmt.Sprintf("pods of %s answering: %d", r.AnyPodOf, len(distinct))
	}
	return Answer{ID: r.ID, Status: joinKeys(statuses), Pod: pod}
}

func joinKeys(m map[string]bool) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return strings.Join(keys, "|")
}
