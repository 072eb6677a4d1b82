package socket

import (
	"context"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"testing"
)

// Only the tests list the loaded certificates (`show ssl cert` without a path): they check with it
// which certificates the certificate commands left loaded. ShowCerts and ParseCerts live in this test
// file, exported so that the tests outside the package can use them too.

// ShowCerts returns the paths of the certificates HAProxy holds (`show ssl cert`), sorted; an open
// transaction is not listed.
func ShowCerts(ctx context.Context, r Runner) ([]string, error) {
	const cmd = "show ssl cert"
	reply, err := r.Command(ctx, cmd)
	if err != nil {
		return nil, err
	}
	paths, err := ParseCerts(reply)
	if err != nil {
		return nil, parseError(cmd, reply, err)
	}
	sort.Strings(paths)
	return paths, nil
}

// ParseCerts parses `show ssl cert`: a "# filename" section with one path per line, preceded by a
// "# transaction" section ("*<path>") while a transaction is open, which is skipped.
func ParseCerts(reply string) ([]string, error) {
	lines := splitLines(reply)
	var out []string
	section := ""
	for _, l := range lines {
		if name, ok := strings.CutPrefix(l, "# "); ok {
			section = name
			continue
		}
		switch section {
		case "filename":
			out = append(out, l)
		case "transaction":
		default:
			return nil, fmt.Errorf("show ssl cert: line %q outside a known section", l)
		}
	}
	if section == "" {
		return nil, fmt.Errorf("show ssl cert: no \"# filename\" line")
	}
	return out, nil
}

func TestParseCerts(t *testing.T) {
	want := []string{"/tmp/hx/conf/a.pem", "/tmp/hx/conf/b.pem"}
	if got, err := ParseCerts(fixture(t, "certs.txt")); err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("ParseCerts = %q, %v", got, err)
	}
	// While a transaction is open its path is listed twice: "*<path>" and in the file names.
	want = append(want, "/tmp/hx/conf/n.pem")
	if got, err := ParseCerts(fixture(t, "certs_transaction.txt")); err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("ParseCerts(transaction) = %q, %v", got, err)
	}
	for _, bad := range []string{fixture(t, "help.txt"), ""} {
		if _, err := ParseCerts(bad); err == nil {
			t.Errorf("ParseCerts(%.60q) accepted", bad)
		}
	}
}
