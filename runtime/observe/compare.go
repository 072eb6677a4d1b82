package observe

import (
	"cmp"
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/haroute/haroute/mapping/model"
	"github.com/haroute/haroute/mapping/render"
)

// DriftKind classifies one difference between the applied and the observed state.
type DriftKind string

// Drift kinds.
const (
	// MissingServer: an applied server HAProxy does not have. Subject "<backend>/<server>".
	MissingServer DriftKind = "MissingServer"
	// ExtraServer: a live server the applied state does not have.
	ExtraServer DriftKind = "ExtraServer"
	// ServerWeight: the server's user weight differs.
	ServerWeight DriftKind = "ServerWeight"
	// ServerState: the server's administrative state (ready, drain, maint) differs.
	ServerState DriftKind = "ServerState"
	// ServerAddr: the server's address or port differs ("<addr>:<port>").
	ServerAddr DriftKind = "ServerAddr"
	// ServerHealthCheck: the server's health checks run where the applied state has them off, or
	// the other way round ("on"/"off"): after a start, HAProxy runs every configured check.
	ServerHealthCheck DriftKind = "ServerHealthCheck"
	// ServerID: the server's id differs (someone re-added it by hand): it places the server on the
	// consistent-hash ring, so the server is re-added with its own.
	ServerID DriftKind = "ServerID"
	// MissingMapEntry: an applied key the live map lacks. Subject "<map> <key>".
	MissingMapEntry DriftKind = "MissingMapEntry"
	// ExtraMapEntry: a live key the applied map lacks, or a key the live map holds more than once.
	ExtraMapEntry DriftKind = "ExtraMapEntry"
	// MapValue: the key's value differs.
	MapValue DriftKind = "MapValue"
	// Certificate: the live certificate is not the applied one (SHA-1 of the leaf). Subject: its name.
	Certificate DriftKind = "Certificate"
	// CrtList: the certificate's crt-list line is missing, extra, or has other SNI filters or ALPN.
	CrtList DriftKind = "CrtList"
	// CAFile: a CA file servers verify with is missing, extra, or differs.
	CAFile DriftKind = "CAFile"
	// DefaultCertificate: the live default certificate is not the one of the listener files.
	DefaultCertificate DriftKind = "DefaultCertificate"
)

// Drift is one difference. Want is the applied value and Got the observed one; "" means absent.
type Drift struct {
	Kind    DriftKind `json:"kind" yaml:"kind"`
	Subject string    `json:"subject" yaml:"subject"`
	Want    string    `json:"want,omitempty" yaml:"want,omitempty"`
	Got     string    `json:"got,omitempty" yaml:"got,omitempty"`
}

func (d Drift) String() string {
	return fmt.Sprintf("%s %s: want %q, got %q", d.Kind, d.Subject, d.Want, d.Got)
}

// Compare lists the differences between applied and observed in the parts the runtime path owns
// (servers, map entries, certificates, the crt-list, CA files, the default certificate), sorted by kind, subject, want and
// got. Nil configs count as empty. Settings, frontends and backend options are not compared.
func Compare(applied, observed *model.Config) []Drift {
	if applied == nil {
		applied = &model.Config{}
	}
	if observed == nil {
		observed = &model.Config{}
	}
	var out []Drift
	out = append(out, compareBackends(applied.Backends, observed.Backends)...)
	out = append(out, compareMaps(applied.Maps, observed.Maps)...)
	out = append(out, compareCertificates(applied.Certificates, observed.Certificates)...)
	out = append(out, compareCAFiles(applied.CAFiles, observed.CAFiles)...)
	if a, o := applied.Listener.DefaultCertificate, observed.Listener.DefaultCertificate; a != o {
		out = append(out, Drift{Kind: DefaultCertificate, Subject: "default certificate", Want: pemSummary(a), Got: pemSummary(o)})
	}
	slices.SortFunc(out, func(a, b Drift) int {
		return cmp.Or(cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.Subject, b.Subject),
			cmp.Compare(a.Want, b.Want), cmp.Compare(a.Got, b.Got))
	})
	return out
}

func addrPort(s model.Server) string {
	if strings.Contains(s.Addr, ":") {
		return "[" + s.Addr + "]:" + strconv.Itoa(int(s.Port))
	}
	return s.Addr + ":" + strconv.Itoa(int(s.Port))
}

// onOff names a health-check setting.
func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

