package views

import (
	"slices"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/labels"

	"github.com/haroute/haroute/inspect/stateapi"
	"github.com/haroute/haroute/mapping/model"
	"github.com/haroute/haroute/runtime/socket"
)

// TestLabelSelector: -l keeps the Routes whose labels match, in every view.
func TestLabelSelector(t *testing.T) {
	snap := snapshotFixture()
	snap.State.Labels = map[string]map[string]string{"a/shop": {"tier": "front"}}
	sel, err := labels.Parse("tier=front")
	if err != nil {
		t.Fatal(err)
	}
	rows := snap.RoutesWhere(Filter{Selector: sel})
	if len(rows) != 1 || rows[0].Name != "shop" {
		t.Fatalf("tier=front: %+v", rows)
	}
	if rows := snap.RoutesWhere(Filter{Namespace: "b", Selector: sel}); len(rows) != 0 {
		t.Fatalf("namespace b and tier=front: %+v", rows)
	}
	fs := snap.Filtered([]Finding{{Object: "route a/shop"}, {Object: "route b/web"}, {Object: "haproxy"}}, Filter{Selector: sel})
	if len(fs) != 1 || fs[0].Object != "route a/shop" {
		t.Fatalf("findings: %+v", fs)
	}
}

// TestMapsView: each applied entry is compared with HAProxy's and attributed to its Route.
func TestMapsView(t *testing.T) {
	snap := snapshotFixture()
	snap.State.Applied.Maps = []model.MapFile{{Name: model.MapHTTP, Entries: []model.MapEntry{
		{Key: "=shop.example.com/api", Value: "be_edge_http:_spare:random-00"},
		{Key: "web.example.com/", Value: "be_http:b:web"},
		{Key: "gone.example.com/", Value: "be_http:b:web"},
	}}}
	snap.Maps = map[string][]socket.MapEntry{model.MapHTTP: {
		{Key: "=shop.example.com/api", Value: "be_edge_http:_spare:random-00"},
		{Key: "web.example.com/", Value: "be_http:b:other"},
		{Key: "extra.example.com/", Value: "be_http:b:web"},
	}}
	got := map[string]string{}
	for _, l := range snap.MapsWhere(Filter{}) {
		got[l.Key] = l.Status + " " + l.Namespace + "/" + l.Route
	}
	want := map[string]string{"=shop.example.com/api": "ok a/shop", "web.example.com/": "differs b/web",
		"gone.example.com/": "missing b/web", "extra.example.com/": "extra b/web"}
	if len(got) != len(want) {
		t.Fatalf("maps %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: %q, want %q", k, got[k], v)
		}
	}
}

// TestCertsView: expiry, coverage and whether HAProxy holds the file.
func TestCertsView(t *testing.T) {
	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	snap := snapshotFixture()
	snap.State.Certificates = []stateapi.CertInfo{
		{Name: "a:shop.pem", Routes: []string{"a/shop"}, SNI: []string{"shop.example.com"}, DNSNames: []string{"*.example.com"},
			NotBefore: now.AddDate(-1, 0, 0), NotAfter: now.AddDate(0, 0, 10)},
		{Name: "b:web.pem", Routes: []string{"b/web"}, SNI: []string{"web.example.com"}, DNSNames: []string{"other.example.com"},
			NotBefore: now.AddDate(-1, 0, 0), NotAfter: now.AddDate(1, 0, 0)},
		{Name: "c:old.pem", Routes: []string{"c/old"}, SNI: []string{"old.example.com"}, DNSNames: []string{"old.example.com"},
			NotBefore: now.AddDate(-2, 0, 0), NotAfter: now.AddDate(-1, 0, 0)},
	}
	snap.LoadedCerts = []string{"/x/certs/a:shop.pem", "/x/certs/c:old.pem", "/x/certs/stray.pem", "/x/conf/default_pub_keys.pem"}
	lines := snap.CertsWhere(Filter{}, now)
	status := map[string]string{}
	for _, l := range lines {
		status[l.Route] = l.Status
	}
	if status["shop"] != CertExpiring || status["web"] != CertNotLoaded || status["old"] != CertExpired {
		t.Fatalf("statuses %v", status)
	}
	if i := slices.IndexFunc(lines, func(l CertLine) bool { return l.Route == "web" }); !slices.Equal(lines[i].Uncovered, []string{"web.example.com"}) {
		t.Fatalf("web uncovered %v", lines[i].Uncovered)
	}
	codes := map[string]bool{}
	unused := 0
	snap.certFindings(now, "/x/certs", func(_, code, _, _, _ string) {
		codes[code] = true
		if code == "CERT_UNUSED" {
			unused++
		}
	})
	if unused != 1 {
		t.Errorf("%d CERT_UNUSED findings, want 1 (stray.pem; the default certificate is not a Route's)", unused)
	}
	for _, c := range []string{"CERT_EXPIRING", "CERT_NOT_LOADED", "CERT_EXPIRED", "CERT_NOT_COVERING", "CERT_UNUSED"} {
		if !codes[c] {
			t.Errorf("no %s finding: %v", c, codes)
		}
	}
}

func TestCovers(t *testing.T) {
	for _, c := range []struct {
		names []string
		host  string
		want  bool
	}{
		{[]string{"a.example.com"}, "A.example.com", true},
		{[]string{"*.example.com"}, "a.example.com", true},
		{[]string{"*.example.com"}, "a.b.example.com", false},
		{[]string{"*.example.com"}, "example.com", false},
		{nil, "a.example.com", false},
	} {
		if got := covers(c.names, c.host); got != c.want {
			t.Errorf("covers(%v, %q) = %v", c.names, c.host, got)
		}
	}
}

func TestAge(t *testing.T) {
	for d, want := range map[time.Duration]string{-time.Second: "0s", 90 * time.Second: "90s", 200 * time.Second: "3m20s",
		2 * time.Hour: "120m", 5 * time.Hour: "5h", 72 * time.Hour: "3d"} {
		if got := age(d); got != want {
			t.Errorf("age(%v) = %q, want %q", d, got, want)
		}
	}
}
