package main

import (
	"slices"

	"github.com/haroute/haroute/e2e/bench/results"
)

// idleSection compares the stock router and haroute, idle, at the same sizes.
func idleSection(d *doc, in *inputs) error {
	d.b.WriteString("## Beside the stock OpenShift router: memory, idle and with connections held\n\n")
	if in.idle == nil {
		notMeasured(d, results.IdleFile)
		return nil
	}
	reproduce(d, in.idle.Command)
	d.para("The stock router, built from its pinned source, then haroute, against the same API server and workload " +
		"(N Routes, each with its own headless Service and E endpoints), the same HAProxy, `maxconn` and reload " +
		"interval; each measured alone and idle after it serves every Route. The stock router runs one HAProxy " +
		"process; haroute a master and a worker, which share pages: RSS counts them twice, PSS splits them. RSS ratio " +
		"is haroute's HAProxy RSS over the stock one's; PSS ratio haroute's PSS over the stock one's PSS (its RSS when " +
		"PSS was not measured).")
	keys, g := groupBy(in.idle.Points, func(p results.IdlePoint) size { return size{p.Routes, p.Endpoints} })
	if len(keys) == 0 {
		d.para("The file holds no points.")
		return nil
	}
	of := func(ps []results.IdlePoint, router string) []results.IdlePoint {
		var out []results.IdlePoint
		for _, p := range ps {
			if p.Router == router {
				out = append(out, p)
			}
		}
		return out
	}
	haproxyRSS := func(p results.IdlePoint) float64 { return p.HAProxyMB }
	haproxyPSS := func(p results.IdlePoint) float64 { return p.HAProxyPSSMB }
	mem := table{header: []string{"Routes × endpoints", "stock HAProxy RSS (MiB)", "haroute HAProxy RSS / PSS (MiB)", "RSS ratio", "PSS ratio"}}
	for _, k := range keys {
		stock, har := of(g[k], "stock"), of(g[k], "haroute")
		sRSS, hRSS, sPSS, hPSS := pick(stock, haproxyRSS), pick(har, haproxyRSS), pickPositive(stock, haproxyPSS), pickPositive(har, haproxyPSS)
		rssRatio, pssRatio := none, none
		if sRSS.N > 0 && hRSS.N > 0 && sRSS.Med > 0 {
			rssRatio = fmtRatio(hRSS.Med / sRSS.Med)
		}
		stockPSS := sPSS
		if stockPSS.N == 0 {
			stockPSS = sRSS
		}
		if stockPSS.N > 0 && hPSS.N > 0 && stockPSS.Med > 0 {
			pssRatio = fmtRatio(hPSS.Med / stockPSS.Med)
		}
		mem.add(k.String(), fmtSpread(sRSS, fmtMiB), fmtSpread(hRSS, fmtMiB)+" / "+fmtSpread(hPSS, fmtMiB), rssRatio, pssRatio)
	}
	mem.write(&d.b)
	routers := table{header: []string{"Routes × endpoints", "router", "router RSS (MiB)", "start → served", "start → status", "reloads"}}
	for _, k := range keys {
		var names []string
		for _, p := range g[k] {
			if !slices.Contains(names, p.Router) {
				names = append(names, p.Router)
			}
		}
		for _, name := range ordered(setOf(names), []string{"stock", "haroute"}) {
			ps := of(g[k], name)
			status := fmtDurationSpread(pickPositive(ps, func(p results.IdlePoint) float64 { return p.StartToStatus }))
			if status == none {
				status = "not waited for"
			}
			routers.add(k.String(), name,
				fmtSpread(pick(ps, func(p results.IdlePoint) float64 { return p.RouterMB }), fmtMiB),
				fmtDurationSpread(pickPositive(ps, func(p results.IdlePoint) float64 { return p.StartToServed })),
				status,
				fmtSpread(pick(ps, func(p results.IdlePoint) float64 { return float64(p.Reloads) }), fmtCount))
		}
	}
	routers.write(&d.b)
	heldTable(d, keys, g)
	return nil
}

