package mapping

import (
	"fmt"
	"strings"

	routev1 "github.com/openshift/api/route/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/haroute/haroute/mapping/model"
)

// maxPathLength bounds spec.path; longer paths are rejected rather than truncated.
const maxPathLength = 2048

// hostSpec is a Route's effective host: an exact host name, or "*.<domain>" for a wildcard Route.
type hostSpec struct {
	host     string // exact host or "*.domain"
	wildcard bool
	domain   string // for wildcard Routes: the domain under the "*"; for exact hosts: the parent domain ("" for a single label)
}

// routeHost works out the effective host of a Route as OpenShift does: spec.host; else
// spec.subdomain under the router's domain (ROUTER_DOMAIN); then the ROUTER_SUBDOMAIN template when
// there is still no host, or always with ROUTER_OVERRIDE_HOSTNAME, or for a host under one of
// ROUTER_OVERRIDE_DOMAINS. It applies the wildcard policy and checks the host against the allowed and
// denied domain lists.
//
// Like OpenShift's router (its host validation wants a DNS-1123 subdomain as written), it never
// lower-cases a host: one with upper-case letters is rejected, whichever of the above it comes from.
func routeHost(r *routev1.Route, opts Options) (hostSpec, *rejection) {
	host := r.Spec.Host
	if host == "" && r.Spec.Subdomain != "" && opts.Domain != "" {
		host = r.Spec.Subdomain + "." + opts.Domain
	}
	if opts.Subdomain != "" && (host == "" || opts.OverrideHostname || inDomains(host, opts.OverrideDomains)) {
		host = strings.NewReplacer("${name}", r.Name, "${namespace}", r.Namespace).Replace(opts.Subdomain)
	}
	if host == "" {
		if r.Spec.Subdomain != "" {
			return hostSpec{}, reject(ReasonInvalidHost, "no host, a subdomain without ROUTER_DOMAIN, and no ROUTER_SUBDOMAIN")
		}
		return hostSpec{}, reject(ReasonInvalidHost, "no host and no ROUTER_SUBDOMAIN")
	}
	if lower := strings.ToLower(host); lower != host && strings.Trim(lower, "abcdefghijklmnopqrstuvwxyz0123456789.-*") == "" {
		return hostSpec{}, reject(ReasonInvalidHost, fmt.Sprintf("host %s has upper-case letters: a host must be written in lower case (OpenShift's router rejects it too)", quoteShort(host)))
	}

	var hs hostSpec
	switch r.Spec.WildcardPolicy {
	case "", routev1.WildcardPolicyNone:
		if strings.Contains(host, "*") {
			return hostSpec{}, reject(ReasonInvalidHost, fmt.Sprintf("host %s: a wildcard host needs wildcardPolicy Subdomain", quoteShort(host)))
		}
		if msg := hostError(host); msg != "" {
			return hostSpec{}, reject(ReasonInvalidHost, fmt.Sprintf("host %s %s", quoteShort(host), msg))
		}
		hs = hostSpec{host: host, domain: model.ParentDomain(host)}
	case routev1.WildcardPolicySubdomain:
		var domain string
		if rest, ok := strings.CutPrefix(host, "*."); ok {
			domain = rest
		} else {
			if msg := hostError(host); msg != "" {
				return hostSpec{}, reject(ReasonInvalidHost, fmt.Sprintf("host %s %s", quoteShort(host), msg))
			}
			domain = model.ParentDomain(host)
		}
		if strings.Contains(domain, "*") {
			return hostSpec{}, reject(ReasonInvalidHost, fmt.Sprintf("host %s: '*' is only allowed as the first label", quoteShort(host)))
		}
		if msg := hostError(domain); msg != "" {
			return hostSpec{}, reject(ReasonInvalidHost, fmt.Sprintf("wildcard domain %s of host %s %s", quoteShort(domain), quoteShort(host), msg))
		}
		if !strings.Contains(domain, ".") {
			return hostSpec{}, reject(ReasonInvalidHost, fmt.Sprintf("wildcard domain %s of host %s needs at least two labels", quoteShort(domain), quoteShort(host)))
		}
		if !opts.AllowWildcardRoutes {
			return hostSpec{}, reject(ReasonRouteNotAdmitted, "wildcard routes are not allowed")
		}
		hs = hostSpec{host: "*." + domain, wildcard: true, domain: domain}
	default:
		return hostSpec{}, reject(ReasonInvalidRoute, fmt.Sprintf("wildcardPolicy %s: want None or Subdomain", quoteShort(string(r.Spec.WildcardPolicy))))
	}

	if inDomains(hs.host, opts.DeniedDomains) {
		return hostSpec{}, reject(ReasonRouteNotAdmitted, "host in denied domains list")
	}
	if len(opts.AllowedDomains) > 0 && !inDomains(hs.host, opts.AllowedDomains) {
		return hostSpec{}, reject(ReasonRouteNotAdmitted, "host not in allowed domains list")
	}
	return hs, nil
}

// hostError returns why host is not a valid DNS-1123 subdomain with labels of at most 63 characters,
// or "" when it is.
func hostError(host string) string {
	if len(host) > validation.DNS1123SubdomainMaxLength {
		return fmt.Sprintf("is longer than %d characters", validation.DNS1123SubdomainMaxLength)
	}
	if errs := validation.IsDNS1123Subdomain(host); len(errs) > 0 {
		return "is not a valid DNS-1123 subdomain (lower-case letters, digits, '-' and '.'; each label starts and ends with a letter or digit)"
	}
	for _, label := range strings.Split(host, ".") {
		if len(label) > validation.DNS1123LabelMaxLength {
			return fmt.Sprintf("has a label longer than %d characters", validation.DNS1123LabelMaxLength)
		}
	}
	return ""
}

// inDomains reports whether host equals one of the domains or lies below one.
func inDomains(host string, domains []string) bool {
	for _, d := range domains {
		d = strings.ToLower(d)
		if d != "" && (host == d || strings.HasSuffix(host, "."+d)) {
			return true
		}
	}
	return false
}

// pathError returns why p is not an acceptable Route path, or "" when it is. Paths are empty or start
// with "/", and hold only RFC 3986 path characters, so they can stand in map files as they are (no
// whitespace, double quote, '\', '#' or '?'); a single quote is one of them, written in configs the
// way OpenShift writes it.
func pathError(p string) string {
	if p == "" {
		return ""
	}
	if p[0] != '/' {
		return "must start with \"/\""
	}
	if len(p) > maxPathLength {
		return fmt.Sprintf("is longer than %d characters", maxPathLength)
	}
	for i := 0; i < len(p); i++ {
		if !isPathChar(p[i]) {
			return "contains " + describeByte(p[i]) + ", which is not allowed in a path"
		}
	}
	return ""
}

// describeByte names a byte for a message: the quoted character when printable, else its value.
func describeByte(c byte) string {
	if c > ' ' && c < 0x7f {
		return fmt.Sprintf("the character %q", c)
	}
	return fmt.Sprintf("the byte 0x%02x", c)
}

func isPathChar(c byte) bool {
	return isAlnumByte(c) || strings.IndexByte("-._~!$&'()*+,;=:@/%", c) >= 0
}

func isAlnumByte(c byte) bool {
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
}

// routeKeyPath is the path as conflicts see it: "" and "/" are the same.
func routeKeyPath(p string) string {
	if p == "/" {
		return ""
	}
	return p
}
