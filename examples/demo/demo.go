// Package demo holds the manifests `haroute demo` copies into the folder it watches: templates of a
// plain HTTP Route, a path Route, an edge Route, a passthrough Route and a weighted Route, completed at
// start with the port of the demo's backends and a certificate generated for the edge Route's host.
// The templates end in .yaml.tmpl, so folder readers (`haroute render --manifests examples`) skip them.
package demo

import "embed"

// Templates are the *.yaml.tmpl files (text/template, see Data), and *.yaml.off.tmpl: manifests the
// demo writes switched off (named *.yaml.off), for the user to switch on.
//
//go:embed *.yaml.tmpl *.yaml.off.tmpl
var Templates embed.FS

// Data fills the templates.
type Data struct {
	// Port is the port every demo backend listens on (each on its own 127.0.0.x address).
	Port int
	// EdgeCertificate and EdgeKey are the PEM certificate and key of the edge Route's host.
	EdgeCertificate, EdgeKey string
}
