package mapping

import (
	"fmt"
	"net/netip"
	"slices"
	"sort"
	"strconv"

	routev1 "github.com/openshift/api/route/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/util/validation"
)

// endpoint is one serving address:port of a Service, named as OpenShift names servers.
type endpoint struct {
	name string // "pod:<pod>:<svc>:<port-name>:<ip>:<port>"; "ept:<svc>:<port-name>:<ip>:<port>" for a cluster IP
	addr netip.Addr
	port int32
	// idled marks the cluster IP of an idled Service (idledEndpoints): never health-checked.
	idled bool
}

// AnnotationIdledAt marks a Service that OpenShift's idler scaled to zero; its traffic must reach the
// Service's cluster IP, where the platform wakes the pods.
const AnnotationIdledAt = "idling.alpha.openshift.io/idled-at"

// serviceEndpoints returns the serving endpoints of one Service for a Route's spec.port, sorted by name
// and deduplicated by address and port (the smallest name wins), plus a warning for every refused
// address. A missing Service has no endpoints.
func (t *translator) serviceEndpoints(ns, svcName string, rp *routev1.RoutePort) ([]endpoint, []*rejection) {
	svc := t.objs.service(ns, svcName)
	if svc == nil {
		return nil, nil
	}
	slices := t.objs.endpointSlices(ns, svcName)
	selected := portSelector(rp)

	var warnings []*rejection
	byAddrPort := map[netip.AddrPort]int{}
	var eps []endpoint
	for _, slice := range slices {
		if slice.AddressType != discoveryv1.AddressTypeIPv4 && slice.AddressType != discoveryv1.AddressTypeIPv6 {
			continue
		}
		for i := range slice.Endpoints {
			ep := &slice.Endpoints[i]
			if !serving(ep) || len(ep.Addresses) == 0 {
				continue
			}
			addr, why := t.endpointAddr(ep.Addresses[0], slice.AddressType)
			if why == "" {
				why = t.foreignPod(slice, ep)
			}
			if why != "" {
				warnings = append(warnings, reject(ReasonEndpointRejected,
					fmt.Sprintf("service %s: endpoint address %s refused: %s", svcName, quoteShort(ep.Addresses[0]), why)))
				continue
			}
			pod := ""
			if ep.TargetRef != nil && ep.TargetRef.Kind == "Pod" && len(validation.IsDNS1123Subdomain(ep.TargetRef.Name)) == 0 {
				pod = ep.TargetRef.Name
			}
			for _, p := range slice.Ports {
				if p.Port == nil || *p.Port < 1 || *p.Port > 65535 || (p.Protocol != nil && *p.Protocol != corev1.ProtocolTCP) {
					continue
				}
				portName := ""
				if p.Name != nil {
					portName = *p.Name
				}
				if !selected(portName, *p.Port) {
					continue
				}
				if len(validation.IsDNS1123Label(portName)) > 0 {
					portName = ""
				}
				e := endpoint{
					name: "pod:" + pod + ":" + svcName + ":" + portName + ":" + addr.String() + ":" + strconv.Itoa(int(*p.Port)),
					addr: addr,
					port: *p.Port,
				}
				ap := netip.AddrPortFrom(addr, uint16(*p.Port))
				if j, dup := byAddrPort[ap]; dup {
					if e.name < eps[j].name {
						eps[j] = e
					}
					continue
				}
				byAddrPort[ap] = len(eps)
				eps = append(eps, e)
			}
		}
	}
	if len(slices) > 0 && !hasReadyAddress(slices) {
		idled, ws := t.idledEndpoints(svc, selected)
		eps, warnings = append(eps, idled...), append(warnings, ws...)
	}
	sort.Slice(eps, func(i, j int) bool { return eps[i].name < eps[j].name })
	return eps, warnings
}

// hasReadyAddress reports whether an IPv4 or IPv6 slice has an address whose endpoint is not marked
// unready: OpenShift's test of whether a Service has endpoints, before any address is refused.
func hasReadyAddress(slices []*discoveryv1.EndpointSlice) bool {
	for _, sl := range slices {
		if sl.AddressType != discoveryv1.AddressTypeIPv4 && sl.AddressType != discoveryv1.AddressTypeIPv6 {
			continue
		}
		for i := range sl.Endpoints {
			ep := &sl.Endpoints[i]
			if len(ep.Addresses) > 0 && (ep.Conditions.Ready == nil || *ep.Conditions.Ready) {
				return true
			}
		}
	}
	return false
}

