package source

import (
	"errors"
	"fmt"
	"os"

	"github.com/haroute/haroute/mapping"
)

// LoadDir reads the manifest files under dir (the same files a Folder watches: *.yaml, *.yml and
// *.json, recursively, in lexical order, leaving out names that start with "."; see listFolder),
// decodes each with mapping.DecodeManifests and merges them into one Input in that order. Symbolic
// links to files are read (a mounted ConfigMap is made of them); links to directories are not
// followed, except dir itself. An object defined twice (same kind, namespace and name) is an error
// naming both files, and so is a directory that cannot be listed.
func LoadDir(dir string) (mapping.Input, error) {
	st, err := os.Stat(dir)
	if err != nil {
		return mapping.Input{}, fmt.Errorf("manifests: %w", err)
	}
	if !st.IsDir() {
		return mapping.Input{}, fmt.Errorf("manifests: %s is not a directory", dir)
	}
	list := listFolder(dir)
	if len(list.problems) > 0 {
		return mapping.Input{}, list.problems[0].Err
	}
	var in mapping.Input
	seen := newObjectIndex()
	for _, path := range list.files {
		data, err := os.ReadFile(path)
		if err != nil {
			return mapping.Input{}, fmt.Errorf("reading manifests: %w", err)
		}
		part, err := mapping.DecodeManifests(path, data)
		if err != nil {
			return mapping.Input{}, err
		}
		seen.add(path, part)
		appendInput(&in, part)
	}
	if err := seen.err(); err != nil {
		return mapping.Input{}, err
	}
	return in, nil
}

// objectIndex remembers where each object was defined, to report duplicates.
type objectIndex struct {
	where map[string]string
	dups  []string
}

func newObjectIndex() *objectIndex {
	return &objectIndex{where: map[string]string{}}
}

func (x *objectIndex) add(path string, in mapping.Input) {
	for _, id := range objectIDs(in) {
		x.note(path, id)
	}
}

// objectIDs names every object of in, in order: "Kind namespace/name", or "Kind name" for a Namespace.
func objectIDs(in mapping.Input) []string {
	var ids []string
	id := func(kind, namespace, name string) {
		if namespace == "" {
			ids = append(ids, kind+" "+name)
			return
		}
		ids = append(ids, kind+" "+namespace+"/"+name)
	}
	for _, r := range in.Routes {
		id("Route", r.Namespace, r.Name)
	}
	for _, s := range in.Services {
		id("Service", s.Namespace, s.Name)
	}
	for _, s := range in.EndpointSlices {
		id("EndpointSlice", s.Namespace, s.Name)
	}
	for _, n := range in.Namespaces {
		id("Namespace", "", n.Name)
	}
	for _, s := range in.Secrets {
		id("Secret", s.Namespace, s.Name)
	}
	return ids
}

func (x *objectIndex) note(path, id string) {
	prev, ok := x.where[id]
	switch {
	case !ok:
		x.where[id] = path
	case prev == path:
		x.dups = append(x.dups, fmt.Sprintf("%s is defined twice in %s", id, path))
	default:
		x.dups = append(x.dups, fmt.Sprintf("%s is defined in both %s and %s", id, prev, path))
	}
}

// err reports the first duplicate and how many more there are, on one line.
func (x *objectIndex) err() error {
	switch len(x.dups) {
	case 0:
		return nil
	case 1:
		return errors.New(x.dups[0])
	default:
		return fmt.Errorf("%s (and %d more duplicate objects)", x.dups[0], len(x.dups)-1)
	}
}
