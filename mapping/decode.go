package mapping

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	routev1 "github.com/openshift/api/route/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	kjson "k8s.io/apimachinery/pkg/runtime/serializer/json"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"sigs.k8s.io/yaml"
)

// The apiVersion each supported kind must carry.
const (
	apiVersionCore      = "v1"
	apiVersionRoute     = "route.openshift.io/v1"
	apiVersionDiscovery = "discovery.k8s.io/v1"
)

// supportedKinds maps each kind DecodeManifests keeps to the apiVersion it must be written with.
func supportedKinds() map[string]string {
	return map[string]string{
		"Route":         apiVersionRoute,
		"Service":       apiVersionCore,
		"EndpointSlice": apiVersionDiscovery,
		"Namespace":     apiVersionCore,
		"Secret":        apiVersionCore,
	}
}

// DecodeManifests decodes multi-document YAML (or JSON) manifests into an Input. It keeps Routes
// (route.openshift.io/v1), Services, Namespaces and Secrets (v1) and EndpointSlices
// (discovery.k8s.io/v1), also as items of `v1 List` documents, and skips every other kind as well as empty
// and comment-only documents. Decoding is strict: an unknown or misspelt field, a duplicate key, a
// missing metadata.name or an apiVersion that does not belong to the kind is an error naming source,
// the document number and its first line. Objects keep the order of the file; the namespace of
// namespaced objects defaults to "default", and a Secret's stringData is merged into data, as the API
// server would do. DecodeManifests does no I/O: source only names the data in messages.
func DecodeManifests(source string, data []byte) (Input, error) {
	d, err := newDecoder()
	if err != nil {
		return Input{}, fmt.Errorf("%s: %w", source, err)
	}
	var in Input
	for _, doc := range splitDocuments(data) {
		if err := d.decodeDocument(&in, doc); err != nil {
			return Input{}, fmt.Errorf("%s: document %d (line %d): %w", source, doc.index, doc.line, err)
		}
	}
	return in, nil
}

// document is one YAML document of a stream.
type document struct {
	index int    // 1-based position among the documents of the stream
	first int    // file line of the first line of text
	line  int    // file line where the content starts (first line that is not blank or a comment)
	text  []byte // the document's lines, without its "---" marker
}

// splitDocuments cuts a YAML stream at its "---" and "..." markers, keeping track of line numbers.
// A marker must start a line; YAML forbids such lines inside content, so this split is exact. The
// text before the first "---" and after a "..." counts as a document only when it holds content.
func splitDocuments(data []byte) []document {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	var (
		docs     []document
		cur      *document
		explicit bool // cur was opened by "---"
	)
	flush := func() {
		if cur != nil && (explicit || cur.line > 0) {
			cur.index = len(docs) + 1
			if cur.line == 0 {
				cur.line = cur.first
			}
			docs = append(docs, *cur)
		}
		cur = nil
	}
	open := func(lineNo int, isExplicit bool) {
		flush()
		cur = &document{first: lineNo}
		explicit = isExplicit
	}
	add := func(lineNo int, line []byte) {
		if cur == nil {
			open(lineNo, false)
		}
		if cur.line == 0 && hasContent(line) {
			cur.line = lineNo
		}
		cur.text = append(cur.text, line...)
		cur.text = append(cur.text, '\n')
	}

	lines := bytes.Split(data, []byte("\n"))
	if len(lines) > 0 && len(lines[len(lines)-1]) == 0 {
		lines = lines[:len(lines)-1]
	}
	for i, raw := range lines {
		lineNo := i + 1
		line := bytes.TrimSuffix(raw, []byte("\r"))
		switch {
		case isMarker(line, "---"):
			open(lineNo, true)
			// "--- value" starts the document on the marker line; keep the columns.
			if rest := line[3:]; hasContent(rest) {
				add(lineNo, append([]byte("   "), rest...))
			} else {
				cur.first = lineNo + 1
			}
		case isMarker(line, "..."):
			flush()
		default:
			add(lineNo, line)
		}
	}
	flush()
	return docs
}

// isMarker reports whether line is the document marker m ("---" or "..."), alone or followed by
// whitespace.
func isMarker(line []byte, m string) bool {
	if !bytes.HasPrefix(line, []byte(m)) {
		return false
	}
	return len(line) == len(m) || line[len(m)] == ' ' || line[len(m)] == '\t'
}

// hasContent reports whether a line holds more than blanks and a comment.
func hasContent(line []byte) bool {
	t := bytes.TrimSpace(line)
	return len(t) > 0 && t[0] != '#'
}

// decoder decodes single objects strictly (unknown fields, duplicate fields, case-sensitive keys).
type decoder struct {
	kinds map[string]string
	codec *kjson.Serializer
}

func newDecoder() (*decoder, error) {
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{corev1.AddToScheme, discoveryv1.AddToScheme, routev1.AddToScheme} {
		if err := add(scheme); err != nil {
			return nil, fmt.Errorf("registering API types: %w", err)
		}
	}
	codec := kjson.NewSerializerWithOptions(kjson.DefaultMetaFactory, scheme, scheme, kjson.SerializerOptions{Strict: true})
	return &decoder{kinds: supportedKinds(), codec: codec}, nil
}

// header is the part of every object that says what it is, plus the items of a List.
type header struct {
	APIVersion string            `json:"apiVersion"`
	Kind       string            `json:"kind"`
	Items      []json.RawMessage `json:"items"`
}