// idledEndpoints returns, for an idled Service (AnnotationIdledAt) whose EndpointSlices hold no
// ready address, one endpoint per selected TCP port of the Service at its cluster IP and the
// Service's port, as OpenShift's router does (no health check: the idler answers there until the
// pods are back). A headless Service has none. The cluster IP passes the address checks of every
// endpoint (endpointAddr); it is the Service's own, so the cross-namespace check does not apply.
func (t *translator) idledEndpoints(svc *corev1.Service, selected func(string, int32) bool) ([]endpoint, []*rejection) {
	ip := svc.Spec.ClusterIP
	if svc.Annotations[AnnotationIdledAt] == "" || ip == "" || ip == corev1.ClusterIPNone {
		return nil, nil
	}
	family := discoveryv1.AddressTypeIPv4
	if a, err := netip.ParseAddr(ip); err == nil && a.Is6() {
		family = discoveryv1.AddressTypeIPv6
	}
	addr, why := t.endpointAddr(ip, family)
	if why != "" {
		return nil, []*rejection{reject(ReasonEndpointRejected,
			fmt.Sprintf("service %s: the cluster IP %s of the idled Service refused: %s", svc.Name, quoteShort(ip), why))}
	}
	var eps []endpoint
	seen := map[int32]bool{}
	for _, p := range svc.Spec.Ports {
		if p.Port < 1 || p.Port > 65535 || (p.Protocol != "" && p.Protocol != corev1.ProtocolTCP) || seen[p.Port] || !selected(p.Name, p.Port) {
			continue
		}
		seen[p.Port] = true
		portName := p.Name
		if len(validation.IsDNS1123Label(portName)) > 0 {
			portName = ""
		}
		eps = append(eps, endpoint{
			name:  "ept:" + svc.Name + ":" + portName + ":" + addr.String() + ":" + strconv.Itoa(int(p.Port)),
			addr:  addr,
			port:  p.Port,
			idled: true,
		})
	}
	return eps, nil
}

// serving reports whether an endpoint takes traffic: ready (or unknown) and not terminating.
func serving(ep *discoveryv1.Endpoint) bool {
	c := ep.Conditions
	return (c.Ready == nil || *c.Ready) && (c.Terminating == nil || !*c.Terminating)
}

// metadataAddresses are cloud metadata and platform services that no Route may reach, besides the
// link-local ones (169.254.169.254 and the rest of 169.254.0.0/16, fe80::/10) refused as link-local:
// Azure's wireserver, AWS's IPv6 instance metadata, Alibaba Cloud's metadata service.
func metadataAddresses() []netip.Addr {
	return []netip.Addr{
		netip.MustParseAddr("168.63.129.16"),
		netip.MustParseAddr("fd00:ec2::254"),
		netip.MustParseAddr("100.100.100.200"),
	}
}

// endpointSliceController is the managed-by label value of the slices Kubernetes makes from a
// Service's selector; the endpoints of any other slice were written by hand (or by a mirror of
// hand-written Endpoints).
const endpointSliceController = "endpointslice-controller.k8s.io"

// foreignPod refuses an endpoint of a hand-made slice whose targetRef names a pod of another
// namespace, unless TrustCrossNamespaceEndpoints: that would send this namespace's Route to another
// tenant's pods. It returns the reason, or "".
func (t *translator) foreignPod(slice *discoveryv1.EndpointSlice, ep *discoveryv1.Endpoint) string {
	ref := ep.TargetRef
	if t.opts.TrustCrossNamespaceEndpoints || ref == nil || ref.Namespace == "" || ref.Namespace == slice.Namespace ||
		slice.Labels[discoveryv1.LabelManagedBy] == endpointSliceController {
		return ""
	}
	return fmt.Sprintf("a hand-made EndpointSlice names pod %s/%s of another namespace (HAROUTE_TRUST_CROSS_NAMESPACE_ENDPOINTS=true admits it)",
		quoteShort(ref.Namespace), quoteShort(ref.Name))
}

