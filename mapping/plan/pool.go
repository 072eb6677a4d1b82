package plan

import (
	"cmp"
	"sort"

	"github.com/haroute/haroute/mapping/model"
)

// kinds lists the backend kinds in pool order.
var kinds = []model.BackendKind{model.KindHTTP, model.KindEdge, model.KindReencrypt, model.KindPassthrough}

// balanceVariants returns the balance algorithms the pool holds spares of for a kind: the settings'
// default for the kind, and roundrobin (the default of Routes split across Services) when it differs.
// The result is sorted.
func balanceVariants(s *model.Settings, k model.BackendKind) []string {
	def := s.LoadBalanceAlgorithm
	if k == model.KindPassthrough {
		def = s.TCPBalanceScheme
	}
	if def == "roundrobin" {
		return []string{def}
	}
	out := []string{def, "roundrobin"}
	sort.Strings(out)
	return out
}

// isVariant reports whether balance is one of the pool's variants for the kind.
func isVariant(s *model.Settings, k model.BackendKind, balance string) bool {
	for _, v := range balanceVariants(s, k) {
		if v == balance {
			return true
		}
	}
	return false
}

// spareTemplate returns the options Translate gives a Route of the kind without annotations and with
// the given balance, under the backend name name (which fixes the default cookie). TLS is left nil:
// the caller decides (a claim uses the Route's; a backend without a Route has none).
func spareTemplate(s *model.Settings, k model.BackendKind, balance, name string) model.Backend {
	b := model.Backend{
		Name:          name,
		Kind:          k,
		Mode:          k.Mode(),
		Balance:       balance,
		CheckInterval: s.CheckInterval,
	}
	if k != model.KindPassthrough {
		b.Cookie = &model.Cookie{Name: cmp.Or(s.CookieName, model.DefaultCookieName(name)), Key: model.DefaultCookieKey(name)}
		b.ForwardedHeaders = s.ForwardedHeaders
	}
	return b
}

// freeSpare returns spare number i of the kind and balance, unclaimed and without servers.
func freeSpare(s *model.Settings, k model.BackendKind, balance string, i int) model.Backend {
	b := spareTemplate(s, k, balance, model.SpareBackendName(k, balance, i))
	b.Spare = true
	b.Servers = []model.Server{}
	return b
}

// WithPool returns desired as a reload installs it: every backend under its own name, no retired
// backends, and a full spare pool (Settings.SparePoolSize per kind and balance variant); see
// WithPoolSizes.
func WithPool(desired *model.Config) *model.Config { return WithPoolSizes(desired, nil) }

// PoolKey names one pool of spares: a backend kind and a balance algorithm.
type PoolKey struct {
	Kind    model.BackendKind
	Balance string
}

func (k PoolKey) String() string { return string(k.Kind) + "/" + k.Balance }

// PoolSizes gives the number of free spares a reload installs per pool; nil, or a result below
// Settings.SparePoolSize, means Settings.SparePoolSize.
type PoolSizes func(PoolKey) int

// size returns the pool size of k under s.
func (f PoolSizes) size(s *model.Settings, k PoolKey) int {
	n := max(0, s.SparePoolSize)
	if f != nil {
		n = max(n, f(k))
	}
	return n
}

// WithPoolSizes returns desired as a reload installs it: every backend under its own name, no retired
// backends, and a full spare pool.
//
// For every kind (http, edge, reencrypt, passthrough) and balance variant (the kind's settings default,
// and roundrobin when that differs) the pool holds sizes(kind, balance) free spares (at least
// Settings.SparePoolSize) named model.SpareBackendName(kind, balance, i), with the options Translate
// gives an annotation-free Route of that kind and balance, the default cookie of the spare's own
// name, no servers and no Route. Reencrypt spares have no TLS settings until claimed. The result
// shares read-only data (backends, servers, PEM strings) with desired; desired is not modified.
func WithPoolSizes(desired *model.Config, sizes PoolSizes) *model.Config {
	if desired == nil {
		return nil
	}
	out := *desired
	s := &desired.Settings
	out.Backends = make([]*model.Backend, 0, len(desired.Backends)+max(0, s.SparePoolSize)*len(kinds)*2)
	out.Backends = append(out.Backends, desired.Backends...)
	for _, k := range kinds {
		for _, balance := range balanceVariants(s, k) {
			for i := range sizes.size(s, PoolKey{k, balance}) {
				spare := freeSpare(s, k, balance, i)
				out.Backends = append(out.Backends, &spare)
			}
		}
	}
	sortBackends(out.Backends)
	return &out
}

// FreeSpares counts the free (unclaimed) spares of each pool of cfg.
func FreeSpares(cfg *model.Config) map[PoolKey]int {
	out := map[PoolKey]int{}
	for i := range cfg.Backends {
		if b := cfg.Backends[i]; b.Spare && b.Route == "" {
			out[PoolKey{b.Kind, b.Balance}]++
		}
	}
	return out
}

// Pools lists the pools a config's settings call for (every kind and balance variant), in order.
func Pools(s *model.Settings) []PoolKey {
	var out []PoolKey
	for _, k := range kinds {
		for _, balance := range balanceVariants(s, k) {
			out = append(out, PoolKey{k, balance})
		}
	}
	return out
}

func sortBackends(bs []*model.Backend) {
	sort.Slice(bs, func(i, j int) bool { return bs[i].Name < bs[j].Name })
}
