package haproxy

import (
	"bufio"
	"bytes"
	"regexp"
	"strconv"
	"strings"

	"github.com/haroute/haroute/mapping/layout"
	"github.com/haroute/haroute/mapping/model"
	"github.com/haroute/haroute/mapping/render"
)

// Refused is a Route HAProxy refused: the configuration it produced failed `haproxy -c`, a reload,
// or a runtime op, and HAProxy's own words name it.
type Refused struct {
	Namespace, Name string
	// Message is HAProxy's line that names the Route's file or section.
	Message string
}

// maxBlameMessage bounds the HAProxy line a Refused carries.
const maxBlameMessage = 400

// routeFile matches a Route's certificate or CA file in HAProxy's words: router/certs/<ns>_<name>.pem
// or router/cacerts/<ns>_<name>.pem (Kubernetes names never hold "_", so the split is unambiguous).
var routeFile = regexp.MustCompile(`router/(?:ca)?certs/([a-z0-9][-a-z0-9.]*)_([a-z0-9][-a-z0-9.]*)\.pem`)

// cfgLine matches a reference to a line of the configuration: "haproxy.cfg:123".
var cfgLine = regexp.MustCompile(`haproxy\.cfg:(\d+)`)

// blame finds the Routes of next that HAProxy's refusal (the text of err) names: by their certificate
// or CA file, or by a line of the refused haproxy.cfg (in files) inside their backend. It returns none
// when HAProxy names nothing that belongs to a Route (a router-wide setting, a custom template line
// outside any Route's backend).
func blame(text string, files []render.File, next *model.Config) []Refused {
	if next == nil {
		return nil
	}
	byKey := map[string]bool{}
	byBackend := map[string][]model.RouteInfo{}
	for _, r := range next.Routes {
		byKey[r.Namespace+"/"+r.Name] = true
		byBackend[r.Backend] = append(byBackend[r.Backend], r)
	}
	var out []Refused
	seen := map[string]bool{}
	add := func(ns, name, line string) {
		key := ns + "/" + name
		if !byKey[key] || seen[key] {
			return
		}
		seen[key] = true
		if len(line) > maxBlameMessage {
			line = line[:maxBlameMessage] + "…"
		}
		out = append(out, Refused{Namespace: ns, Name: name, Message: line})
	}
	var cfg []byte
	for _, f := range files {
		if f.Path == layout.Config {
			cfg = f.Data
		}
	}
	for line := range strings.SplitSeq(text, "\n") {
		line = strings.TrimSpace(line)
		for _, m := range routeFile.FindAllStringSubmatch(line, -1) {
			add(m[1], m[2], line)
		}
		for _, m := range cfgLine.FindAllStringSubmatch(line, -1) {
			n, err := strconv.Atoi(m[1])
			if err != nil {
				continue
			}
			for _, r := range byBackend[sectionAt(cfg, n)] {
				add(r.Namespace, r.Name, line)
			}
		}
	}
	return out
}

// sectionAt returns the name of the backend whose section holds line n (1-based) of cfg, or "".
func sectionAt(cfg []byte, n int) string {
	sc := bufio.NewScanner(bytes.NewReader(cfg))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	section := ""
	for i := 1; sc.Scan() && i <= n; i++ {
		l := sc.Text()
		// Conditional blocks (".if") sit inside sections.
		if l == "" || l[0] == ' ' || l[0] == '\t' || l[0] == '#' || l[0] == '.' {
			continue
		}
		section = ""
		if rest, ok := strings.CutPrefix(l, "backend "); ok {
			// "backend <name> from <profile>": a backend name holds no space.
			if f := strings.Fields(rest); len(f) > 0 {
				section = f[0]
			}
		}
	}
	return section
}
