// Package source produces the snapshots (mapping.Input) that haroute translates. LoadDir reads a folder
// of manifest files once (haroute render); Folder watches one (haroute run --manifests), keeping each
// broken file's last good content in force and reporting its error with file and line, holding the
// content in force of a file rewritten in place while its new content drops objects and has not
// settled, and, with a cache directory, keeping every file's content in force across a restart;
// Cluster watches the Kubernetes API through shared informers (Routes, Services, EndpointSlices,
// Namespaces for NAMESPACE_LABELS, and only the Secrets that Routes reference).
package source
