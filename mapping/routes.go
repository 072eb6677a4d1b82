package mapping

import (
	"fmt"
	"strconv"

	routev1 "github.com/openshift/api/route/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/haroute/haroute/mapping/model"
)

// Limits of spec.to and spec.alternateBackends (OpenShift's API limits).
const (
	maxAlternateBackends = 3
	defaultServiceWeight = 100
	maxServiceWeight     = 256
)

// admission is a Route that passed validation: everything Translate derived from it.
type admission struct {
	route     *routev1.Route
	namespace string
	name      string
	hostSpec
	path        string
	claimKey    string // conflictKey of host and path
	kind        model.BackendKind
	termination routev1.TLSTerminationType
	policy      routev1.InsecureEdgeTerminationPolicyType
	backendName string
	services    []serviceRef
	// port is spec.port, validated, with a targetPort written as a decimal string turned into its
	// number (OpenShift compares both forms with the endpoint's port number); nil selects every port.
	port    *routev1.RoutePort
	options backendOptions
	tls     routeTLS
	// requestHeaders and responseHeaders are the backend's header rules (spec.httpHeaders.actions),
	// headerValues the model.MapHeaderValues entries of the values the map carries.
	requestHeaders, responseHeaders []model.HeaderRule
	headerValues                    []model.MapEntry
	// warnings are problems that do not keep the Route from being admitted (ignored annotation
	// values, fields haroute does not implement); they are reported only when it is admitted.
	warnings []*rejection
}

// warn records a warning about the admitted Route.
func (a *admission) warn(reason, message string) {
	a.warnings = append(a.warnings, reject(reason, message))
}

// serviceRef is one Service of a Route (spec.to or an alternate backend) with its weight.
type serviceRef struct {
	name   string
	weight int32
}

// validate checks a Route on its own (without looking at other Routes) and derives its admission. The
// checks run in a fixed order and the first failure is reported.
func (t *translator) validate(r *routev1.Route) (*admission, *rejection) {
	if errs := validation.IsDNS1123Label(r.Namespace); len(errs) > 0 {
		return nil, reject(ReasonInvalidRoute, fmt.Sprintf("namespace %s is not a valid DNS-1123 label", quoteShort(r.Namespace)))
	}
	if errs := validation.IsDNS1123Subdomain(r.Name); len(errs) > 0 {
		return nil, reject(ReasonInvalidRoute, fmt.Sprintf("name %s is not a valid DNS-1123 subdomain", quoteShort(r.Name)))
	}
	a := &admission{route: r, namespace: r.Namespace, name: r.Name, path: r.Spec.Path}

	hs, rej := routeHost(r, t.opts)
	if rej != nil {
		return nil, rej
	}
	a.hostSpec = hs

	if msg := pathError(a.path); msg != "" {
		return nil, reject(ReasonInvalidRoute, fmt.Sprintf("path %s %s", quoteShort(a.path), msg))
	}
	a.claimKey = conflictKey(a.host, a.path)
	if rej := a.setTermination(r.Spec.TLS); rej != nil {
		return nil, rej
	}
	a.backendName = model.BackendName(a.kind, a.namespace, a.name)

	services, rej := routeServices(r)
	if rej != nil {
		return nil, rej
	}
	a.services = services

	port, rej := routePort(r.Spec.Port)
	if rej != nil {
		return nil, rej
	}
	a.port = port

	opts, rej := parseAnnotations(a, r.Annotations, t.opts)
	if rej != nil {
		return nil, rej
	}
	a.options = opts

	headers, rej := routeHTTPHeaders(r, a.kind)
	if rej != nil {
		return nil, rej
	}
	a.requestHeaders, a.responseHeaders, a.headerValues = headers.rules(a.backendName)

	tls, rej := t.routeTLS(a)
	if rej != nil {
		return nil, rej
	}
	a.tls = tls
	return a, nil
}

// setTermination derives the backend kind from spec.tls and checks the insecure policy. A nil spec.tls
// means plain HTTP (a policy without TLS does not exist, as in OpenShift).
func (a *admission) setTermination(tls *routev1.TLSConfig) *rejection {
	if tls == nil {
		a.kind = model.KindHTTP
		return nil
	}
	a.termination, a.policy = tls.Termination, tls.InsecureEdgeTerminationPolicy
	switch tls.Termination {
	case routev1.TLSTerminationEdge:
		a.kind = model.KindEdge
	case routev1.TLSTerminationReencrypt:
		a.kind = model.KindReencrypt
	case routev1.TLSTerminationPassthrough:
		a.kind = model.KindPassthrough
	default:
		return reject(ReasonInvalidRoute, fmt.Sprintf("spec.tls.termination %s: want edge, passthrough or reencrypt", quoteShort(string(tls.Termination))))
	}
	switch tls.InsecureEdgeTerminationPolicy {
	case "", routev1.InsecureEdgeTerminationPolicyNone, routev1.InsecureEdgeTerminationPolicyRedirect:
	case routev1.InsecureEdgeTerminationPolicyAllow:
		if a.kind == model.KindPassthrough {
			return reject(ReasonInvalidRoute, "insecureEdgeTerminationPolicy Allow is not supported for passthrough routes: want None or Redirect")
		}
	default:
		return reject(ReasonInvalidRoute, fmt.Sprintf("spec.tls.insecureEdgeTerminationPolicy %s: want None, Allow or Redirect", quoteShort(string(tls.InsecureEdgeTerminationPolicy))))
	}
	if a.kind == model.KindPassthrough && a.path != "" {
		return reject(ReasonInvalidRoute, "passthrough routes do not support paths")
	}
	return nil
}

