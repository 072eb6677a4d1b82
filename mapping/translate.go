package mapping

import (
	"fmt"
	"sort"
	"strconv"

	routev1 "github.com/openshift/api/route/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/haroute/haroute/mapping/layout"
	"github.com/haroute/haroute/mapping/model"
)

// Unix sockets (relative to the HAProxy directory) through which public_ssl hands TLS connections to
// the terminating frontends.
const (
	sniSocket   = "unix@" + layout.SNISocket
	noSNISocket = "unix@" + layout.NoSNISocket
)

// Translate turns a snapshot into the desired HAProxy state and the per-Route problems. It is pure and
// deterministic. Options are assumed valid (Options.Validate).
//
// Routes are admitted greedily, oldest first (creationTimestamp, then UID, then namespace/name), so
// conflicts resolve as in OpenShift: the oldest Route keeps a host and path. Each rejected Route gets one
// Problem; admitted Routes may get warnings (ignored annotation values, unimplemented fields, refused
// endpoints). Problems are sorted by namespace, name, reason and message.
func Translate(in Input, opts Options) (*model.Config, []Problem) {
	t := newTranslator(opts, newIndex(in), nil)
	return t.run(t.selectRoutes(in.Routes))
}

// translator holds the state of one Translate call (or of one call of a Translator); it is never
// shared.
type translator struct {
	opts Options
	idx  *index
	// objs is what validate and buildBackend read: idx itself, or a recorder of it for a Translator.
	objs objects
	// inc is the Translator whose memo this call uses and updates; nil for Translate.
	inc    *Translator
	claims *claims
	maps   *mapBuilder
	seen   map[string]bool // "ns/name" of every Route processed, to catch duplicates
	// certOwner maps an SNI name to the Route ("ns/name") whose certificate is served for it.
	certOwner map[string]string

	// admitted are the admissions in admission order; an admission whose certificate is not served
	// is a copy with tls.cert nil (memoized admissions are never modified).
	admitted []*admission
	// rebuilt counts the backends built in this call rather than taken from the memo.
	rebuilt      int
	backends     []*model.Backend // in admission order; they must not be modified
	certificates []model.Certificate
	caFiles      []model.CAFile
	problems     []Problem
}

// rejection is the reason a Route is not admitted.
type rejection struct {
	reason  string
	message string
}

func (r *rejection) Error() string { return r.reason + ": " + r.message }

func reject(reason, message string) *rejection { return &rejection{reason: reason, message: message} }

// maxQuoted bounds how much of a user-supplied value a Problem message repeats.
const maxQuoted = 64

// quoteShort quotes a user-supplied value for a message, shortening long values.
func quoteShort(v string) string {
	if len(v) > maxQuoted {
		v = v[:maxQuoted] + "..."
	}
	return strconv.Quote(v)
}

// selectRoutes returns this router's Routes (sharding) in admission order, without modifying the input.
func (t *translator) selectRoutes(all []*routev1.Route) []*routev1.Route {
	routes := t.shardRoutes(all)
	sortRoutes(routes)
	return routes
}

// shardRoutes returns this router's Routes (sharding) in input order, in a new slice.
func (t *translator) shardRoutes(all []*routev1.Route) []*routev1.Route {
	routes := make([]*routev1.Route, 0, len(all))
	for _, r := range all {
		if r != nil && t.inShard(r) {
			routes = append(routes, r)
		}
	}
	return routes
}

// sortRoutes sorts Routes in admission order.
func sortRoutes(routes []*routev1.Route) {
	sort.SliceStable(routes, func(i, j int) bool { return olderRoute(routes[i], routes[j]) })
}

// inShard reports whether the Route belongs to this router under ROUTE_LABELS, NAMESPACE_LABELS,
// PROJECT_LABELS and ROUTE_FIELDS.
func (t *translator) inShard(r *routev1.Route) bool {
	if t.opts.RouteLabels != nil && !t.opts.RouteLabels.Matches(labelSet(r.Labels)) {
		return false
	}
	for _, sel := range []labels.Selector{t.opts.NamespaceLabels, t.opts.ProjectLabels} {
		if sel == nil {
			continue
		}
		ns := t.idx.namespace(r.Namespace)
		if ns == nil || !sel.Matches(labelSet(ns.Labels)) {
			return false
		}
	}
	if t.opts.RouteFields != nil && !t.opts.RouteFields.Matches(fields.Set{
		"metadata.name": r.Name, "metadata.namespace": r.Namespace, "spec.host": r.Spec.Host,
		"spec.path": r.Spec.Path, "spec.to.name": r.Spec.To.Name,
	}) {
		return false
	}
	return true
}

