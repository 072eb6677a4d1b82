package mapping

import "testing"

// TestOpenShiftRewriteValue pins the clean-up to what OpenShift's router writes for the same values
// (what its rewritetarget package produces, without the "\1" it appends when there is no comment).
func TestOpenShiftRewriteValue(t *testing.T) {
	for _, tc := range []struct {
		in, want string
		comment  bool
	}{
		{`%foo`, `%%foo`, false},
		{`%%foo`, `%%foo`, false},
		{`%%%foo`, `%%%%%%foo`, false},
		{`%%%%foo`, `%%%%foo`, false},
		{`'foo'foo\'`, `foofoo'\''`, false},
		{`\foo\`, `foo`, false},
		{`\\foo\\`, `\foo\`, false},
		{`\\\foo\\\`, `\\foo\\`, false},
		{`# foo # foo`, ``, true},
		{`\# foo # foo`, `# foo `, true},
		{`foo # foo`, `foo `, true},
		{`"foo"foo\"`, `foofoo"`, false},
		{`\\foo\"foo"\#foo\foo'foo\'#foo`, `\foo"foo#foofoofoo'\''`, true},
	} {
		got, comment := openshiftRewriteValue(tc.in)
		if got != tc.want || comment != tc.comment {
			t.Errorf("openshiftRewriteValue(%q) = %q, %v; want %q, %v", tc.in, got, comment, tc.want, tc.comment)
		}
	}
}

// TestRewriteTargetRefusals: values whose OpenShift rendering HAProxy would read as something else
// than a literal path, or not read at all, are refused with the reason.
func TestRewriteTargetRefusals(t *testing.T) {
	for in, why := range map[string]string{
		`/a\\1`:    "backslash",
		`/a\\b`:    "backslash",
		`/a\\\'b`:  "backslash",
		`/x\\\'`:   "backslash",
		`/a b`:     "not allowed in a path",
		`/a\#b`:    "not allowed in a path",
		`/%[src]`:  "not allowed in a path",
		`/a?b`:     "not allowed in a path",
		`#/a`:      "start with",
		"/a\x00b":  "not allowed in a path",
		"/\u00e9t": "not allowed in a path",
	} {
		if _, _, got := rewriteTarget(in); got == "" || !contains(got, why) {
			t.Errorf("rewriteTarget(%q): refusal %q, want one saying %q", in, got, why)
		}
	}
}

func contains(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return true
		}
	}
	return false
}