// routeServices returns spec.to and spec.alternateBackends with their weights.
func routeServices(r *routev1.Route) ([]serviceRef, *rejection) {
	if len(r.Spec.AlternateBackends) > maxAlternateBackends {
		return nil, reject(ReasonInvalidRoute, fmt.Sprintf("%d alternateBackends: at most %d are allowed", len(r.Spec.AlternateBackends), maxAlternateBackends))
	}
	targets := append([]routev1.RouteTargetReference{r.Spec.To}, r.Spec.AlternateBackends...)
	refs := make([]serviceRef, 0, len(targets))
	seen := map[string]bool{}
	for i, to := range targets {
		field := "spec.to"
		if i > 0 {
			field = fmt.Sprintf("spec.alternateBackends[%d]", i-1)
		}
		if to.Kind != "" && to.Kind != "Service" {
			return nil, reject(ReasonInvalidRoute, fmt.Sprintf("%s: kind %s: only Service is supported", field, quoteShort(to.Kind)))
		}
		if errs := validation.IsDNS1123Label(to.Name); len(errs) > 0 {
			return nil, reject(ReasonInvalidRoute, fmt.Sprintf("%s: service name %s is not a valid DNS-1123 label", field, quoteShort(to.Name)))
		}
		if seen[to.Name] {
			return nil, reject(ReasonInvalidRoute, fmt.Sprintf("%s: service %q is listed more than once", field, to.Name))
		}
		seen[to.Name] = true
		w := int32(defaultServiceWeight)
		if to.Weight != nil {
			w = *to.Weight
		}
		if w < 0 || w > maxServiceWeight {
			return nil, reject(ReasonInvalidRoute, fmt.Sprintf("%s: weight %d is outside 0-%d", field, w, maxServiceWeight))
		}
		refs = append(refs, serviceRef{name: to.Name, weight: w})
	}
	return refs, nil
}

// routePort checks spec.port.targetPort: a port name (IANA_SVC_NAME: at most 15 lowercase letters,
// digits and '-', with at least one letter, as Kubernetes names container ports) or a number in
// 1-65535, given as a number or as a decimal string. Anything else, such as "http;quit" or "8080\n",
// could match no endpoint port and would leave the Route admitted without servers and without a
// reason, so it is rejected. It returns spec.port with a decimal string turned into its number.
func routePort(rp *routev1.RoutePort) (*routev1.RoutePort, *rejection) {
	if rp == nil {
		return nil, nil
	}
	const want = "want a port number in 1-65535 or a port name (at most 15 lowercase letters, digits and '-', with a letter)"
	tp := rp.TargetPort
	switch tp.Type {
	case intstr.Int:
		if tp.IntVal < 1 || tp.IntVal > 65535 {
			return nil, reject(ReasonInvalidRoute, fmt.Sprintf("spec.port.targetPort %d: %s", tp.IntVal, want))
		}
		return rp, nil
	case intstr.String:
		s := tp.StrVal
		if n, err := strconv.Atoi(s); err == nil && allDigits(s) && strconv.Itoa(n) == s && n >= 1 && n <= 65535 {
			return &routev1.RoutePort{TargetPort: intstr.FromInt32(int32(n))}, nil
		}
		if len(validation.IsValidPortName(s)) > 0 {
			return nil, reject(ReasonInvalidRoute, fmt.Sprintf("spec.port.targetPort %s: %s", quoteShort(s), want))
		}
		return rp, nil
	}
	return nil, reject(ReasonInvalidRoute, fmt.Sprintf("spec.port.targetPort: unknown type %d: %s", tp.Type, want))
}

// servesHTTP reports whether the Route's backend serves plain-HTTP requests: a plain Route, or an
// edge or reencrypt Route with insecure policy Allow.
func (a *admission) servesHTTP() bool {
	return a.kind == model.KindHTTP || (a.terminated() && a.policy == routev1.InsecureEdgeTerminationPolicyAllow)
}

// redirects reports whether plain-HTTP requests for the Route are redirected to https.
func (a *admission) redirects() bool {
	return a.kind != model.KindHTTP && a.policy == routev1.InsecureEdgeTerminationPolicyRedirect
}

// terminated reports whether the router terminates TLS for the Route (edge or reencrypt).
func (a *admission) terminated() bool {
	return a.kind == model.KindEdge || a.kind == model.KindReencrypt
}

func (a *admission) info() model.RouteInfo {
	ri := model.RouteInfo{
		Namespace:      a.namespace,
		Name:           a.name,
		Host:           a.host,
		Path:           a.path,
		Termination:    string(a.termination),
		InsecurePolicy: string(a.policy),
		Backend:        a.backendName,
	}
	if a.tls.cert != nil {
		ri.Certificate = a.tls.cert.Name
	}
	return ri
}

// routeFileName is the certificate and CA file name of a Route: "<ns>_<route>.pem". Both parts are
// validated DNS-1123 names, which hold no "_", so the name is unique and a safe file name. OpenShift
// writes "<ns>:<route>.pem"; HAProxy 2.6 cannot name a path with ":" on its CLI (`del ssl crt-list`
// refuses it as a line number, `show ssl ca-file` likewise), which would turn every certificate
// removal into a reload.
func (a *admission) routeFileName() string {
	return a.namespace + "_" + a.name + ".pem"
}