func compareBackends(want, got []*model.Backend) []Drift {
	servers := func(bs []*model.Backend) map[string]map[string]model.Server {
		out := map[string]map[string]model.Server{}
		for _, b := range bs {
			m := map[string]model.Server{}
			for _, s := range b.Servers {
				m[s.Name] = s
			}
			out[b.Name] = m
		}
		return out
	}
	w, g := servers(want), servers(got)
	var out []Drift
	for bname, ws := range w {
		gs := g[bname]
		for name, a := range ws {
			subject := bname + "/" + name
			o, ok := gs[name]
			if !ok {
				out = append(out, Drift{Kind: MissingServer, Subject: subject, Want: addrPort(a)})
				continue
			}
			if a.Addr != o.Addr || a.Port != o.Port {
				out = append(out, Drift{Kind: ServerAddr, Subject: subject, Want: addrPort(a), Got: addrPort(o)})
			}
			if a.ID != o.ID {
				out = append(out, Drift{Kind: ServerID, Subject: subject,
					Want: strconv.Itoa(int(a.ID)), Got: strconv.Itoa(int(o.ID))})
			}
			if a.Weight != o.Weight {
				out = append(out, Drift{Kind: ServerWeight, Subject: subject,
					Want: strconv.Itoa(int(a.Weight)), Got: strconv.Itoa(int(o.Weight))})
			}
			if a.State != o.State {
				out = append(out, Drift{Kind: ServerState, Subject: subject, Want: string(a.State), Got: string(o.State)})
			}
			if a.HealthCheck != o.HealthCheck {
				out = append(out, Drift{Kind: ServerHealthCheck, Subject: subject, Want: onOff(a.HealthCheck), Got: onOff(o.HealthCheck)})
			}
		}
	}
	for bname, gs := range g {
		for name, o := range gs {
			if _, ok := w[bname][name]; !ok {
				out = append(out, Drift{Kind: ExtraServer, Subject: bname + "/" + name, Got: addrPort(o)})
			}
		}
	}
	return out
}

func compareMaps(want, got []model.MapFile) []Drift {
	entries := func(ms []model.MapFile) map[string][]model.MapEntry {
		out := map[string][]model.MapEntry{}
		for _, m := range ms {
			out[m.Name] = append(out[m.Name], m.Entries...)
		}
		return out
	}
	w, g := entries(want), entries(got)
	var out []Drift
	names := map[string]bool{}
	for n := range w {
		names[n] = true
	}
	for n := range g {
		names[n] = true
	}
	for name := range names {
		wv := map[string]string{}
		for _, e := range w[name] {
			wv[e.Key] = e.Value
		}
		seen := map[string]bool{}
		for _, e := range g[name] {
			subject := name + " " + e.Key
			a, ok := wv[e.Key]
			switch {
			case !ok || seen[e.Key]:
				out = append(out, Drift{Kind: ExtraMapEntry, Subject: subject, Want: wantIf(ok && seen[e.Key], a), Got: e.Value})
			case a != e.Value:
				out = append(out, Drift{Kind: MapValue, Subject: subject, Want: a, Got: e.Value})
			}
			seen[e.Key] = true
		}
		for _, e := range w[name] {
			if !seen[e.Key] {
				out = append(out, Drift{Kind: MissingMapEntry, Subject: name + " " + e.Key, Want: e.Value})
			}
		}
	}
	return out
}

func wantIf(ok bool, v string) string {
	if ok {
		return v
	}
	return ""
}

// crtLine describes a certificate's crt-list line without its path ("[alpn …] sni…"): the tail of
// render.CrtListLine.
func crtLine(c model.Certificate) string {
	line := render.CrtListLine("", c)
	return strings.TrimPrefix(strings.TrimPrefix(line, path.Join("", c.Name)), " ")
}

// pemSummary describes a PEM for a drift: the leaf's SHA-1, or the marker Observe left.
func pemSummary(p string) string {
	if isMarker(p) {
		return strings.TrimSpace(strings.TrimPrefix(p, markerPrefix))
	}
	if fp := leafSHA1(p); fp != "" {
		return "certificate sha1 " + fp
	}
	return "no certificate"
}

// caSummary describes a CA bundle for a drift.
func caSummary(p string) string {
	if isMarker(p) {
		return strings.TrimSpace(strings.TrimPrefix(p, markerPrefix))
	}
	return "CA file with " + strconv.Itoa(countCertificates(p)) + " certificate(s)"
}

func compareCertificates(want, got []model.Certificate) []Drift {
	g := map[string]model.Certificate{}
	for _, c := range got {
		g[c.Name] = c
	}
	var out []Drift
	w := map[string]bool{}
	for _, a := range want {
		w[a.Name] = true
		o, ok := g[a.Name]
		if !ok {
			out = append(out, Drift{Kind: CrtList, Subject: a.Name, Want: crtLine(a)})
			continue
		}
		if crtLine(a) != crtLine(o) {
			out = append(out, Drift{Kind: CrtList, Subject: a.Name, Want: crtLine(a), Got: crtLine(o)})
		}
		if a.PEM != o.PEM {
			out = append(out, Drift{Kind: Certificate, Subject: a.Name, Want: pemSummary(a.PEM), Got: pemSummary(o.PEM)})
		}
	}
	for _, o := range got {
		if !w[o.Name] {
			out = append(out, Drift{Kind: CrtList, Subject: o.Name, Got: crtLine(o)})
		}
	}
	return out
}

func compareCAFiles(want, got []model.CAFile) []Drift {
	g := map[string]model.CAFile{}
	for _, c := range got {
		g[c.Name] = c
	}
	var out []Drift
	w := map[string]bool{}
	for _, a := range want {
		w[a.Name] = true
		o, ok := g[a.Name]
		switch {
		case !ok:
			out = append(out, Drift{Kind: CAFile, Subject: a.Name, Want: caSummary(a.PEM)})
		case a.PEM != o.PEM:
			out = append(out, Drift{Kind: CAFile, Subject: a.Name, Want: caSummary(a.PEM), Got: caSummary(o.PEM)})
		}
	}
	for _, o := range got {
		if !w[o.Name] {
			out = append(out, Drift{Kind: CAFile, Subject: o.Name, Got: caSummary(o.PEM)})
		}
	}
	return out
}
