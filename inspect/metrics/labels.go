package metrics

import (
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// Label names.
const (
	labelFrontend  = "frontend"
	labelBackend   = "backend"
	labelNamespace = "namespace"
	labelRoute     = "route"
	labelServer    = "server"
	labelPod       = "pod"
	labelService   = "service"
	labelCode      = "code"
)

// familyLabels are the label names of each family's series (http_responses_total adds code).
var familyLabels = [numFamilies][]string{
	frontendFamily: {labelFrontend},
	backendFamily:  {labelBackend, labelNamespace, labelRoute},
	serverFamily:   {labelServer, labelNamespace, labelRoute, labelPod, labelService},
}

// codes are the values of the code label, in their sorted order (responseFields').
var codes = [...]string{"1xx", "2xx", "3xx", "4xx", "5xx", "other"}

// codeSlot returns the position of code in codes.
func codeSlot(code string) int {
	for i, c := range codes {
		if c == code {
			return i
		}
	}
	return -1
}

// labelSet is the label pairs of the series of one row (a frontend, backend or server), made once
// and shared by all its series, sorted by name as the registry wants them; codes[i] adds code
// codes[i]. key orders the rows of a family as the registry sorts their series; group is the value
// of the labels that sort before code (the backend kind; "" in the other families), which orders the
// series of http_responses_total: by group, then code, then key.
type labelSet struct {
	base  []*dto.LabelPair
	codes [len(codes)][]*dto.LabelPair
	key   string
	group string
}

// newLabelSet returns the label set of values (in the order of familyLabels[fam]); it fails on a
// value that is not UTF-8, which the registry would refuse (failing the whole scrape).
func newLabelSet(fam family, codePairs *[len(codes)]*dto.LabelPair, values ...string) (*labelSet, error) {
	names := familyLabels[fam]
	if len(values) != len(names) {
		return nil, fmt.Errorf("%d label values for %v", len(values), names)
	}
	base := make([]*dto.LabelPair, len(names))
	for i, name := range names {
		if !utf8.ValidString(values[i]) {
			return nil, fmt.Errorf("label %s: %q is not UTF-8", name, values[i])
		}
		base[i] = &dto.LabelPair{Name: &names[i], Value: &values[i]}
	}
	sort.Slice(base, func(i, j int) bool { return *base[i].Name < *base[j].Name })
	ls := &labelSet{base: base}
	keys := make([]string, len(base))
	for i, p := range base {
		keys[i] = *p.Value
		if *p.Name < labelCode {
			ls.group += *p.Value + "\x00"
		}
	}
	ls.key = strings.Join(keys, "\x00")
	// The code pair goes where its name sorts, the same place in every set of the family.
	at := sort.Search(len(base), func(i int) bool { return *base[i].Name > labelCode })
	for slot := range codes {
		withCode := make([]*dto.LabelPair, 0, len(base)+1)
		withCode = append(withCode, base[:at]...)
		withCode = append(withCode, codePairs[slot])
		ls.codes[slot] = append(withCode, base[at:]...)
	}
	return ls, nil
}

// newCodePairs returns the pairs of the code label, shared by every label set of a Collector.
func newCodePairs() *[len(codes)]*dto.LabelPair {
	var out [len(codes)]*dto.LabelPair
	name := labelCode
	for i := range codes {
		out[i] = &dto.LabelPair{Name: &name, Value: &codes[i]}
	}
	return &out
}

// sample is one series of one scrape: a prometheus.Metric whose labels are a shared labelSet's, so
// that a series costs no more than its value (NewConstMetric would build and sort its pairs anew).
type sample struct {
	desc    *prometheus.Desc
	labels  []*dto.LabelPair
	value   float64
	counter bool
}

// Desc implements prometheus.Metric.
func (s *sample) Desc() *prometheus.Desc { return s.desc }

// Write implements prometheus.Metric.
func (s *sample) Write(m *dto.Metric) error {
	m.Label = s.labels
	if s.counter {
		m.Counter = &dto.Counter{Value: &s.value}
	} else {
		m.Gauge = &dto.Gauge{Value: &s.value}
	}
	return nil
}

// samples hands out samples from slabs, one allocation per slab.
type samples struct{ slab []sample }

// next returns a new sample.
func (s *samples) next() *sample {
	const slabSize = 1024
	if len(s.slab) == cap(s.slab) {
		s.slab = make([]sample, 0, slabSize)
	}
	s.slab = s.slab[:len(s.slab)+1]
	return &s.slab[len(s.slab)-1]
}
