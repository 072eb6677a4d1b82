package mapping

import (
	routev1 "github.com/openshift/api/route/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"

	"github.com/haroute/haroute/mapping/model"
)

// Input is a snapshot of the objects a router watches. Translate never modifies it.
type Input struct {
	Routes         []*routev1.Route
	Services       []*corev1.Service
	EndpointSlices []*discoveryv1.EndpointSlice
	// Namespaces are needed only for NAMESPACE_LABELS sharding.
	Namespaces []*corev1.Namespace
	// Secrets are needed only for Routes that reference one (spec.tls.externalCertificate).
	Secrets []*corev1.Secret
	// Listener are the router's own TLS files (default certificate, client CA and CRLs), read by the
	// caller from the files the settings name; they reach the state as they are.
	Listener model.ListenerFiles
}

// Problem is the reason one Route was not admitted, or (Warning) a note about an admitted Route.
type Problem struct {
	Namespace string `json:"namespace" yaml:"namespace"`
	Name      string `json:"name" yaml:"name"`
	// Reason is a CamelCase reason as OpenShift writes it in Route status: HostAlreadyClaimed,
	// InvalidHost, ExtendedValidationFailed, RouteNotAdmitted, InvalidAnnotation, ...
	Reason  string `json:"reason" yaml:"reason"`
	Message string `json:"message" yaml:"message"`
	// Warning marks a Problem that does not keep the Route from being admitted (for example a
	// refused endpoint address).
	Warning bool `json:"warning,omitempty" yaml:"warning,omitempty"`
}

// String formats the problem as "ns/name: Reason: message".
func (p Problem) String() string {
	s := p.Namespace + "/" + p.Name + ": " + p.Reason + ": " + p.Message
	if p.Warning {
		s = "warning: " + s
	}
	return s
}

// Problem reasons.
const (
	ReasonHostAlreadyClaimed       = "HostAlreadyClaimed"
	ReasonInvalidHost              = "InvalidHost"
	ReasonExtendedValidationFailed = "ExtendedValidationFailed"
	ReasonRouteNotAdmitted         = "RouteNotAdmitted"
	ReasonInvalidAnnotation        = "InvalidAnnotation"
	ReasonInvalidRoute             = "InvalidRoute"
	ReasonEndpointRejected         = "EndpointRejected"
	// ReasonCertificateNotServed (a warning): an older Route on the same host supplies the certificate.
	ReasonCertificateNotServed = "CertificateNotServed"
	// ReasonNotImplemented (a warning): the Route sets a field haroute does not implement and ignores.
	ReasonNotImplemented = "NotImplemented"
	// ReasonExternalCertificateIgnored (a warning): spec.tls.externalCertificate is set, but external
	// certificates are off (ROUTER_ENABLE_EXTERNAL_CERTIFICATE=false); the default certificate serves.
	ReasonExternalCertificateIgnored = "ExternalCertificateIgnored"
	// ReasonRefusedByHAProxy: HAProxy refused the configuration the Route produced (its certificate,
	// a line of its backend); the others are served without it.
	ReasonRefusedByHAProxy = "RefusedByHAProxy"
)

// DeepCopy returns a copy of in that shares no object with it.
func (in Input) DeepCopy() Input {
	var out Input
	for _, r := range in.Routes {
		out.Routes = append(out.Routes, r.DeepCopy())
	}
	for _, s := range in.Services {
		out.Services = append(out.Services, s.DeepCopy())
	}
	for _, s := range in.EndpointSlices {
		out.EndpointSlices = append(out.EndpointSlices, s.DeepCopy())
	}
	for _, n := range in.Namespaces {
		out.Namespaces = append(out.Namespaces, n.DeepCopy())
	}
	for _, s := range in.Secrets {
		out.Secrets = append(out.Secrets, s.DeepCopy())
	}
	return out
}
