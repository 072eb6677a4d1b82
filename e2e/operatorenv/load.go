package operatorenv

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

// Deployment is one captured variant: the router container of the Deployment
// the operator renders for one IngressController.
type Deployment struct {
	// Variant is the file's base name without .yaml; Load fills it in.
	Variant string `json:"-"`
	// Provenance is the file's leading comment block, without the "# ";
	// Load fills it in.
	Provenance string `json:"-"`

	// IngressController is the IngressController given (metadata and spec).
	IngressController map[string]any `json:"ingressController"`
	// Cluster describes the cluster config objects given alongside it.
	Cluster map[string]any `json:"cluster"`
	// ComputedStatus is the status the operator derived before rendering:
	// domain, endpoint publishing strategy, whether PROXY protocol is needed.
	ComputedStatus map[string]any `json:"computedStatus"`

	// Container is the name of the container the env belongs to ("router").
	Container string `json:"container"`
	// EnvVars is the container's env in rendered order.
	EnvVars []corev1.EnvVar `json:"env"`
	// VolumeMounts are the container's mounts.
	VolumeMounts []corev1.VolumeMount `json:"volumeMounts"`
	// Volumes are the pod volumes.
	Volumes []Volume `json:"volumes"`
	// OtherContainers are the pod's other containers (init containers, the
	// HAProxy sidecar, the access-log sidecar), in brief.
	OtherContainers []Container `json:"otherContainers"`
}

// Volume is a pod volume reduced to its kind and what it names.
type Volume struct {
	Name string `json:"name"`
	// Kind is secret, configMap, emptyDir or projected.
	Kind string `json:"kind"`
	// Source is the secret or configmap name, for those kinds.
	Source string `json:"source,omitempty"`
	// Sources lists a projected volume's sources.
	Sources []string `json:"sources,omitempty"`
}

// Container is another container of the pod, in brief.
type Container struct {
	Name          string               `json:"name"`
	InitContainer bool                 `json:"initContainer"`
	RestartPolicy string               `json:"restartPolicy,omitempty"`
	Command       []string             `json:"command,omitempty"`
	Args          []string             `json:"args,omitempty"`
	EnvCount      int                  `json:"envCount,omitempty"`
	VolumeMounts  []corev1.VolumeMount `json:"volumeMounts"`
}

// Env returns the entries that have a plain value, by name. Entries set
// through valueFrom are left out.
func (d Deployment) Env() map[string]string {
	env := make(map[string]string, len(d.EnvVars))
	for _, e := range d.EnvVars {
		if e.ValueFrom == nil {
			env[e.Name] = e.Value
		}
	}
	return env
}

// Load reads every *.yaml file in dir and returns the variants by name.
func Load(dir string) (map[string]Deployment, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		return nil, err
	}
	sort.Strings(paths)
	out := make(map[string]Deployment, len(paths))
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		var d Deployment
		if err := yaml.UnmarshalStrict(data, &d); err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		d.Variant = strings.TrimSuffix(filepath.Base(p), ".yaml")
		d.Provenance = leadingComment(data)
		out[d.Variant] = d
	}
	return out, nil
}

// leadingComment returns the comment lines at the top of data, joined by
// newlines, with their "#" and one following space removed.
func leadingComment(data []byte) string {
	var lines []string
	s := bufio.NewScanner(bytes.NewReader(data))
	for s.Scan() {
		line, ok := strings.CutPrefix(s.Text(), "#")
		if !ok {
			break
		}
		lines = append(lines, strings.TrimPrefix(line, " "))
	}
	return strings.Join(lines, "\n")
}