// olderRoute orders Routes for admission: creationTimestamp, UID, namespace/name, and finally the
// objects' content, so that even duplicated entries sort the same way whatever the input order.
func olderRoute(a, b *routev1.Route) bool {
	if !a.CreationTimestamp.Equal(&b.CreationTimestamp) {
		return a.CreationTimestamp.Before(&b.CreationTimestamp)
	}
	if a.UID != b.UID {
		return a.UID < b.UID
	}
	if a.Namespace != b.Namespace {
		return a.Namespace < b.Namespace
	}
	if a.Name != b.Name {
		return a.Name < b.Name
	}
	return contentLess(a, b)
}

// run admits the Routes in the given (admission) order and assembles the model.
func (t *translator) run(routes []*routev1.Route) (*model.Config, []Problem) {
	if t.inc != nil {
		t.seen, t.claims, t.backends = t.inc.scratch(len(routes))
	} else {
		t.seen = make(map[string]bool, len(routes))
		t.claims = newClaims(!t.opts.DisableNamespaceOwnershipCheck, len(routes))
		t.backends = make([]*model.Backend, 0, len(routes))
	}
	for _, r := range routes {
		t.addRoute(r)
	}
	return t.finish()
}

// addRoute validates one Route, checks it against the Routes admitted before it and, when it passes,
// records its backend, map entries, certificate and CA file.
func (t *translator) addRoute(r *routev1.Route) {
	m := t.memoEntry(r)
	var key string
	if m != nil {
		key = m.key
	} else {
		key = r.Namespace + "/" + r.Name
	}
	if t.seen[key] {
		t.problem(r, reject(ReasonInvalidRoute, "the input holds this Route more than once; only the first copy in admission order is used"))
		return
	}
	t.seen[key] = true

	a, rej := t.validated(r, m)
	if rej != nil {
		t.problem(r, rej)
		return
	}
	if rej := t.claims.check(a); rej != nil {
		t.problem(r, rej)
		return
	}
	t.claims.claim(a)

	backend, warnings := t.built(a, m)
	for _, ws := range [][]*rejection{a.warnings, warnings} {
		for _, w := range ws {
			t.problems = append(t.problems, Problem{Namespace: r.Namespace, Name: r.Name, Reason: w.reason, Message: w.message, Warning: true})
		}
	}
	t.backends = append(t.backends, backend)
	t.recordAdmission(a)
	if a.tls.cert != nil && !t.addCertificate(r, a) {
		served := *a
		served.tls.cert = nil
		a = &served
	}
	if a.tls.ca != nil {
		t.caFiles = append(t.caFiles, *a.tls.ca)
	}
	t.admitted = append(t.admitted, a)
}

// addCertificate records an admitted Route's own certificate and reports whether it is served. One
// host gets one certificate: when several Routes on a host (different paths) carry certificates,
// HAProxy serves the first crt-list line whose SNI filter matches, so which one wins would depend on
// load order (a fresh start and a runtime update would disagree). The oldest Route's certificate is
// served, like the oldest Route owns the host; the others are admitted with a warning and their
// certificate is not loaded.
func (t *translator) addCertificate(r *routev1.Route, a *admission) bool {
	for _, sni := range a.tls.cert.SNI {
		if owner, taken := t.certOwner[sni]; taken {
			t.problems = append(t.problems, Problem{Namespace: r.Namespace, Name: r.Name, Reason: ReasonCertificateNotServed, Warning: true,
				Message: fmt.Sprintf("host %s is served with the certificate of the older Route %s; this Route's certificate is not used", sni, owner)})
			return false
		}
	}
	for _, sni := range a.tls.cert.SNI {
		t.certOwner[sni] = r.Namespace + "/" + r.Name
	}
	t.certificates = append(t.certificates, *a.tls.cert)
	return true
}

func (t *translator) problem(r *routev1.Route, rej *rejection) {
	t.problems = append(t.problems, Problem{Namespace: r.Namespace, Name: r.Name, Reason: rej.reason, Message: rej.message})
}

// finish assembles the sorted model. A Translator's call takes the maps, certificates, CA files,
// Route records and backend order of its previous call when they are provably the same (reuse).
func (t *translator) finish() (*model.Config, []Problem) {
	cfg := &model.Config{
		Settings:  t.settings(),
		Frontends: t.frontends(),
		Listener:  t.idx.listener,
	}
	if prev := t.reusable(); prev != nil {
		cfg.Maps, cfg.Certificates, cfg.CAFiles, cfg.Routes = prev.cfg.Maps, prev.cfg.Certificates, prev.cfg.CAFiles, prev.cfg.Routes
		cfg.Backends = prev.cfg.Backends
		if t.rebuilt > 0 {
			cfg.Backends = make([]*model.Backend, len(t.backends))
			for i, j := range prev.order {
				cfg.Backends[i] = t.backends[j]
			}
		}
		t.remember(cfg, prev.order)
		return cfg, sortProblems(t.problems)
	}
	for _, a := range t.admitted {
		t.maps.addRoute(a)
	}
	cfg.Maps = t.maps.build(t.admitted)
	var order []int
	cfg.Backends, order = sortBackends(t.backends)
	cfg.Certificates, cfg.CAFiles = t.certificates, t.caFiles
	setALPN(cfg.Certificates, t.opts.HTTP.DisableHTTP2)
	sort.Slice(cfg.Certificates, func(i, j int) bool { return cfg.Certificates[i].Name < cfg.Certificates[j].Name })
	sort.Slice(cfg.CAFiles, func(i, j int) bool { return cfg.CAFiles[i].Name < cfg.CAFiles[j].Name })
	for _, a := range t.admitted {
		cfg.Routes = append(cfg.Routes, a.info())
	}
	sort.Slice(cfg.Routes, func(i, j int) bool {
		if cfg.Routes[i].Namespace != cfg.Routes[j].Namespace {
			return cfg.Routes[i].Namespace < cfg.Routes[j].Namespace
		}
		return cfg.Routes[i].Name < cfg.Routes[j].Name
	})
	t.remember(cfg, order)
	return cfg, sortProblems(t.problems)
}

