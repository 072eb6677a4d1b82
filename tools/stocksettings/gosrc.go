package main

import (
	"bufio"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
)

// envHelpers are the stock router's functions whose first argument names the environment variable
// they read (pkg/cmd/infra/router and pkg/router/template).
var envHelpers = map[string]bool{"env": true, "envInt": true, "getIntervalFromEnv": true, "envVarAsStrings": true}

// osEnvFuncs are the os functions that read an environment variable named by their first argument.
var osEnvFuncs = map[string]bool{"Getenv": true, "LookupEnv": true}

// goFile is one parsed file of a package.
type goFile struct {
	file       *ast.File
	importPath string // the package's import path
}

// module resolves string constants of a Go module's packages (and of its vendored ones).
type module struct {
	root, path string
	fset       *token.FileSet
	pkgs       map[string]*constPkg // by import path
}

// constPkg is a package's name and its constants' expressions.
type constPkg struct {
	name   string
	consts map[string]ast.Expr
	files  []*ast.File
}

// newModule reads root/go.mod for the module path.
func newModule(root string) (*module, error) {
	f, err := os.Open(filepath.Join(root, "go.mod"))
	if err != nil {
		return nil, fmt.Errorf("reading the module path: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if p, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "module "); ok {
			return &module{root: root, path: strings.Trim(strings.TrimSpace(p), `"`), fset: token.NewFileSet(), pkgs: map[string]*constPkg{}}, nil
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s/go.mod: %w", root, err)
	}
	return nil, fmt.Errorf("%s/go.mod: no module line", root)
}

// dirOf returns the directory of an import path: in the module, else under vendor/.
func (m *module) dirOf(importPath string) string {
	if rel, ok := strings.CutPrefix(importPath, m.path+"/"); ok {
		return filepath.Join(m.root, filepath.FromSlash(rel))
	}
	return filepath.Join(m.root, "vendor", filepath.FromSlash(importPath))
}

// importPathOf returns the import path of a directory of the module.
func (m *module) importPathOf(dir string) (string, error) {
	rel, err := filepath.Rel(m.root, dir)
	if err != nil {
		return "", fmt.Errorf("%s: %w", dir, err)
	}
	if rel == "." {
		return m.path, nil
	}
	return path.Join(m.path, filepath.ToSlash(rel)), nil
}

// pkg loads (once) the non-test files of a package and its constants. A package that is not there
// (the standard library, a module not vendored) has no constants.
func (m *module) pkg(importPath string) (*constPkg, error) {
	if p, ok := m.pkgs[importPath]; ok {
		return p, nil
	}
	p := &constPkg{consts: map[string]ast.Expr{}}
	m.pkgs[importPath] = p
	dir := m.dirOf(importPath)
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return p, nil
	} else if err != nil {
		return nil, fmt.Errorf("reading package %s: %w", importPath, err)
	}
	for _, e := range entries {
		n := e.Name()
		if e.IsDir() || !strings.HasSuffix(n, ".go") || strings.HasSuffix(n, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(m.fset, filepath.Join(dir, n), nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, fmt.Errorf("parsing: %w", err)
		}
		p.name = f.Name.Name
		p.files = append(p.files, f)
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.CONST {
				continue
			}
			for _, spec := range g.Specs {
				vs := spec.(*ast.ValueSpec)
				for i, name := range vs.Names {
					if i < len(vs.Values) {
						p.consts[name.Name] = vs.Values[i]
					}
				}
			}
		}
	}
	return p, nil
}

