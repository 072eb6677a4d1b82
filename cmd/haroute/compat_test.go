package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"io/fs"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/haroute/haroute/mapping"
	"github.com/haroute/haroute/mapping/compat"
)

// TestCompatEnvRows holds the environment-variable rows of mapping/compat's table to what the code
// reads: every variable the code reads has a row, and a row says supported, different or haroute only
// exactly when the code reads its variable. recordEnvReads says how the reads are found.
func TestCompatEnvRows(t *testing.T) {
	read := recordEnvReads(t)
	rows := map[string]compat.Row{}
	for _, r := range compat.Rows() {
		if r.Kind == compat.EnvVar {
			rows[r.Name] = r
		}
	}
	failed := false
	for _, name := range slices.Sorted(maps.Keys(read)) {
		r, ok := rows[name]
		switch {
		case !ok:
			t.Errorf("%s is read by the code (%s) but has no row in mapping/compat/rows.go: add one "+
				"(supported or different for a variable of the stock router, haroute only for one of haroute's own)", name, read[name])
			failed = true
		case r.Status == compat.NotSupported:
			t.Errorf("%s is read by the code (%s) but its row in mapping/compat/rows.go says %s: "+
				"set its Status to supported (same meaning) or different (say how in the Note) and rewrite its Note", name, read[name], r.Status)
			failed = true
		}
	}
	for _, name := range slices.Sorted(maps.Keys(rows)) {
		r := rows[name]
		if _, ok := read[name]; !ok && r.Status != compat.NotSupported {
			t.Errorf("row %s in mapping/compat/rows.go says %s but nothing reads it: set it to not supported with the reason "+
				"(or remove the row of a haroute-only variable); if a function this test does not run reads it, add that function to recordEnvReads in cmd/haroute/compat_test.go",
				name, r.Status)
			failed = true
		}
	}
	if failed {
		t.Log("after changing mapping/compat/rows.go: run `make golden` (it rewrites docs/openshift-compatibility.md) " +
			"and put the new summary sentence in README.md (go test ./mapping/compat -run TestReadmeCounts prints it)")
	}
}

// recordEnvReads returns the environment variables haroute's code reads, each with where it was seen
// first. It runs, with a getenv that records every name asked for:
//
//   - mapping.FromEnv, the router settings every command starts from;
//   - (*app).settings and (*app).runSettings, which add the command's own variables (run with a
//     folder and with a cluster source, so that reads of either mode count);
//   - routeMetricsOptions, which (*app).routerMetrics calls with the same getenv to read the
//     ROUTER_METRICS_HAPROXY_* variables.
//
// Each runs twice: with an empty environment, and with one that turns every switch on (the variables
// whose stock default is false set to true, and a few that enable whole features), so that a variable
// read only when another is set counts too. Besides, the default template's `env "NAME"` calls count
// as reads, and a direct getenv call with a constant name anywhere in the module's non-test code (cmd/,
// mapping/, sync/, runtime/) must have been recorded: one that was not is in a function this test
// does not run, and the test fails asking for that function to be added here.
func recordEnvReads(t *testing.T) map[string]string {
	t.Helper()
	read := map[string]string{}
	for _, env := range []map[string]string{{}, switchesOn()} {
		via := func(where string) func(string) string {
			return func(name string) string {
				if _, ok := read[name]; !ok {
					read[name] = where
				}
				return env[name]
			}
		}
		if _, err := mapping.FromEnv(via("mapping.FromEnv")); err != nil {
			t.Logf("mapping.FromEnv (errors are expected with every switch on): %v", err)
		}
		a := &app{stdout: io.Discard, stderr: io.Discard, log: slog.New(slog.NewTextHandler(io.Discard, nil)), getenv: via("(*app).settings")}
		none := func(string) bool { return false }
		if _, err := a.settings(renderFlags{httpPort: 80, httpsPort: 443}, none); err != nil {
			t.Logf("settings: %v", err)
		}
		a.getenv = via("(*app).runSettings")
		for _, manifests := range []string{t.TempDir(), ""} {
			f := runFlags{statsPort: defaultStatsPort, reloadInterval: 5 * time.Second, mode: modeRuntime, driftInterval: time.Second, updateStatus: true,
				renderFlags: renderFlags{manifests: manifests, haproxyDir: t.TempDir(), httpPort: 80, httpsPort: 443}}
			if _, err := a.runSettings(f, none); err != nil {
				t.Logf("runSettings: %v", err)
			}
		}
		if _, err := routeMetricsOptions(via("routeMetricsOptions")); err != nil {
			t.Logf("routeMetricsOptions: %v", err)
		}
	}
	root := filepath.Join("..", "..")
	for name, where := range templateEnvReads(t, filepath.Join(root, "mapping", "render")) {
		if _, ok := read[name]; !ok {
			read[name] = where
		}
	}
	for _, c := range directEnvReads(t, root, "cmd", "mapping", "sync", "runtime") {
		if _, ok := read[c.name]; !ok {
			t.Errorf("%s reads %s, in a function TestCompatEnvRows does not run: add that function to recordEnvReads in cmd/haroute/compat_test.go", c.pos, c.name)
			read[c.name] = c.pos
		}
	}
	return read
}