// sortBackends returns the backends sorted by name (never nil) and, for each position of the result,
// the index in backends it comes from. Backend names are unique (one per Route, and duplicated Routes
// are rejected), so the order is the same whatever the sorting algorithm.
func sortBackends(backends []*model.Backend) ([]*model.Backend, []int) {
	order := make([]int, len(backends))
	for i := range order {
		order[i] = i
	}
	sort.Slice(order, func(i, j int) bool { return backends[order[i]].Name < backends[order[j]].Name })
	out := make([]*model.Backend, len(backends))
	for i, j := range order {
		out[i] = backends[j]
	}
	return out, order
}

// sortProblems sorts by namespace, name, reason, message and warning flag, and drops exact duplicates.
func sortProblems(ps []Problem) []Problem {
	sort.Slice(ps, func(i, j int) bool {
		a, b := ps[i], ps[j]
		switch {
		case a.Namespace != b.Namespace:
			return a.Namespace < b.Namespace
		case a.Name != b.Name:
			return a.Name < b.Name
		case a.Reason != b.Reason:
			return a.Reason < b.Reason
		case a.Message != b.Message:
			return a.Message < b.Message
		}
		return !a.Warning && b.Warning
	})
	out := ps[:0]
	for i, p := range ps {
		if i > 0 && p == ps[i-1] {
			continue
		}
		out = append(out, p)
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

func (t *translator) settings() model.Settings {
	o := t.opts
	return model.Settings{
		RouterName:           o.RouterName,
		HTTPPort:             o.HTTPPort,
		HTTPSPort:            o.HTTPSPort,
		BindAddress:          o.BindAddress,
		MaxConnections:       o.MaxConnections,
		Threads:              o.Threads,
		LoadBalanceAlgorithm: o.LoadBalanceAlgorithm,
		TCPBalanceScheme:     o.TCPBalanceScheme,
		Timeouts:             o.Timeouts,
		CheckInterval:        o.CheckInterval,
		ForwardedHeaders:     o.ForwardedHeaders,
		DefaultCertificate:   layout.DefaultCertificateName,
		BufSize:              o.BufSize,
		HardStopAfter:        o.HardStopAfter,
		MaxWorkerReloads:     o.MaxWorkerReloads,
		SparePoolSize:        o.SparePoolSize,
		CookieName:           o.CookieName,
		AccessLog:            o.AccessLog,
		TLS:                  o.TLS,
		HTTP:                 o.HTTP,
		ClientTLS:            o.ClientTLS,
	}
}

// frontends returns OpenShift's fixed listener layout in rendering order. The public listeners take
// the address family of ROUTER_IP_V4_V6_MODE (IPv4, IPv6 only, or both on two listeners), unless
// ROUTER_BIND_ADDRESS names the one address to listen on.
func (t *translator) frontends() []model.Frontend {
	public := func(name string, mode model.Mode, port int) model.Frontend {
		f := model.Frontend{Name: name, Mode: mode}
		p := strconv.Itoa(port)
		switch {
		case t.opts.BindAddress != "":
			f.Bind = t.opts.BindAddress + ":" + p
		case t.opts.HTTP.IPMode == model.IPModeV6:
			f.BindV6 = ":::" + p
		case t.opts.HTTP.IPMode == model.IPModeV4V6:
			f.Bind, f.BindV6 = ":"+p, ":::"+p
		default:
			f.Bind = ":" + p
		}
		return f
	}
	return []model.Frontend{
		public(model.FrontendPublic, model.ModeHTTP, t.opts.HTTPPort),
		public(model.FrontendPublicSSL, model.ModeTCP, t.opts.HTTPSPort),
		{Name: model.FrontendSNI, Mode: model.ModeHTTP, Bind: sniSocket},
		{Name: model.FrontendNoSNI, Mode: model.ModeHTTP, Bind: noSNISocket},
	}
}
