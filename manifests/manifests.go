// Package manifests holds the kustomize tree that deploys haroute (base/, crd/, overlays/) and
// renders its variants the way `kubectl kustomize` does, for the tests that prove them: unit checks
// of the rendered objects, a server-side dry-run against a real API server, the containers' command
// lines parsed by the real binaries and a replay of the pod as processes.
package manifests

import (
	"embed"
	"fmt"
	"io/fs"
	"path"

	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"
)

// tree is the kustomize tree, as the repository holds it.
//
//go:embed base crd overlays
var tree embed.FS

// Variants returns the folders a user renders, each a kustomization.
func Variants() []string {
	return []string{"base", "crd", "overlays/kubernetes", "overlays/openshift", "overlays/sharded", "overlays/hostnetwork"}
}

// Object is one rendered object.
type Object struct {
	APIVersion, Kind, Namespace, Name string
	// YAML is the object as kustomize prints it.
	YAML []byte
}

// Render returns the objects of variant (one of Variants), in kustomize's order.
func Render(variant string) ([]Object, error) {
	mem := filesys.MakeFsInMemory()
	err := fs.WalkDir(tree, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := tree.ReadFile(p)
		if err != nil {
			return err
		}
		return mem.WriteFile(path.Join("/", p), data)
	})
	if err != nil {
		return nil, fmt.Errorf("manifests: copying the tree: %w", err)
	}
	res, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(mem, path.Join("/", variant))
	if err != nil {
		return nil, fmt.Errorf("manifests: kustomize %s: %w", variant, err)
	}
	var out []Object
	for _, r := range res.Resources() {
		b, err := r.AsYAML()
		if err != nil {
			return nil, fmt.Errorf("manifests: %s: %s: %w", variant, r.CurId(), err)
		}
		var meta struct {
			APIVersion string `json:"apiVersion"`
			Kind       string `json:"kind"`
			Metadata   struct {
				Name      string `json:"name"`
				Namespace string `json:"namespace"`
			} `json:"metadata"`
		}
		if err := yaml.Unmarshal(b, &meta); err != nil {
			return nil, fmt.Errorf("manifests: %s: %w", variant, err)
		}
		out = append(out, Object{
			APIVersion: meta.APIVersion, Kind: meta.Kind,
			Namespace: meta.Metadata.Namespace, Name: meta.Metadata.Name, YAML: b,
		})
	}
	return out, nil
}

// Decode returns the objects of kind in objs, decoded strictly into T (a field T lacks is an error).
func Decode[T any](objs []Object, kind string) ([]T, error) {
	var out []T
	for _, o := range objs {
		if o.Kind != kind {
			continue
		}
		var v T
		if err := yaml.UnmarshalStrict(o.YAML, &v); err != nil {
			return nil, fmt.Errorf("manifests: %s %s/%s: %w", kind, o.Namespace, o.Name, err)
		}
		out = append(out, v)
	}
	return out, nil
}