// switchesOn returns an environment that turns on what the table's variables can turn on: each
// variable whose stock default is false set to true, and a few that enable whole features.
func switchesOn() map[string]string {
	env := map[string]string{
		"ROUTER_SYSLOG_ADDRESS":        "127.0.0.1:514",
		"ROUTER_MUTUAL_TLS_AUTH":       "required",
		"ROUTER_MUTUAL_TLS_AUTH_CA":    "/etc/pki/tls/client-ca/ca-bundle.pem",
		"ROUTER_SERVICE_NAME":          "default",
		"ROUTER_SERVICE_NAMESPACE":     "openshift-ingress",
		"ROUTER_METRICS_TYPE":          "haproxy",
		"ROUTER_IP_V4_V6_MODE":         "v4v6",
		"ROUTER_UNIQUE_ID_HEADER_NAME": "X-Request-Id",
		"ROUTER_UNIQUE_ID_FORMAT":      "%{+X}o%ci",
	}
	for _, r := range compat.Rows() {
		if r.Kind == compat.EnvVar && r.Default == "`false`" {
			env[r.Name] = "true"
		}
	}
	return env
}

// templateEnvReads returns the names the templates in dir (*.tmpl) read with `env "NAME"`.
func templateEnvReads(t *testing.T, dir string) map[string]string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.tmpl"))
	if err != nil {
		t.Fatal(err)
	}
	envCall := regexp.MustCompile(`\benv\s+"([A-Za-z_][A-Za-z0-9_]*)"`)
	out := map[string]string{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range envCall.FindAllStringSubmatch(string(b), -1) {
			out[m[1]] = "the template " + filepath.ToSlash(f)
		}
	}
	return out
}

// envCall is a direct read of an environment variable with a constant name.
type envCall struct{ name, pos string }

// directEnvReads returns the calls of os.Getenv, os.LookupEnv or a getenv function (an app's, or a
// parameter named so) whose argument is a string constant, in the non-test Go files under the dirs of
// root.
func directEnvReads(t *testing.T, root string, dirs ...string) []envCall {
	t.Helper()
	var calls []envCall
	fset := token.NewFileSet()
	for _, d := range dirs {
		err := filepath.WalkDir(filepath.Join(root, d), func(p string, e fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if e.IsDir() {
				if n := e.Name(); n == "testdata" || strings.HasPrefix(n, ".") {
					return filepath.SkipDir
				}
				calls = append(calls, packageEnvReads(t, fset, root, p)...)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return calls
}

// packageEnvReads is directEnvReads for the package in dir; positions are relative to root.
func packageEnvReads(t *testing.T, fset *token.FileSet, root, dir string) []envCall {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var files []*ast.File
	consts := map[string]string{}
	for _, e := range entries {
		if n := e.Name(); e.IsDir() || !strings.HasSuffix(n, ".go") || strings.HasSuffix(n, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, e.Name()), nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
		for _, d := range f.Decls {
			if g, ok := d.(*ast.GenDecl); ok && g.Tok == token.CONST {
				for _, s := range g.Specs {
					vs := s.(*ast.ValueSpec)
					for i, n := range vs.Names {
						if i < len(vs.Values) {
							if lit, ok := vs.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
								consts[n.Name], _ = strconv.Unquote(lit.Value)
							}
						}
					}
				}
			}
		}
	}
	var calls []envCall
	for _, f := range files {
		ast.Inspect(f, func(n ast.Node) bool {
			c, ok := n.(*ast.CallExpr)
			if !ok || len(c.Args) != 1 || !isEnvFunc(c.Fun) {
				return true
			}
			var name string
			switch a := c.Args[0].(type) {
			case *ast.BasicLit:
				if a.Kind == token.STRING {
					name, _ = strconv.Unquote(a.Value)
				}
			case *ast.Ident:
				name = consts[a.Name]
			}
			if name != "" {
				pos := fset.Position(c.Pos())
				if rel, err := filepath.Rel(root, pos.Filename); err == nil {
					pos.Filename = filepath.ToSlash(rel)
				}
				calls = append(calls, envCall{name: name, pos: pos.String()})
			}
			return true
		})
	}
	return calls
}

// isEnvFunc reports whether fn is os.Getenv, os.LookupEnv, or getenv (an identifier or a field).
func isEnvFunc(fn ast.Expr) bool {
	switch fn := fn.(type) {
	case *ast.Ident:
		return fn.Name == "getenv"
	case *ast.SelectorExpr:
		if x, ok := fn.X.(*ast.Ident); ok && x.Name == "os" {
			return fn.Sel.Name == "Getenv" || fn.Sel.Name == "LookupEnv"
		}
		return fn.Sel.Name == "getenv"
	}
	return false
}
