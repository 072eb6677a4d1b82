package parity

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Field is what two answers are compared on.
type Field string

// The fields compared, in report order.
const (
	FieldStatus          Field = "status"
	FieldPod             Field = "pod"
	FieldPodTarget       Field = "pod target"
	FieldLocation        Field = "location"
	FieldHSTS            Field = "hsts"
	FieldCookieName      Field = "cookie name"
	FieldCookieValue     Field = "cookie value"
	FieldCookieAttrs     Field = "cookie attributes"
	FieldRequestHeaders  Field = "request headers"
	FieldResponseHeaders Field = "response headers"
	FieldCert            Field = "certificate"
	FieldALPN            Field = "alpn"
)

// Fields are every Field, in report order.
var Fields = []Field{FieldStatus, FieldPod, FieldPodTarget, FieldLocation, FieldHSTS, FieldCookieName,
	FieldCookieValue, FieldCookieAttrs, FieldRequestHeaders, FieldResponseHeaders, FieldCert, FieldALPN}

// Difference is one field on which haroute's answer to a request differs from the stock router's.
type Difference struct {
	Request string `json:"request"`
	Field   Field  `json:"field"`
	// Detail narrows the field: the header's name for the header fields.
	Detail  string `json:"detail,omitempty"`
	Stock   string `json:"stock"`
	Haroute string `json:"haroute"`
}

// String writes the difference in one line.
func (d Difference) String() string {
	f := string(d.Field)
	if d.Detail != "" {
		f += " " + d.Detail
	}
	return fmt.Sprintf("%s: %s: stock %s, haroute %s", d.Request, f, quoteEmpty(d.Stock), quoteEmpty(d.Haroute))
}

func quoteEmpty(s string) string {
	if s == "" {
		return "(none)"
	}
	return strconv.Quote(s)
}

// Version is an HAProxy version, major and minor.
type Version struct{ Major, Minor int }

// Less reports whether v is older than w.
func (v Version) Less(w Version) bool {
	return v.Major < w.Major || (v.Major == w.Major && v.Minor < w.Minor)
}

// String writes "major.minor".
func (v Version) String() string { return fmt.Sprintf("%d.%d", v.Major, v.Minor) }

var versionPattern = regexp.MustCompile(`(\d+)\.(\d+)`)

// ParseVersion reads the first "major.minor" of s (`haproxy -v`'s first line will do).
func ParseVersion(s string) (Version, error) {
	m := versionPattern.FindStringSubmatch(s)
	if m == nil {
		return Version{}, fmt.Errorf("no HAProxy version in %q", s)
	}
	major, _ := strconv.Atoi(m[1]) // the pattern's digits always parse
	minor, _ := strconv.Atoi(m[2])
	return Version{major, minor}, nil
}

// runtimeCookies is the first HAProxy version whose `add server` takes a `cookie`: before it, a
// server added at runtime can only get a dynamic cookie (a hash of its address and a key), so haroute
// uses HAProxy's dynamic cookies on older versions and its cookie values cannot be the stock router's.
var runtimeCookies = Version{3, 0}

// Condition is a field the comparison does not make on the HAProxy version haroute runs, and why.
type Condition struct {
	Request string `json:"request"`
	Field   Field  `json:"field"`
	Reason  string `json:"reason"`
}

// Comparison compares answers of haroute, running on HAProxy haroute, with the stock router's.
type Comparison struct {
	HAProxy Version
}

// Compare returns the differences between the stock router's answer and haroute's to r, and the
// fields left out under a version condition.
//
// When the status or the pod differ, the rest of the answer is another answer (a router's error
// page against a pod's echo, another certificate after a Route was rejected): only those two are
// reported, the cause, not its consequences. Otherwise every field is compared, but for the version
// conditions, the only fields ever left out:
//   - before HAProxy 3.0 (runtimeCookies) cookie values are not compared, and neither is the pod of
//     a request that sends the stock router's cookie, which haroute cannot honour there.
func (c Comparison) Compare(r Request, stock, haroute Answer) ([]Difference, []Condition) {
	var diffs []Difference
	var conds []Condition
	add := func(f Field, detail, s, h string) {
		if s != h {
			diffs = append(diffs, Difference{Request: r.ID, Field: f, Detail: detail, Stock: s, Haroute: h})
		}
	}
	cookiesComparable := !c.HAProxy.Less(runtimeCookies)
	why := fmt.Sprintf("HAProxy %s < %s: haroute uses dynamic cookies, whose values are not the stock router's", c.HAProxy, runtimeCookies)

	add(FieldStatus, "", stock.Status, haroute.Status)
	if r.StockCookie != nil && !cookiesComparable {
		conds = append(conds, Condition{r.ID, FieldPod, why})
	} else {
		add(FieldPod, "", stock.Pod, haroute.Pod)
	}
	if len(diffs) > 0 {
		return diffs, conds
	}
	add(FieldPodTarget, "", stock.PodTarget, haroute.PodTarget)
	add(FieldLocation, "", stock.Location, haroute.Location)
	add(FieldHSTS, "", stock.HSTS, haroute.HSTS)
	add(FieldCookieName, "", cookieNames(stock.Cookies), cookieNames(haroute.Cookies))
	for i := range max(len(stock.Cookies), len(haroute.Cookies)) {
		s, h := cookieAt(stock.Cookies, i), cookieAt(haroute.Cookies, i)
		if cookiesComparable {
			add(FieldCookieValue, "", s.Value, h.Value)
		} else if s.Value != "" || h.Value != "" {
			conds = append(conds, Condition{r.ID, FieldCookieValue, why})
		}
		add(FieldCookieAttrs, "", strings.Join(s.Attrs, "; "), strings.Join(h.Attrs, "; "))
	}
	compareHeaders(FieldRequestHeaders, stock.RequestHeaders, haroute.RequestHeaders, add)
	compareHeaders(FieldResponseHeaders, stock.ResponseHeaders, haroute.ResponseHeaders, add)
	add(FieldCert, "", stock.Cert, haroute.Cert)
	add(FieldALPN, "", stock.ALPN, haroute.ALPN)
	return diffs, conds
}

func cookieNames(cs []Cookie) string {
	names := make([]string, len(cs))
	for i, c := range cs {
		names[i] = c.Name
	}
	return strings.Join(names, ", ")
}

func cookieAt(cs []Cookie, i int) Cookie {
	if i < len(cs) {
		return cs[i]
	}
	return Cookie{}
}

// compareHeaders compares two header maps name by name (the detail is the name).
func compareHeaders(f Field, stock, haroute map[string][]string, add func(Field, string, string, string)) {
	var names []string
	for k := range stock {
		names = append(names, k)
	}
	for k := range haroute {
		if _, ok := stock[k]; !ok {
			names = append(names, k)
		}
	}
	sort.Strings(names)
	for _, k := range names {
		s, h := stock[k], haroute[k]
		if !slices.Equal(s, h) {
			add(f, k, joinValues(s), joinValues(h))
		}
	}
}

// joinValues writes a header's values: "" when it is absent, `""` when present and empty.
func joinValues(vs []string) string {
	if vs == nil {
		return ""
	}
	if j := strings.Join(vs, " | "); j != "" {
		return j
	}
	return `""`
}
