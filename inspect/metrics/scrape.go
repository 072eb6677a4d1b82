package metrics

import (
	"math"
	"slices"
	"sort"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// otherPrefix starts the backend label of a backend that serves no Route (openshift_default, be_sni,
// be_no_sni, a custom template's own), as OpenShift's exporter labels them.
const otherPrefix = "other/"

// scrape turns one `show stat` reply into series, in two passes: it reads every row, then sends each
// family's series in the order the registry sorts them into (which makes its sort a single pass
// over sorted data: at 10,000 Routes sorting was a fifth of a scrape).
type scrape struct {
	c   *Collector
	idx *index
	// servers is false above the server threshold: server rows are skipped.
	servers bool
	ch      chan<- prometheus.Metric
	// failures counts the rows and values that could not be read (haproxy_exporter_csv_parse_failures).
	failures int
	// extra holds the labels of servers the applied state does not list, per backend, so that two
	// of them never give one series twice.
	extra map[string]map[serverLabels]bool
	// rows are the rows read, per family; values holds their values, len(fields) per row, NaN
	// where HAProxy left the field empty.
	rows    [numFamilies][]row
	values  [numFamilies][]float64
	samples samples
}

// row is one row of `show stat` to export.
type row struct {
	set *labelSet
	// at is the row's number in its family: its values start at values[at*len(fields)].
	at int
}

// run reads reply and sends its series; it fails only when the reply is not `show stat` CSV
// (nothing is sent then).
func (s *scrape) run(reply string) error {
	ls := lines{rest: reply}
	first, _ := ls.next()
	h, err := parseHeader(first, &s.c.fields)
	if err != nil {
		return err
	}
	fields := make([]string, h.width)
	for {
		line, ok := ls.next()
		if !ok {
			break
		}
		if line == "" {
			continue
		}
		n, err := splitRow(line, fields)
		if err != nil || n <= max(h.proxy, h.server, h.typ) {
			s.failures++
			continue
		}
		clear(fields[n:])
		s.read(&h, fields)
	}
	for fam := range numFamilies {
		s.send(fam)
	}
	return nil
}

// read keeps one row when the applied state labels it.
func (s *scrape) read(h *header, fields []string) {
	proxy, server := fields[h.proxy], fields[h.server]
	var (
		fam family
		set *labelSet
		err error
	)
	switch fields[h.typ] {
	case typeFrontend:
		fam = frontendFamily
		set, err = newLabelSet(fam, s.c.codePairs, proxy)
	case typeBackend:
		fam = backendFamily
		b, known := s.idx.backends[proxy]
		switch {
		case known && b.export:
			if b.set == nil {
				b.set, err = newLabelSet(fam, s.c.codePairs, b.kind, b.namespace, b.route)
			}
			set = b.set
		case !known && !routeNamed(proxy):
			set, err = newLabelSet(fam, s.c.codePairs, otherPrefix+proxy, "", "")
		default:
			// A free spare, a retired backend, or a Route's backend the applied state does not
			// know (it serves no Route that haroute can name): no series.
			return
		}
	case typeServer:
		fam = serverFamily
		b := s.idx.backends[proxy]
		if !s.servers || b == nil || !b.export {
			return // the servers of other backends (be_sni's fe_sni) repeat a frontend's counts
		}
		if set, err = s.serverSet(b, proxy, server); set == nil && err == nil {
			return
		}
	default:
		return
	}
	if err != nil {
		s.failures++
		return
	}
	s.keep(fam, h, fields, set)
}

// serverSet returns the label set of a server of exported backend b (nil when it is not exported).
func (s *scrape) serverSet(b *routeBackend, backend, server string) (*labelSet, error) {
	e, ok := s.idx.servers[serverKey{backend, server}]
	if !ok {
		l, ok := s.unknownServer(backend, server)
		if !ok {
			return nil, nil
		}
		return newLabelSet(serverFamily, s.c.codePairs, l.addr, b.namespace, b.route, l.pod, l.service)
	}
	if !e.labels.export {
		return nil, nil
	}
	if e.set == nil {
		var err error
		l := e.labels
		if e.set, err = newLabelSet(serverFamily, s.c.codePairs, l.addr, b.namespace, b.route, l.pod, l.service); err != nil {
			return nil, err
		}
	}
	return e.set, nil
}

// unknownServer returns the labels of a server of a Route's backend that the applied state does not
// list, read from its name; ok is false when the name does not follow OpenShift's form or its labels
// are taken.
func (s *scrape) unknownServer(backend, server string) (serverLabels, bool) {
	l, ok := nameLabels(server)
	if !ok {
		return l, false
	}
	if s.extra == nil {
		s.extra = map[string]map[serverLabels]bool{}
	}
	taken := s.extra[backend]
	if taken == nil {
		taken = map[serverLabels]bool{}
		for k, e := range s.idx.servers {
			if k.backend == backend {
				taken[e.labels] = true
			}
		}
		s.extra[backend] = taken
	}
	if taken[l] {
		return l, false
	}
	taken[l] = true
	return l, true
}

// keep records the values of the family's selected fields of one row.
func (s *scrape) keep(fam family, h *header, fields []string, set *labelSet) {
	sel, cols := s.c.fields[fam], h.cols[fam]
	s.rows[fam] = append(s.rows[fam], row{set: set, at: len(s.rows[fam])})
	for i := range sel {
		v := math.NaN()
		if cols[i] >= 0 {
			x, ok, err := value(&sel[i], fields[cols[i]])
			switch {
			case err != nil:
				s.failures++
			case ok:
				v = x
			}
		}
		s.values[fam] = append(s.values[fam], v)
	}
}

// send sends the series of one family: metric by metric, rows in the order of their labels;
// http_responses_total by group (the backend kind), code, then the other labels.
func (s *scrape) send(fam family) {
	rows := s.rows[fam]
	sort.Slice(rows, func(i, j int) bool {
		if rows[i].set.key != rows[j].set.key {
			return rows[i].set.key < rows[j].set.key
		}
		return rows[i].at < rows[j].at
	})
	// A reply that lists one proxy or server twice (HAProxy never does: names are unique in a
	// configuration) would send the same series twice, and the registry fails the whole scrape for
	// that; the first row of a name counts.
	rows = slices.CompactFunc(rows, func(a, b row) bool { return a.set.key == b.set.key })
	sel, descs, values := s.c.fields[fam], s.c.descs[fam], s.values[fam]
	nf := len(sel)
	var withCode []int
	for i := range sel {
		if sel[i].code != "" {
			withCode = append(withCode, i)
			continue
		}
		for _, r := range rows {
			s.sample(descs[i], r.set.base, values[r.at*nf+i], sel[i].counter)
		}
	}
	if len(withCode) == 0 {
		return
	}
	for start := 0; start < len(rows); {
		end := start + 1
		for end < len(rows) && rows[end].set.group == rows[start].set.group {
			end++
		}
		for _, i := range withCode {
			slot := codeSlot(sel[i].code)
			for _, r := range rows[start:end] {
				s.sample(descs[i], r.set.codes[slot], values[r.at*nf+i], sel[i].counter)
			}
		}
		start = end
	}
}

// sample sends one series unless v is NaN (an empty field).
func (s *scrape) sample(d *prometheus.Desc, labels []*dto.LabelPair, v float64, counter bool) {
	if math.IsNaN(v) {
		return
	}
	m := s.samples.next()
	*m = sample{desc: d, labels: labels, value: v, counter: counter}
	s.ch <- m
}