func (d *decoder) decodeDocument(in *Input, doc document) error {
	j, err := yaml.YAMLToJSONStrict(doc.text)
	if err != nil {
		return errors.New(yamlMessage(err, doc.first))
	}
	if t := bytes.TrimSpace(j); bytes.Equal(t, []byte("null")) || len(t) == 0 {
		return nil // empty or comment-only document
	}
	return d.decodeObject(in, j, true)
}

// decodeObject decodes one JSON object (a document, or an item of a List when allowList is false)
// and appends it to in when its kind is supported.
func (d *decoder) decodeObject(in *Input, j []byte, allowList bool) error {
	if t := bytes.TrimSpace(j); len(t) == 0 || t[0] != '{' {
		return errors.New("not an object: want a mapping with apiVersion, kind and metadata")
	}
	var h header
	if err := utiljson.Unmarshal(j, &h); err != nil {
		return fmt.Errorf("reading apiVersion and kind: %w", err)
	}
	if h.Kind == "" {
		return errors.New("kind is missing")
	}
	if h.APIVersion == "" {
		return fmt.Errorf("kind %s: apiVersion is missing", h.Kind)
	}
	if h.Kind == "List" {
		if h.APIVersion != apiVersionCore {
			return fmt.Errorf("kind List needs apiVersion %s, not %q", apiVersionCore, h.APIVersion)
		}
		if !allowList {
			return errors.New("a List inside a List is not supported")
		}
		for i, item := range h.Items {
			if err := d.decodeObject(in, item, false); err != nil {
				return fmt.Errorf("items[%d]: %w", i, err)
			}
		}
		return nil
	}
	want, ok := d.kinds[h.Kind]
	if !ok {
		return nil // a kind haroute does not use
	}
	if h.APIVersion != want {
		return fmt.Errorf("kind %s needs apiVersion %s, not %q", h.Kind, want, h.APIVersion)
	}
	switch h.Kind {
	case "Route":
		o := &routev1.Route{}
		if err := d.decodeInto(j, o, &o.ObjectMeta, true); err != nil {
			return err
		}
		in.Routes = append(in.Routes, o)
	case "Service":
		o := &corev1.Service{}
		if err := d.decodeInto(j, o, &o.ObjectMeta, true); err != nil {
			return err
		}
		in.Services = append(in.Services, o)
	case "EndpointSlice":
		o := &discoveryv1.EndpointSlice{}
		if err := d.decodeInto(j, o, &o.ObjectMeta, true); err != nil {
			return err
		}
		in.EndpointSlices = append(in.EndpointSlices, o)
	case "Namespace":
		o := &corev1.Namespace{}
		if err := d.decodeInto(j, o, &o.ObjectMeta, false); err != nil {
			return err
		}
		in.Namespaces = append(in.Namespaces, o)
	case "Secret":
		o := &corev1.Secret{}
		if err := d.decodeInto(j, o, &o.ObjectMeta, true); err != nil {
			return err
		}
		mergeStringData(o)
		in.Secrets = append(in.Secrets, o)
	}
	return nil
}

// decodeInto decodes j strictly into obj, then checks its name and defaults its namespace.
func (d *decoder) decodeInto(j []byte, obj runtime.Object, meta *metav1.ObjectMeta, namespaced bool) error {
	if _, _, err := d.codec.Decode(j, nil, obj); err != nil {
		return withQuoteHint(err)
	}
	if strings.TrimSpace(meta.Name) == "" {
		return errors.New("metadata.name is missing")
	}
	if namespaced && meta.Namespace == "" {
		meta.Namespace = metav1.NamespaceDefault
	}
	return nil
}

// withQuoteHint explains the usual cause of a boolean or number where a string belongs: YAML 1.1, which
// Kubernetes tools read manifests with, takes unquoted y, n, yes, no, on, off, true, false and numbers
// for non-strings (a Route named `y`, an annotation value `10`).
func withQuoteHint(err error) error {
	msg := err.Error()
	if (strings.Contains(msg, "cannot unmarshal bool into") || strings.Contains(msg, "cannot unmarshal number into")) &&
		strings.Contains(msg, "of type string") {
		return fmt.Errorf("%w (quote the value: YAML reads unquoted y/n, yes/no, on/off, true/false and numbers as non-strings)", err)
	}
	return err
}

// mergeStringData moves stringData into data (stringData wins), as the API server does on write.
func mergeStringData(s *corev1.Secret) {
	if len(s.StringData) == 0 {
		return
	}
	if s.Data == nil {
		s.Data = make(map[string][]byte, len(s.StringData))
	}
	for k, v := range s.StringData {
		s.Data[k] = []byte(v)
	}
	s.StringData = nil
}

// parserLine finds the document-relative line numbers in YAML parser messages.
var parserLine = regexp.MustCompile(`\bline (\d+)\b`)

// yamlMessage turns a YAML parser error into one line with file line numbers (first is the file line
// of the document's first line of text).
func yamlMessage(err error, first int) string {
	msg := err.Error()
	msg = strings.TrimPrefix(msg, "error converting YAML to JSON: ")
	msg = strings.TrimPrefix(msg, "yaml: ")
	if rest, ok := strings.CutPrefix(msg, "unmarshal errors:\n"); ok {
		var parts []string
		for _, p := range strings.Split(rest, "\n") {
			if p = strings.TrimSpace(p); p != "" {
				parts = append(parts, p)
			}
		}
		msg = strings.Join(parts, "; ")
	}
	return parserLine.ReplaceAllStringFunc(msg, func(m string) string {
		n, err := strconv.Atoi(strings.TrimPrefix(m, "line "))
		if err != nil {
			return m
		}
		return "line " + strconv.Itoa(first+n-1)
	})
}