// resolve returns the string constant e stands for in file f of package importPath: a string
// literal, a constant of the package or of an imported one, a conversion of one to a named string
// type, or a sum of such.
func (m *module) resolve(e ast.Expr, f *ast.File, importPath string, depth int) (string, bool) {
	if depth > 20 {
		return "", false
	}
	switch e := e.(type) {
	case *ast.BasicLit:
		if e.Kind != token.STRING {
			return "", false
		}
		s, err := strconv.Unquote(e.Value)
		return s, err == nil
	case *ast.ParenExpr:
		return m.resolve(e.X, f, importPath, depth+1)
	case *ast.BinaryExpr:
		if e.Op != token.ADD {
			return "", false
		}
		x, ok1 := m.resolve(e.X, f, importPath, depth+1)
		y, ok2 := m.resolve(e.Y, f, importPath, depth+1)
		return x + y, ok1 && ok2
	case *ast.CallExpr:
		// A conversion such as routev1.TLSTerminationType("edge").
		if len(e.Args) == 1 {
			return m.resolve(e.Args[0], f, importPath, depth+1)
		}
	case *ast.Ident:
		p, err := m.pkg(importPath)
		if err != nil {
			return "", false
		}
		if c, ok := p.consts[e.Name]; ok {
			return m.resolve(c, m.fileOf(p, c), importPath, depth+1)
		}
	case *ast.SelectorExpr:
		x, ok := e.X.(*ast.Ident)
		if !ok {
			return "", false
		}
		imp := m.importOf(f, x.Name)
		if imp == "" {
			return "", false
		}
		p, err := m.pkg(imp)
		if err != nil {
			return "", false
		}
		if c, ok := p.consts[e.Sel.Name]; ok {
			return m.resolve(c, m.fileOf(p, c), imp, depth+1)
		}
	}
	return "", false
}

// fileOf returns the file of p that holds the node n.
func (m *module) fileOf(p *constPkg, n ast.Node) *ast.File {
	for _, f := range p.files {
		if f.FileStart <= n.Pos() && n.Pos() <= f.FileEnd {
			return f
		}
	}
	return nil
}

// importOf returns the import path file f refers to as name, or "".
func (m *module) importOf(f *ast.File, name string) string {
	if f == nil {
		return ""
	}
	for _, imp := range f.Imports {
		p, err := strconv.Unquote(imp.Path.Value)
		if err != nil {
			continue
		}
		switch {
		case imp.Name != nil && imp.Name.Name == name:
			return p
		case imp.Name != nil:
			continue
		case path.Base(p) == name:
			return p
		}
		// An import without alias whose package name differs from its last element.
		if q, err := m.pkg(p); err == nil && q.name == name {
			return p
		}
	}
	return ""
}

