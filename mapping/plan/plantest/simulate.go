// Package plantest holds helpers for tests of plan and its callers; not for production code.
//
// Simulate replays a plan's ops the way HAProxy would, and RuntimeView reduces a configuration to
// what the runtime path owns, so that a test can check that a plan's ops bring the applied state to
// the plan's Next.
package plantest

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/haroute/haroute/mapping/model"
	"github.com/haroute/haroute/mapping/plan"
)

// Simulate applies ops to a copy of applied the way HAProxy would, for the equivalence property
// RuntimeView(Simulate(applied, p.Ops)) == RuntimeView(p.Next) of every runtime plan
// p = plan.Compute(applied, desired). It returns an error where HAProxy would refuse an op, and where
// our use of HAProxy forbids one:
//
//   - AddServer adds the server in maint with the weight of its spec and its checks off; the backend
//     must exist and the server must not; a CA file it verifies with must be loaded. SetServerState,
//     SetServerWeight, EnableHealth and DisableHealth need the server (and set its HealthCheck);
//     DelServer needs it in maint.
//   - AddMapEntry of an existing key is an error (haroute never adds duplicates, although HAProxy
//     would); SetMapEntry and DelMapEntry need the key; every map op needs the map.
//   - Certificates are kept as a store (name → PEM) and a crt-list (name → SNI filter and ALPN):
//     SetCertificate New needs an absent name, otherwise a present one; AddCrtListEntry needs the
//     certificate stored and not listed; DelCrtListEntry needs it listed; DelCertificate needs it
//     stored and no longer listed. In the result every stored certificate must be listed and every
//     listed one stored (the model cannot express anything else).
//   - SetCAFile New needs an absent name, otherwise a present one; DelCAFile needs it present and
//     used by no server.
//   - SetListenerFile replaces a listener file that is there (HAProxy only replaces files its
//     configuration names).
//   - AddBackend adds an unpublished backend without servers under a new name; DelBackend needs it
//     unpublished and without servers; every backend must be published at the end (backendOp).
//
// applied is not modified. The result is sorted as model.Validate wants.
func Simulate(applied *model.Config, ops []plan.Op) (*model.Config, error) {
	if applied == nil {
		return nil, errors.New("simulate: no applied config")
	}
	s := newSimState(applied)
	for i, op := range ops {
		if err := s.apply(op); err != nil {
			return nil, fmt.Errorf("simulate: op %d (%s): %w", i, op, err)
		}
	}
	if err := s.finish(); err != nil {
		return nil, fmt.Errorf("simulate: %w", err)
	}
	return s.cfg, nil
}

// crtLine is a certificate's crt-list line.
type crtLine struct {
	sni  []string
	alpn string
}

// simState is the state Simulate works on.
type simState struct {
	cfg      *model.Config
	store    map[string]string  // certificate name → PEM
	list     map[string]crtLine // certificate name → crt-list line
	cas      map[string]string  // CA file name → PEM
	serverCA map[string]string  // "backend/server" → CA file the server verifies with
	// unpublished holds the backends added or unpublished at runtime and not published since.
	unpublished map[string]bool
}

func newSimState(applied *model.Config) *simState {
	s := &simState{
		cfg:      applied.Clone(),
		store:    map[string]string{},
		list:     map[string]crtLine{},
		cas:      map[string]string{},
		serverCA: map[string]string{},

		unpublished: map[string]bool{},
	}
	for _, c := range s.cfg.Certificates {
		s.store[c.Name] = c.PEM
		s.list[c.Name] = crtLine{sni: c.SNI, alpn: c.ALPN}
	}
	for _, ca := range s.cfg.CAFiles {
		s.cas[ca.Name] = ca.PEM
	}
	for _, b := range s.cfg.Backends {
		if b.TLS == nil {
			continue
		}
		for _, srv := range b.Servers {
			s.serverCA[b.Name+"/"+srv.Name] = b.TLS.CAFile
		}
	}
	return s
}

// server returns the backend and the index of the server in it (-1 when absent).
func (s *simState) server(backend, server string) (*model.Backend, int, error) {
	b := s.cfg.Backend(backend)
	if b == nil {
		return nil, -1, fmt.Errorf("no such backend %q", backend)
	}
	i := sort.Search(len(b.Servers), func(i int) bool { return b.Servers[i].Name >= server })
	if i < len(b.Servers) && b.Servers[i].Name == server {
		return b, i, nil
	}
	return b, -1, nil
}

// existing returns the server, or an error when it is absent.
func (s *simState) existing(backend, server string) (*model.Server, error) {
	b, i, err := s.server(backend, server)
	if err != nil {
		return nil, err
	}
	if i < 0 {
		return nil, fmt.Errorf("no such server %s/%s", backend, server)
	}
	return &b.Servers[i], nil
}

