// Package model holds haroute's desired state: what HAProxy should serve, independent of where it came
// from (Kubernetes objects or manifest files) and of how it is delivered (a rendered config or runtime
// commands). mapping.Translate produces it, mapping/render turns it into files, and the planner diffs two
// of them. It imports only the standard library; every slice is kept sorted so that two equal states
// compare and render byte-identically.
package model