// goFiles returns the parsed non-test Go files under dirs of the module (vendor/ and testdata/ left
// out), package by package.
func (m *module) goFiles(dirs []string) ([]goFile, error) {
	var files []goFile
	for _, d := range dirs {
		root := filepath.Join(m.root, d)
		err := filepath.WalkDir(root, func(p string, e fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if !e.IsDir() {
				return nil
			}
			if n := e.Name(); p != root && (n == "vendor" || n == "testdata" || strings.HasPrefix(n, ".") || strings.HasPrefix(n, "_")) {
				return filepath.SkipDir
			}
			ip, err := m.importPathOf(p)
			if err != nil {
				return err
			}
			pkg, err := m.pkg(ip)
			if err != nil {
				return err
			}
			for _, f := range pkg.files {
				files = append(files, goFile{file: f, importPath: ip})
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("walking %s: %w", root, err)
		}
	}
	return files, nil
}

// scanRouterGo returns the environment variables and annotation keys the router's Go code under dirs
// reads. A read whose name is not a constant is an error, unless it is inside one of the helpers
// (whose parameter is the name).
func scanRouterGo(root string, dirs []string) (env, annotations []string, err error) {
	m, err := newModule(root)
	if err != nil {
		return nil, nil, err
	}
	files, err := m.goFiles(dirs)
	if err != nil {
		return nil, nil, err
	}
	var errs []error
	for _, gf := range files {
		for _, d := range gf.file.Decls {
			fd, isFunc := d.(*ast.FuncDecl)
			inHelper := isFunc && fd.Recv == nil && envHelpers[fd.Name.Name]
			ast.Inspect(d, func(n ast.Node) bool {
				switch n := n.(type) {
				case *ast.CallExpr:
					if !m.isEnvRead(n, gf) || len(n.Args) == 0 {
						return true
					}
					name, ok := m.resolve(n.Args[0], gf.file, gf.importPath, 0)
					switch {
					case ok:
						env = append(env, name)
					case !inHelper:
						errs = append(errs, fmt.Errorf("%s: an environment read whose name is no constant: teach tools/stocksettings to resolve it", m.fset.Position(n.Pos())))
					}
				case *ast.IndexExpr:
					if isAnnotationsMap(n.X) {
						if key, ok := m.resolve(n.Index, gf.file, gf.importPath, 0); ok {
							annotations = append(annotations, key)
						}
					}
				}
				return true
			})
		}
	}
	return env, annotations, errors.Join(errs...)
}

// isEnvRead reports whether c calls os.Getenv, os.LookupEnv or one of the router's env helpers.
func (m *module) isEnvRead(c *ast.CallExpr, gf goFile) bool {
	switch fn := c.Fun.(type) {
	case *ast.Ident:
		return envHelpers[fn.Name]
	case *ast.SelectorExpr:
		x, ok := fn.X.(*ast.Ident)
		return ok && osEnvFuncs[fn.Sel.Name] && m.importOf(gf.file, x.Name) == "os"
	}
	return false
}

// isAnnotationsMap reports whether e is x.Annotations or x.GetAnnotations().
func isAnnotationsMap(e ast.Expr) bool {
	switch e := e.(type) {
	case *ast.SelectorExpr:
		return e.Sel.Name == "Annotations"
	case *ast.CallExpr:
		s, ok := e.Fun.(*ast.SelectorExpr)
		return ok && s.Sel.Name == "GetAnnotations" && len(e.Args) == 0
	}
	return false
}

// routeSpecFields returns the json paths of RouteSpec's fields in the route/v1 package at dir.
func routeSpecFields(dir string) ([]string, error) {
	fset := token.NewFileSet()
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("the route API: %w", err)
	}
	structs := map[string]*ast.StructType{}
	for _, e := range entries {
		n := e.Name()
		if e.IsDir() || !strings.HasSuffix(n, ".go") || strings.HasSuffix(n, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, n), nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, fmt.Errorf("parsing the route API: %w", err)
		}
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.TYPE {
				continue
			}
			for _, spec := range g.Specs {
				ts := spec.(*ast.TypeSpec)
				if st, ok := ts.Type.(*ast.StructType); ok {
					structs[ts.Name.Name] = st
				}
			}
		}
	}
	if structs["RouteSpec"] == nil {
		return nil, fmt.Errorf("%s: no RouteSpec type", dir)
	}
	var paths []string
	var walk func(prefix, typ string, seen map[string]bool) error
	walk = func(prefix, typ string, seen map[string]bool) error {
		if seen[typ] {
			return fmt.Errorf("route API: %s nests itself at %s", typ, prefix)
		}
		seen[typ] = true
		defer delete(seen, typ)
		for _, fld := range structs[typ].Fields.List {
			name, inline := jsonName(fld)
			if name == "-" {
				continue
			}
			p := prefix
			if !inline {
				p = prefix + "." + name
			}
			t := fld.Type
			if star, ok := t.(*ast.StarExpr); ok {
				t = star.X
			}
			if id, ok := t.(*ast.Ident); ok && structs[id.Name] != nil {
				if err := walk(p, id.Name, seen); err != nil {
					return err
				}
				continue
			}
			paths = append(paths, p)
		}
		return nil
	}
	if err := walk("spec", "RouteSpec", map[string]bool{}); err != nil {
		return nil, err
	}
	return paths, nil
}