func (s *simState) apply(op plan.Op) error {
	switch o := op.(type) {
	case plan.AddServer:
		return s.addServer(o)
	case plan.DelServer:
		b, i, err := s.server(o.Backend, o.Server)
		if err != nil {
			return err
		}
		if i < 0 {
			return fmt.Errorf("no such server %s/%s", o.Backend, o.Server)
		}
		if b.Servers[i].State != model.StateMaint {
			return fmt.Errorf("server %s/%s is not in maintenance", o.Backend, o.Server)
		}
		b.Servers = slices.Delete(b.Servers, i, i+1)
		delete(s.serverCA, o.Backend+"/"+o.Server)
	case plan.SetServerWeight:
		srv, err := s.existing(o.Backend, o.Server)
		if err != nil {
			return err
		}
		if o.Weight < 0 || o.Weight > 256 {
			return fmt.Errorf("weight %d out of 0-256", o.Weight)
		}
		srv.Weight = o.Weight
	case plan.SetServerState:
		srv, err := s.existing(o.Backend, o.Server)
		if err != nil {
			return err
		}
		switch o.State {
		case model.StateReady, model.StateDrain, model.StateMaint:
		default:
			return fmt.Errorf("invalid state %q", o.State)
		}
		srv.State = o.State
	case plan.EnableHealth:
		srv, err := s.existing(o.Backend, o.Server)
		if err != nil {
			return err
		}
		srv.HealthCheck = true
	case plan.DisableHealth:
		srv, err := s.existing(o.Backend, o.Server)
		if err != nil {
			return err
		}
		srv.HealthCheck = false
	case plan.AddMapEntry, plan.SetMapEntry, plan.DelMapEntry, plan.ReplaceMap:
		return s.mapOp(op)
	case plan.AddBackend, plan.PublishBackend, plan.UnpublishBackend, plan.DelBackend:
		return s.backendOp(op)
	default:
		return s.tlsOp(op)
	}
	return nil
}

func (s *simState) addServer(o plan.AddServer) error {
	b, i, err := s.server(o.Backend.Name, o.Server.Name)
	if err != nil {
		return err
	}
	if i >= 0 {
		return fmt.Errorf("server %s/%s already exists", b.Name, o.Server.Name)
	}
	srv := o.Server
	if !model.ValidName(srv.Name) {
		return fmt.Errorf("invalid server name %q", srv.Name)
	}
	if srv.Weight < 0 || srv.Weight > 256 {
		return fmt.Errorf("weight %d out of 0-256", srv.Weight)
	}
	if o.Backend.Kind == model.KindReencrypt && o.Backend.TLS == nil {
		return errors.New("a reencrypt server needs TLS settings (a CA file to verify with)")
	}
	if o.Backend.TLS != nil {
		ca := o.Backend.TLS.CAFile
		if _, ok := s.cas[ca]; !ok && !strings.HasPrefix(ca, "/") {
			return fmt.Errorf("CA file %q is not loaded", ca)
		}
		s.serverCA[b.Name+"/"+srv.Name] = ca
	}
	srv.State = model.StateMaint
	srv.HealthCheck = false // a runtime server's checks stay off until enable health
	i = sort.Search(len(b.Servers), func(i int) bool { return b.Servers[i].Name >= srv.Name })
	b.Servers = slices.Insert(b.Servers, i, srv)
	return nil
}

