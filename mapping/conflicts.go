package mapping

import "fmt"

// claims tracks what the Routes admitted so far own. Routes are admitted oldest first, so the first
// claim on a host and path wins ("oldest wins"), as in OpenShift.
//
// Namespace ownership (ROUTER_DISABLE_NAMESPACE_OWNERSHIP_CHECK unset): the namespace of the oldest
// admitted Route for a host owns the host, whatever the path; a wildcard Route's namespace also owns
// the exact hosts one label below its domain, and a wildcard Route is refused when an exact host of its
// domain is already owned by another namespace.
type claims struct {
	ownership bool
	seq       int
	keys      map[string]owner            // host + " " + route key path → the Route serving it
	hosts     map[string]owner            // effective host (exact or "*.domain") → oldest admitted Route
	exact     map[string]map[string]owner // domain → namespace → oldest admitted exact-host Route below it
}

// owner names an admitted Route; seq is its admission order.
type owner struct {
	namespace string
	name      string
	seq       int
}

func (o owner) String() string { return o.namespace + "/" + o.name }

// newClaims returns empty claims sized for about n Routes.
func newClaims(ownership bool, n int) *claims {
	return &claims{
		ownership: ownership,
		keys:      make(map[string]owner, n),
		hosts:     make(map[string]owner, n),
		exact:     map[string]map[string]owner{},
	}
}

// reset empties the claims, keeping their memory.
func (c *claims) reset() {
	c.seq = 0
	clear(c.keys)
	clear(c.hosts)
	clear(c.exact)
}

// conflictKey is the host and path a Route claims: host + " " + route key path.
func conflictKey(host, path string) string { return host + " " + routeKeyPath(path) }

// check returns why a may not be admitted next to the Routes claimed before it, or nil.
func (c *claims) check(a *admission) *rejection {
	if o, ok := c.keys[a.claimKey]; ok {
		return reject(ReasonHostAlreadyClaimed, fmt.Sprintf("route %s already serves host %s path %q", o, a.host, a.path))
	}
	if !c.ownership {
		return nil
	}
	if o, ok := c.hosts[a.host]; ok && o.namespace != a.namespace {
		return reject(ReasonHostAlreadyClaimed, fmt.Sprintf("host %s is owned by namespace %s (route %s)", a.host, o.namespace, o))
	}
	if a.domain == "" {
		return nil
	}
	if !a.wildcard {
		if o, ok := c.hosts["*."+a.domain]; ok && o.namespace != a.namespace {
			return reject(ReasonHostAlreadyClaimed, fmt.Sprintf("host %s is in wildcard domain *.%s owned by namespace %s (route %s)", a.host, a.domain, o.namespace, o))
		}
		return nil
	}
	var first *owner
	for ns, o := range c.exact[a.domain] {
		if ns != a.namespace && (first == nil || o.seq < first.seq) {
			o := o
			first = &o
		}
	}
	if first != nil {
		return reject(ReasonHostAlreadyClaimed, fmt.Sprintf("wildcard domain %s has hosts owned by namespace %s (route %s)", a.host, first.namespace, first))
	}
	return nil
}

// claim records an admitted Route.
func (c *claims) claim(a *admission) {
	o := owner{namespace: a.namespace, name: a.name, seq: c.seq}
	c.seq++
	c.keys[a.claimKey] = o
	if _, ok := c.hosts[a.host]; !ok {
		c.hosts[a.host] = o
	}
	if !a.wildcard && a.domain != "" {
		m := c.exact[a.domain]
		if m == nil {
			m = map[string]owner{}
			c.exact[a.domain] = m
		}
		if _, ok := m[a.namespace]; !ok {
			m[a.namespace] = o
		}
	}
}