// endpointAddr parses an endpoint address of a slice of the given type and refuses addresses that must
// never become servers: unspecified, multicast, link-local, both IPv6 embeddings of IPv4 (mapped and
// the deprecated compatible form, which could hide a link-local or loopback address), zoned, cloud
// metadata services, the router's own pod and node addresses, and loopback unless allowed. It returns
// the reason for a refusal, or "".
func (t *translator) endpointAddr(s string, family discoveryv1.AddressType) (netip.Addr, string) {
	addr, err := netip.ParseAddr(s)
	switch {
	case err != nil:
		return netip.Addr{}, "not an IP address"
	case addr.Zone() != "":
		return netip.Addr{}, "zoned address"
	case addr.Is4In6():
		return netip.Addr{}, "IPv4-mapped IPv6 address"
	case ipv4Compatible(addr):
		return netip.Addr{}, "IPv4-compatible IPv6 address (deprecated; it embeds " + embedded4(addr).String() + ")"
	case slices.Contains(metadataAddresses(), addr):
		return netip.Addr{}, "cloud metadata address"
	case slices.Contains(t.opts.RouterAddresses, addr):
		return netip.Addr{}, "the router's own pod or node address"
	case family == discoveryv1.AddressTypeIPv4 && !addr.Is4(), family == discoveryv1.AddressTypeIPv6 && !addr.Is6():
		return netip.Addr{}, "address family does not match the EndpointSlice's addressType " + string(family)
	case addr.IsUnspecified():
		return netip.Addr{}, "unspecified address"
	case addr.IsMulticast() || addr.IsInterfaceLocalMulticast() || addr.IsLinkLocalMulticast():
		return netip.Addr{}, "multicast address"
	case addr.IsLinkLocalUnicast():
		return netip.Addr{}, "link-local address"
	case addr.IsLoopback() && !t.opts.AllowLoopbackEndpoints:
		return netip.Addr{}, "loopback address (admitted only with --allow-loopback-endpoints, in folder mode)"
	}
	return addr, ""
}

// ipv4Compatible reports an IPv6 address of ::/96 other than :: and ::1: the deprecated form that
// embeds an IPv4 address in the low 32 bits (RFC 4291, 2.5.5.1).
func ipv4Compatible(a netip.Addr) bool {
	if !a.Is6() || a.Is4In6() || a.IsUnspecified() || a.IsLoopback() {
		return false
	}
	b := a.As16()
	for _, x := range b[:12] {
		if x != 0 {
			return false
		}
	}
	return true
}

// embedded4 returns the IPv4 address in the low 32 bits of a.
func embedded4(a netip.Addr) netip.Addr {
	b := a.As16()
	return netip.AddrFrom4([4]byte(b[12:]))
}

// portSelector returns which EndpointSlice ports (name, number) a Route's spec.port selects, as
// OpenShift's router selects them: every port without spec.port; else the ports whose name is the
// targetPort, or whose number written in decimal is. The Service's own ports play no part: a
// targetPort naming a Service port number (80 for a Service that sends 80 to the pods' 8080) or a
// Service port's targetPort name selects nothing unless an endpoint port has that name or number.
func portSelector(rp *routev1.RoutePort) func(name string, port int32) bool {
	if rp == nil {
		return func(string, int32) bool { return true }
	}
	want := rp.TargetPort.String()
	return func(name string, port int32) bool {
		return name == want || strconv.Itoa(int(port)) == want
	}
}

// maxServerWeight is HAProxy's largest server weight.
const maxServerWeight = 256

// serverWeights returns the weight to give each server of each Service so that every Service gets its
// share of the traffic whatever its number of endpoints, with OpenShift's arithmetic, so that a stock
// router and haroute fed the same Route give every server the same weight and spread the load alike.
//
// Service i has weight w[i] and n[i] endpoints; a Service without endpoints does not take part. When
// only one Service has both a weight and endpoints (the common Route), its servers get weight 1 and a
// weight-0 Service's get 0: equal weights spread the same, and HAProxy builds the consistent-hash ring
// of balance random and source from weight × 16 points per server, so 256 would cost 256 times the
// ring. Otherwise each server needs a weight proportional to r[i] = w[i]/n[i]; OpenShift computes it
// in float32 as
//
//	int32(r[i] · (256 / M)),  M = max r[i],  at least 1 where r[i] > 0
//
// truncating, so the Service with the largest per-server share gets 256 and another gets up to one
// less than its exact weight. The same float32 operations in the same order give the same numbers.
func serverWeights(w []int32, n []int) []int32 {
	out := make([]int32, len(w))
	active := 0
	for i := range w {
		if w[i] > 0 && n[i] >= 1 {
			active++
		}
	}
	if active == 1 {
		for i := range w {
			if w[i] > 0 && n[i] >= 1 {
				out[i] = 1
			}
		}
		return out
	}
	ep := make([]float32, len(w))
	var maxEp float32
	for i := range w {
		if n[i] >= 1 && w[i] > 0 {
			ep[i] = float32(w[i]) / float32(n[i])
			maxEp = max(maxEp, ep[i])
		}
	}
	var scale float32
	if maxEp > 0 {
		scale = float32(maxServerWeight) / maxEp
	}
	for i := range w {
		if ep[i] <= 0 {
			continue
		}
		out[i] = max(1, int32(ep[i]*scale))
	}
	return out
}
