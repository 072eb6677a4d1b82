// Package dataplane is a read-only view of the live HAProxy in the shapes of HAProxy's Data Plane API:
// the servers of a backend, the entries of a map, the process information and the loaded
// certificates, as the models of client-native (github.com/haproxytech/client-native/v6/models), and
// an http.Handler serving them under the Data Plane API v3 runtime paths (Handler).
//
// What it reads comes from HAProxy's admin socket through runtime/socket, whose helpers check every
// reply, with `show …` commands only: nothing here changes HAProxy's state. Of client-native only
// the models package is used; its runtime client is not (see runtime/socket for why haroute has its
// own). The handler refuses every write: HAProxy's state is derived from Kubernetes objects, and a
// change made through the socket would be undone by haroute's next update or drift repair.
//
// It imports no Kubernetes code and, of mapping/, only mapping/render (for the runtime paths of the
// maps). docs/dataplane.md describes the paths served.
package dataplane
