package mapping

import (
	"fmt"
	"strings"
)

// The rewrite-target annotation in OpenShift's syntax.
//
// OpenShift's router renders the value as replace-path's replacement, in single quotes, after a
// clean-up that keeps old values meaning what they meant before it quoted them
// (pkg/router/template/util/rewritetarget): an unescaped '#' ends the value (and then the rest of
// the request path is not appended), unescaped double and single quotes are removed, "\'" and "\""
// stand for the quote itself, a lone backslash escapes the next character and goes, "\\" stands for
// one backslash, and an odd run of '%' is doubled (so "%" and "%%" both mean one '%' to HAProxy).
// rewriteTarget works out the literal path HAProxy puts in place of the Route's path, by the same
// steps and then by HAProxy's reading of the quoted word and of its log-format; haroute renders that
// literal path itself, quoted and escaped its own way, so the request reaches the backend with the
// same path, and no value can produce a configuration HAProxy would read otherwise.

// rewriteTarget returns the literal target of a rewrite-target value, whether the rest of the request
// path follows it, and why the value is refused ("" when it is not): a value OpenShift's router
// would render as a malformed word, one that leaves a backslash (an escape or a back-reference to
// HAProxy) or a '%' starting a log-format expression, and one whose target is not a path of RFC 3986
// characters.
func rewriteTarget(v string) (target string, rest bool, why string) {
	s, comment := openshiftRewriteValue(v)
	word, ok := readSingleQuoted("'" + s + "'")
	if !ok {
		return "", false, "OpenShift's router would render it as a malformed quoted word"
	}
	var b strings.Builder
	for i := 0; i < len(word); i++ {
		switch c := word[i]; {
		case c == '%' && i+1 < len(word) && word[i+1] == '%':
			b.WriteByte('%')
			i++
		case c == '%':
			return "", false, "a '%' would start an HAProxy log-format expression"
		case c == '\\':
			return "", false, "a backslash would remain, which HAProxy reads as an escape or a back-reference"
		default:
			b.WriteByte(c)
		}
	}
	target = b.String()
	if !strings.HasPrefix(target, "/") {
		return "", false, "the target must start with \"/\""
	}
	for i := 0; i < len(target); i++ {
		if !isPathChar(target[i]) {
			return "", false, fmt.Sprintf("the target %s holds %s, which is not allowed in a path", quoteShort(target), describeByte(target[i]))
		}
	}
	return target, !comment, ""
}

// openshiftRewriteValue is OpenShift's clean-up of a rewrite-target value (see above), without the
// "\1" it appends when the value has no comment: the text it writes between single quotes, and
// whether a '#' ended the value.
func openshiftRewriteValue(v string) (string, bool) {
	comment := false
	var b strings.Builder
	escaped := false
	for _, r := range v {
		if r == '#' && !escaped {
			comment = true
			break
		}
		b.WriteRune(r)
		escaped = r == '\\' && !escaped
	}
	s := mapEscaped(b.String(), func(r rune, escaped bool) string {
		if r == '"' && !escaped {
			return ""
		}
		return string(r)
	})
	s = mapEscaped(s, func(r rune, escaped bool) string {
		switch {
		case r == '\'' && !escaped:
			return ""
		case r == '\'':
			// Removing lone backslashes below turns this into '\'': a quote to HAProxy.
			return `'\\''`
		}
		return string(r)
	})
	s = mapRuns(s, '%', func(n int) int {
		if n%2 == 1 {
			return 2 * n
		}
		return n
	})
	s = mapRuns(s, '\\', func(n int) int {
		if n == 1 {
			return 0
		}
		return n
	})
	return strings.ReplaceAll(s, `\\`, `\`), comment
}

// mapEscaped replaces every rune of s with f(rune, escaped), where escaped says that the rune
// follows a backslash that is not itself escaped.
func mapEscaped(s string, f func(r rune, escaped bool) string) string {
	var b strings.Builder
	escaped := false
	for _, r := range s {
		b.WriteString(f(r, escaped))
		escaped = r == '\\' && !escaped
	}
	return b.String()
}

// mapRuns replaces every maximal run of the byte c in s, of length n, with f(n) copies of c.
func mapRuns(s string, c byte, f func(n int) int) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		if s[i] != c {
			b.WriteByte(s[i])
			i++
			continue
		}
		j := i
		for j < len(s) && s[j] == c {
			j++
		}
		b.WriteString(strings.Repeat(string(c), f(j-i)))
		i = j
	}
	return b.String()
}

// readSingleQuoted reads w as HAProxy reads one word of its configuration made of single-quoted
// parts and, between them, backslash-escaped quotes (how a quote is written inside such a word). It
// reports false for anything else: an unterminated quote, or another character between the parts.
func readSingleQuoted(w string) (string, bool) {
	var b strings.Builder
	quoted := false
	for i := 0; i < len(w); i++ {
		c := w[i]
		switch {
		case quoted && c == '\'':
			quoted = false
		case quoted:
			b.WriteByte(c)
		case c == '\'':
			quoted = true
		case c == '\\' && i+1 < len(w) && w[i+1] == '\'':
			b.WriteByte('\'')
			i++
		default:
			return "", false
		}
	}
	return b.String(), !quoted
}
