package mapping

import (
	"sort"

	"github.com/haroute/haroute/mapping/model"
)

// buildBackend assembles the backend of an admitted Route: its options, its servers with their
// weights, and the warnings about refused endpoints.
func (t *translator) buildBackend(a *admission) (model.Backend, []*rejection) {
	o := a.options
	b := model.Backend{
		Name:             a.backendName,
		Kind:             a.kind,
		Mode:             a.kind.Mode(),
		Route:            a.namespace + "/" + a.name,
		Balance:          o.balance,
		Cookie:           o.cookie,
		TimeoutServer:    o.timeoutServer,
		TimeoutTunnel:    o.timeoutTunnel,
		CheckInterval:    o.checkInterval,
		Allowlist:        o.allowlist,
		RateLimit:        o.rateLimit,
		ForwardedHeaders: o.forwardedHeaders,
		HSTS:             o.hsts,
		Rewrite:          o.rewrite,
		ServerMaxConn:    o.serverMaxConn,
		CaseAdjustServer: o.caseAdjustServer,
		TLS:              a.tls.backendTLS,
		RequestHeaders:   a.requestHeaders,
		ResponseHeaders:  a.responseHeaders,
	}

	var warnings []*rejection
	endpoints := make([][]endpoint, len(a.services))
	weights := make([]int32, len(a.services))
	counts := make([]int, len(a.services))
	for i, ref := range a.services {
		eps, ws := t.serviceEndpoints(a.namespace, ref.name, a.port)
		endpoints[i], counts[i], weights[i] = eps, len(eps), ref.weight
		warnings = append(warnings, ws...)
	}
	serverWeight := serverWeights(weights, counts)

	total, active := 0, 0
	for i, eps := range endpoints {
		total += len(eps)
		if weights[i] > 0 {
			active += len(eps)
		}
	}
	// OpenShift health-checks the servers of a Route with more than one active endpoint.
	check := active > 1
	b.Servers = make([]model.Server, 0, total)
	for i, ref := range a.services {
		service := a.namespace + "/" + ref.name
		// As OpenShift: the backend's certificate must name its Service only when the router's default
		// destination CA (the service CA) verifies it; a Route's own destinationCACertificate verifies
		// the chain alone.
		verifyHost := ""
		if a.kind == model.KindReencrypt && a.tls.ca == nil {
			verifyHost = ref.name + "." + a.namespace + ".svc"
		}
		for _, e := range endpoints[i] {
			b.Servers = append(b.Servers, model.Server{
				Name:        e.name,
				Addr:        e.addr.String(),
				Port:        e.port,
				Weight:      serverWeight[i],
				State:       model.StateReady,
				Service:     service,
				VerifyHost:  verifyHost,
				HealthCheck: check && !e.idled,
			})
		}
	}
	sort.Slice(b.Servers, func(i, j int) bool { return b.Servers[i].Name < b.Servers[j].Name })
	model.AssignServerIDs(b.Servers)
	return b, warnings
}