func (s *simState) mapOp(op plan.Op) error {
	var name string
	switch o := op.(type) {
	case plan.AddMapEntry:
		name = o.Map
	case plan.SetMapEntry:
		name = o.Map
	case plan.DelMapEntry:
		name = o.Map
	case plan.ReplaceMap:
		name = o.Map
	}
	m := s.cfg.Map(name)
	if m == nil {
		return fmt.Errorf("unknown map %q", name)
	}
	find := func(key string) (int, bool) {
		i := sort.Search(len(m.Entries), func(i int) bool { return m.Entries[i].Key >= key })
		return i, i < len(m.Entries) && m.Entries[i].Key == key
	}
	switch o := op.(type) {
	case plan.AddMapEntry:
		i, found := find(o.Key)
		if found {
			return fmt.Errorf("map %s: key %q already present", name, o.Key)
		}
		if !model.ValidMapToken(o.Key) || !model.ValidMapToken(o.Value) {
			return fmt.Errorf("map %s: invalid entry %q %q", name, o.Key, o.Value)
		}
		m.Entries = slices.Insert(m.Entries, i, model.MapEntry{Key: o.Key, Value: o.Value})
	case plan.SetMapEntry:
		i, found := find(o.Key)
		if !found {
			return fmt.Errorf("map %s: key %q not found", name, o.Key)
		}
		if !model.ValidMapToken(o.Value) {
			return fmt.Errorf("map %s: invalid value %q", name, o.Value)
		}
		m.Entries[i].Value = o.Value
	case plan.DelMapEntry:
		i, found := find(o.Key)
		if !found {
			return fmt.Errorf("map %s: key %q not found", name, o.Key)
		}
		m.Entries = slices.Delete(m.Entries, i, i+1)
	case plan.ReplaceMap:
		entries := slices.Clone(o.Entries)
		sort.Slice(entries, func(i, j int) bool { return entries[i].Key < entries[j].Key })
		for i, e := range entries {
			if i > 0 && entries[i-1].Key == e.Key {
				return fmt.Errorf("map %s: duplicate key %q", name, e.Key)
			}
			if !model.ValidMapToken(e.Key) || !model.ValidMapToken(e.Value) {
				return fmt.Errorf("map %s: invalid entry %q %q", name, e.Key, e.Value)
			}
		}
		m.Entries = entries
	}
	return nil
}

func (s *simState) tlsOp(op plan.Op) error {
	switch o := op.(type) {
	case plan.SetCertificate:
		_, ok := s.store[o.Cert.Name]
		if o.New && ok {
			return fmt.Errorf("certificate %q already exists", o.Cert.Name)
		}
		if !o.New && !ok {
			return fmt.Errorf("no certificate %q", o.Cert.Name)
		}
		if o.Cert.PEM == "" || model.HasBlankLine(o.Cert.PEM) {
			return fmt.Errorf("certificate %q: empty PEM or PEM with a blank line", o.Cert.Name)
		}
		s.store[o.Cert.Name] = o.Cert.PEM
	case plan.AddCrtListEntry:
		if _, ok := s.store[o.Cert.Name]; !ok {
			return fmt.Errorf("no certificate %q", o.Cert.Name)
		}
		if _, ok := s.list[o.Cert.Name]; ok {
			return fmt.Errorf("certificate %q is already in the crt-list", o.Cert.Name)
		}
		s.list[o.Cert.Name] = crtLine{sni: slices.Clone(o.Cert.SNI), alpn: o.Cert.ALPN}
	case plan.DelCrtListEntry:
		if _, ok := s.list[o.Cert]; !ok {
			return fmt.Errorf("certificate %q is not in the crt-list", o.Cert)
		}
		delete(s.list, o.Cert)
	case plan.DelCertificate:
		if _, ok := s.store[o.Cert]; !ok {
			return fmt.Errorf("no certificate %q", o.Cert)
		}
		if _, ok := s.list[o.Cert]; ok {
			return fmt.Errorf("certificate %q is still in the crt-list", o.Cert)
		}
		delete(s.store, o.Cert)
	case plan.SetCAFile:
		_, ok := s.cas[o.CA.Name]
		if o.New && ok {
			return fmt.Errorf("CA file %q already exists", o.CA.Name)
		}
		if !o.New && !ok {
			return fmt.Errorf("no CA file %q", o.CA.Name)
		}
		if o.CA.PEM == "" || model.HasBlankLine(o.CA.PEM) {
			return fmt.Errorf("CA file %q: empty PEM or PEM with a blank line", o.CA.Name)
		}
		s.cas[o.CA.Name] = o.CA.PEM
	case plan.DelCAFile:
		if _, ok := s.cas[o.CA]; !ok {
			return fmt.Errorf("no CA file %q", o.CA)
		}
		for srv, ca := range s.serverCA {
			if ca == o.CA {
				return fmt.Errorf("CA file %q is used by server %s", o.CA, srv)
			}
		}
		delete(s.cas, o.CA)
	case plan.SetListenerFile:
		l := &s.cfg.Listener
		dst := map[plan.ListenerFile]*string{
			plan.DefaultCertificateFile: &l.DefaultCertificate, plan.ClientCRLFile: &l.ClientCRL,
		}[o.File]
		switch {
		case dst == nil:
			return fmt.Errorf("unknown listener file %q", o.File)
		case *dst == "":
			return fmt.Errorf("%s: HAProxy has none to replace", o.File)
		case o.PEM == "" || model.HasBlankLine(o.PEM):
			return fmt.Errorf("%s: empty PEM or PEM with a blank line", o.File)
		}
		*dst = o.PEM
	default:
		return fmt.Errorf("unknown op %T", op)
	}
	return nil
}