// jsonName returns a field's json name (its Go name without a tag) and whether it is inlined.
func jsonName(f *ast.Field) (string, bool) {
	goName := ""
	if len(f.Names) > 0 {
		goName = f.Names[0].Name
	}
	if f.Tag != nil {
		tag, err := strconv.Unquote(f.Tag.Value)
		if err == nil {
			if v, ok := lookupTag(tag, "json"); ok {
				name, opts, _ := strings.Cut(v, ",")
				if strings.Contains(","+opts+",", ",inline,") || (name == "" && goName == "") {
					return "", true
				}
				if name != "" {
					return name, false
				}
			}
		}
	}
	if goName == "" {
		return "", true // an embedded struct without a tag is inlined by encoding/json
	}
	return goName, false
}

// lookupTag is reflect.StructTag.Lookup on a tag string.
func lookupTag(tag, key string) (string, bool) {
	for tag != "" {
		tag = strings.TrimLeft(tag, " ")
		k, rest, ok := strings.Cut(tag, ":")
		if !ok || !strings.HasPrefix(rest, `"`) {
			return "", false
		}
		end := 1
		for end < len(rest) && rest[end] != '"' {
			if rest[end] == '\\' {
				end++
			}
			end++
		}
		if end >= len(rest) {
			return "", false
		}
		v, err := strconv.Unquote(rest[:end+1])
		if err != nil {
			return "", false
		}
		if k == key {
			return v, true
		}
		tag = rest[end+1:]
	}
	return "", false
}

// operatorGoEnv returns the names of the corev1.EnvVar literals in the operator's ingress controller.
// A Name that is no constant is an error.
func operatorGoEnv(root string) ([]string, error) {
	m, err := newModule(root)
	if err != nil {
		return nil, err
	}
	ip, err := m.importPathOf(filepath.Join(root, filepath.FromSlash(operatorIngress)))
	if err != nil {
		return nil, err
	}
	p, err := m.pkg(ip)
	if err != nil {
		return nil, err
	}
	if len(p.files) == 0 {
		return nil, fmt.Errorf("%s: no Go files", filepath.Join(root, filepath.FromSlash(operatorIngress)))
	}
	var names []string
	var errs []error
	addName := func(lit *ast.CompositeLit, f *ast.File) {
		for _, el := range lit.Elts {
			kv, ok := el.(*ast.KeyValueExpr)
			if k, isIdent := kv.Key.(*ast.Ident); !ok || !isIdent || k.Name != "Name" {
				continue
			}
			if n, ok := m.resolve(kv.Value, f, ip, 0); ok {
				names = append(names, n)
			} else {
				errs = append(errs, fmt.Errorf("%s: an EnvVar whose Name is no constant: teach tools/stocksettings to resolve it", m.fset.Position(kv.Pos())))
			}
		}
	}
	for _, f := range p.files {
		ast.Inspect(f, func(n ast.Node) bool {
			lit, ok := n.(*ast.CompositeLit)
			if !ok {
				return true
			}
			switch {
			case isEnvVarType(lit.Type):
				addName(lit, f)
			case isEnvVarSlice(lit.Type):
				// []corev1.EnvVar{{Name: ...}}: the elements' type is implied.
				for _, el := range lit.Elts {
					if inner, ok := el.(*ast.CompositeLit); ok && inner.Type == nil {
						addName(inner, f)
					}
				}
			}
			return true
		})
	}
	return names, errors.Join(errs...)
}

// isEnvVarType reports whether e is corev1.EnvVar (any alias of the package).
func isEnvVarType(e ast.Expr) bool {
	s, ok := e.(*ast.SelectorExpr)
	return ok && s.Sel.Name == "EnvVar"
}

// isEnvVarSlice reports whether e is []corev1.EnvVar.
func isEnvVarSlice(e ast.Expr) bool {
	a, ok := e.(*ast.ArrayType)
	return ok && isEnvVarType(a.Elt)
}
