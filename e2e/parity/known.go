package parity

import (
	"errors"
	"fmt"
	"net/http"
	"os"
	"path"
	"slices"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/haroute/haroute/mapping/compat"
)

// OpenIssue is the Open text of a known difference that no row of the compatibility table explains
// yet.
const OpenIssue = "to be fixed in issue 24"

// Known is one accepted difference of testdata/known-differences.yaml: the requests and the fields it
// covers, and the row of the compatibility table (mapping/compat) that documents it, or Open.
type Known struct {
	// Requests are request IDs or path.Match patterns of them ("cookies/*", "*/*" for all).
	Requests []string `json:"requests"`
	Fields   []Field  `json:"fields"`
	// Detail, when set, narrows a header field to that header (any case).
	Detail string `json:"detail,omitempty"`
	// HAProxy, when set, limits the entry to the HAProxy versions haroute runs on: "<3.0", ">=3.0".
	HAProxy string `json:"haproxy,omitempty"`
	// Row is the compatibility table's row that documents the difference.
	Row *RowRef `json:"row,omitempty"`
	// Open is OpenIssue when no row documents the difference yet.
	Open string `json:"open,omitempty"`
	// Note says what differs.
	Note string `json:"note"`
}

// RowRef names a row of mapping/compat: its kind as compat.Kind.String writes it (env, annotation,
// field) and its name.
type RowRef struct {
	Kind string `json:"kind"`
	Name string `json:"name"`
}

// String writes "kind name".
func (r RowRef) String() string { return r.Kind + " " + r.Name }

// ReadKnown reads a known-differences file.
func ReadKnown(file string) ([]Known, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("known differences: %w", err)
	}
	var ks []Known
	if err := yaml.UnmarshalStrict(b, &ks); err != nil {
		return nil, fmt.Errorf("known differences %s: %w", file, err)
	}
	return ks, nil
}

// Matches reports whether k accepts d when haroute runs on HAProxy v.
func (k Known) Matches(d Difference, v Version) bool {
	if !slices.Contains(k.Fields, d.Field) {
		return false
	}
	if k.Detail != "" && http.CanonicalHeaderKey(k.Detail) != http.CanonicalHeaderKey(d.Detail) {
		return false
	}
	if ok, err := versionIn(v, k.HAProxy); err != nil || !ok {
		return false
	}
	for _, p := range k.Requests {
		if ok, _ := path.Match(p, d.Request); ok {
			return true
		}
	}
	return false
}

// Check returns what is wrong with the entry: an unknown field, a bad pattern or version range, no
// row and no open mark (or both), or a row that is not in the compatibility table as Different or
// NotSupported.
func (k Known) Check(rows []compat.Row) error {
	var errs []error
	if len(k.Fields) == 0 {
		errs = append(errs, errors.New("no fields"))
	}
	for _, f := range k.Fields {
		if !slices.Contains(Fields, f) {
			errs = append(errs, fmt.Errorf("unknown field %q", f))
		}
	}
	if len(k.Requests) == 0 {
		errs = append(errs, errors.New("no requests"))
	}
	for _, p := range k.Requests {
		if _, err := path.Match(p, ""); err != nil {
			errs = append(errs, fmt.Errorf("request pattern %q: %w", p, err))
		}
	}
	if _, err := versionIn(Version{}, k.HAProxy); err != nil {
		errs = append(errs, err)
	}
	if strings.TrimSpace(k.Note) == "" {
		errs = append(errs, errors.New("no note"))
	}
	switch {
	case k.Row == nil && k.Open == "":
		errs = append(errs, fmt.Errorf("neither a row of the compatibility table nor open: %q", OpenIssue))
	case k.Row != nil && k.Open != "":
		errs = append(errs, errors.New("both a row and open: a documented difference is not open"))
	case k.Open != "" && k.Open != OpenIssue:
		errs = append(errs, fmt.Errorf("open is %q, want %q", k.Open, OpenIssue))
	case k.Row != nil:
		errs = append(errs, checkRow(*k.Row, rows))
	}
	return errors.Join(errs...)
}

// checkRow returns an error unless ref names a row of rows whose status is Different or NotSupported.
func checkRow(ref RowRef, rows []compat.Row) error {
	for _, r := range rows {
		if r.Kind.String() != ref.Kind || r.Name != ref.Name {
			continue
		}
		if r.Status != compat.Different && r.Status != compat.NotSupported {
			return fmt.Errorf("row %s is %s: a difference needs a row that says it differs (different or not supported)", ref, r.Status)
		}
		return nil
	}
	return fmt.Errorf("row %s is not in the compatibility table (mapping/compat/rows.go)", ref)
}

// versionIn reports whether v satisfies the range ("" for any version, "<M.m" or ">=M.m").
func versionIn(v Version, rng string) (bool, error) {
	if rng == "" {
		return true, nil
	}
	op, rest := "", rng
	for _, o := range []string{">=", "<"} {
		if r, ok := strings.CutPrefix(rng, o); ok {
			op, rest = o, r
			break
		}
	}
	w, err := ParseVersion(rest)
	if op == "" || err != nil || rest != w.String() {
		return false, fmt.Errorf("haproxy %q: want \"<M.m\" or \">=M.m\"", rng)
	}
	if op == "<" {
		return v.Less(w), nil
	}
	return !v.Less(w), nil
}
