package haproxy

import (
	"testing"

	"github.com/haroute/haroute/mapping/layout"
	"github.com/haroute/haroute/mapping/model"
	"github.com/haroute/haroute/mapping/render"
)

// TestBlame: HAProxy's words name a Route by its certificate or CA file, or by a line inside its
// backend; a line outside any Route's backend, or a file of no Route, names none.
func TestBlame(t *testing.T) {
	next := &model.Config{Routes: []model.RouteInfo{
		{Namespace: "shop", Name: "web", Backend: "be_http:shop:web"},
		{Namespace: "shop", Name: "api", Backend: "be_edge_http:shop:api", Certificate: "shop_api.pem"},
		{Namespace: "blog", Name: "www", Backend: "be_http:shop:web"},
	}}
	cfg := "global\n  maxconn 100\n\nbackend be_http:shop:web\n  mode http\n  bad_keyword 1\n\nbackend openshift_default\n  mode http\n"
	files := []render.File{{Path: layout.Config, Data: []byte(cfg)}}
	cases := []struct {
		text string
		want []string
	}{
		{"[ALERT] unable to load SSL private key from PEM file '/h/router/certs/shop_api.pem'.", []string{"shop/api"}},
		{"[ALERT] cannot load CA file '/h/router/cacerts/shop_api.pem'", []string{"shop/api"}},
		{"[ALERT] parsing [/h/conf/haproxy.cfg:6] : unknown keyword 'bad_keyword' in 'backend' section", []string{"shop/web", "blog/www"}},
		{"[ALERT] parsing [/h/conf/haproxy.cfg:2] : global trouble", nil},
		{"[ALERT] parsing [/h/conf/haproxy.cfg:9] : default backend trouble", nil},
		{"[ALERT] '/h/router/certs/other_route.pem' missing", nil},
		{"[ALERT] '/h/conf/default_pub_keys.pem' unreadable", nil},
	}
	for _, c := range cases {
		var got []string
		for _, r := range blame(c.text, files, next) {
			got = append(got, r.Namespace+"/"+r.Name)
			if r.Message == "" {
				t.Errorf("%q: %s/%s without HAProxy's line", c.text, r.Namespace, r.Name)
			}
		}
		if len(got) != len(c.want) || (len(got) > 0 && (got[0] != c.want[0] || got[len(got)-1] != c.want[len(c.want)-1])) {
			t.Errorf("blame(%q) = %v, want %v", c.text, got, c.want)
		}
	}
}