// heldTable writes the measurements with long-lived connections held, when the file has any.
func heldTable(d *doc, keys []size, g map[size][]results.IdlePoint) {
	held := func(ps []results.IdlePoint, router string) []results.HeldPoint {
		var out []results.HeldPoint
		for _, p := range ps {
			if p.Router == router && p.Held != nil {
				out = append(out, *p.Held)
			}
		}
		return out
	}
	t := table{header: []string{"Routes × endpoints", "router", "changes", "reloads", "connections open",
		"HAProxy processes", "HAProxy RSS / PSS (MiB)", "PSS ratio"}}
	pss := func(h results.HeldPoint) float64 { return h.HAProxyPSSMB }
	for _, k := range keys {
		stockPSS := pickPositive(held(g[k], "stock"), pss)
		for _, name := range []string{"stock", "haroute"} {
			hs := held(g[k], name)
			if len(hs) == 0 {
				continue
			}
			p := pickPositive(hs, pss)
			ratio := none
			if stockPSS.N > 0 && p.N > 0 && stockPSS.Med > 0 {
				ratio = fmtRatio(p.Med / stockPSS.Med)
			}
			count := func(f func(results.HeldPoint) int) string {
				return fmtSpread(pick(hs, func(h results.HeldPoint) float64 { return float64(f(h)) }), fmtCount)
			}
			t.add(k.String(), name,
				count(func(h results.HeldPoint) int { return h.Changes }),
				count(func(h results.HeldPoint) int { return h.Reloads }),
				count(func(h results.HeldPoint) int { return h.Connections }),
				count(func(h results.HeldPoint) int { return h.Procs }),
				fmtSpread(pick(hs, func(h results.HeldPoint) float64 { return h.HAProxyMB }), fmtMiB)+" / "+fmtSpread(p, fmtMiB),
				ratio)
		}
	}
	if len(t.rows) == 0 {
		return
	}
	d.para("Then each router, still alone, takes EndpointSlice updates (changes), one a second, each moving one Route's " +
		"endpoints to other pods, while one more long-lived streaming connection to another Route opens every " +
		"second. It is measured once traffic shows every change and a whole reload interval has passed without a " +
		"reload, with the connections still open. A reload leaves the old HAProxy process running until its last " +
		"connection ends, so the stock router's reloads pile up processes. PSS ratio is a router's HAProxy PSS over " +
		"the stock one's.")
	t.write(&d.b)
}

// setOf makes a set of names, for ordered.
func setOf(names []string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

// The data plane's forms.
const (
	formHaroute = "haroute"
	formMapReg  = "map_reg"
)

func dataPlaneSection(d *doc, in *inputs) error {
	d.b.WriteString("## Data plane: requests per second through HAProxy\n\n")
	if in.dataPlane == nil {
		notMeasured(d, results.DataPlaneFile)
		return nil
	}
	reproduce(d, in.dataPlane.Command)
	d.para("The same Routes (hosts with one to three paths each) and backends, served by HAProxy (one per form) in two forms that "+
		"differ only in the frontend's host and path lookup: `%s`, haroute's rendered configuration (exact and prefix "+
		"tree lookups, `map_str` and `map_beg`), and `%s`, OpenShift's stock form (one regular expression per Route, "+
		"`^host\\.?(:[0-9]+)?path(/.*)?$`, scanned in order by `map_reg`). Keep-alive clients spread the requests "+
		"over every Route, each request with a path of its own so that HAProxy's pattern cache misses, and every "+
		"answer is checked; hosts is how many different Routes a run reached (fewer than the Routes when it ended "+
		"before one pass over them). The two forms run side by side and the runs alternate between them; the ratio "+
		"divides a form's median requests/s by map_reg's.",
		formHaroute, formMapReg)
	byRoutes := make(map[int][]results.DataPlanePoint)
	forms := make(map[string]bool)
	for _, p := range in.dataPlane.Points {
		byRoutes[p.Routes] = append(byRoutes[p.Routes], p)
		forms[p.Form] = true
	}
	if len(byRoutes) == 0 {
		d.para("The file holds no points.")
		return nil
	}
	formNames := ordered(forms, []string{formHaroute, formMapReg})
	t := table{header: []string{"Routes", "form", "runs", "hosts", "requests/s", "ratio to `" + formMapReg + "`"}}
	routes := make([]int, 0, len(byRoutes))
	for r := range byRoutes {
		routes = append(routes, r)
	}
	slices.Sort(routes)
	for _, r := range routes {
		of := func(form string) []results.DataPlanePoint {
			var out []results.DataPlanePoint
			for _, p := range byRoutes[r] {
				if p.Form == form {
					out = append(out, p)
				}
			}
			return out
		}
		rps := func(p results.DataPlanePoint) float64 { return p.RPS }
		base := pick(of(formMapReg), rps)
		for _, f := range formNames {
			ps := of(f)
			if len(ps) == 0 {
				continue
			}
			s := pick(ps, rps)
			ratio := none
			if base.N > 0 && base.Med > 0 {
				ratio = fmtRatio(s.Med / base.Med)
			}
			t.add(fmtNum(float64(r), 0), "`"+f+"`", fmtNum(float64(len(ps)), 0),
				fmtSpread(pick(ps, func(p results.DataPlanePoint) float64 { return float64(p.Hosts) }), fmtCount),
				fmtSpread(s, func(v float64) string { return fmtNum(v, 0) }), ratio)
		}
	}
	t.write(&d.b)
	return nil
}