// backendOp applies a dynamic-backend op (HAProxy 3.4+): AddBackend needs a new name and a backend
// without servers (it starts unpublished); PublishBackend and UnpublishBackend need the backend;
// DelBackend needs it unpublished and without servers.
func (s *simState) backendOp(op plan.Op) error {
	switch o := op.(type) {
	case plan.AddBackend:
		if s.cfg.Backend(o.Backend.Name) != nil {
			return fmt.Errorf("backend %q exists", o.Backend.Name)
		}
		if len(o.Backend.Servers) > 0 {
			return fmt.Errorf("backend %q: added with servers", o.Backend.Name)
		}
		b := o.Backend
		b.Servers = []model.Server{}
		s.cfg.Backends = append(s.cfg.Backends, &b)
		sort.Slice(s.cfg.Backends, func(i, j int) bool { return s.cfg.Backends[i].Name < s.cfg.Backends[j].Name })
		s.unpublished[b.Name] = true
	case plan.PublishBackend:
		if s.cfg.Backend(o.Backend) == nil {
			return fmt.Errorf("no such backend %q", o.Backend)
		}
		delete(s.unpublished, o.Backend)
	case plan.UnpublishBackend:
		if s.cfg.Backend(o.Backend) == nil {
			return fmt.Errorf("no such backend %q", o.Backend)
		}
		s.unpublished[o.Backend] = true
	case plan.DelBackend:
		b := s.cfg.Backend(o.Backend)
		switch {
		case b == nil:
			return fmt.Errorf("no such backend %q", o.Backend)
		case !s.unpublished[o.Backend]:
			return fmt.Errorf("backend %q is published", o.Backend)
		case len(b.Servers) > 0:
			return fmt.Errorf("backend %q still has servers", o.Backend)
		}
		s.cfg.Backends = slices.DeleteFunc(s.cfg.Backends, func(x *model.Backend) bool { return x.Name == o.Backend })
		delete(s.unpublished, o.Backend)
	}
	return nil
}

// finish rebuilds the certificates and CA files from the store, the crt-list and the CA files.
// Every backend must be published by then.
func (s *simState) finish() error {
	var errs []error
	for name := range s.unpublished {
		errs = append(errs, fmt.Errorf("backend %q is left unpublished", name))
	}
	certs := make([]model.Certificate, 0, len(s.store))
	for name, pem := range s.store {
		line, ok := s.list[name]
		if !ok {
			errs = append(errs, fmt.Errorf("certificate %q is stored but not in the crt-list", name))
			continue
		}
		certs = append(certs, model.Certificate{Name: name, PEM: pem, SNI: line.sni, ALPN: line.alpn})
	}
	for name := range s.list {
		if _, ok := s.store[name]; !ok {
			errs = append(errs, fmt.Errorf("certificate %q is in the crt-list but not stored", name))
		}
	}
	sort.Slice(certs, func(i, j int) bool { return certs[i].Name < certs[j].Name })
	cas := make([]model.CAFile, 0, len(s.cas))
	for name, pem := range s.cas {
		cas = append(cas, model.CAFile{Name: name, PEM: pem})
	}
	sort.Slice(cas, func(i, j int) bool { return cas[i].Name < cas[j].Name })
	s.cfg.Certificates, s.cfg.CAFiles = certs, cas
	return errors.Join(errs...)
}

// RuntimeView returns cfg reduced to what the runtime path owns, for comparing states: every backend
// by name with its servers (name, address, port, weight, state, verified host; not the Service, which
// is bookkeeping), the map files, the certificates (with their crt-list SNI filter and ALPN), the CA
// files and the listener files. Empty collections are empty slices, never nil, so equal views are
// reflect.DeepEqual.
func RuntimeView(cfg *model.Config) *model.Config {
	out := &model.Config{
		Listener:     cfg.Listener,
		Backends:     make([]*model.Backend, len(cfg.Backends)),
		Maps:         make([]model.MapFile, len(cfg.Maps)),
		Certificates: make([]model.Certificate, len(cfg.Certificates)),
		CAFiles:      append([]model.CAFile{}, cfg.CAFiles...),
	}
	for i, b := range cfg.Backends {
		servers := make([]model.Server, len(b.Servers))
		for j, srv := range b.Servers {
			srv.Service = ""
			servers[j] = srv
		}
		out.Backends[i] = &model.Backend{Name: b.Name, Servers: servers}
	}
	for i, m := range cfg.Maps {
		out.Maps[i] = model.MapFile{Name: m.Name, Entries: append([]model.MapEntry{}, m.Entries...)}
	}
	for i, c := range cfg.Certificates {
		c.SNI = append([]string{}, c.SNI...)
		out.Certificates[i] = c
	}
	return out
}
