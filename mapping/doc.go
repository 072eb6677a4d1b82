// Package mapping translates OpenShift Routes, Services, EndpointSlices, Namespaces and the Secrets that
// Routes reference into haroute's desired state (mapping/model), with OpenShift's semantics: termination
// kinds and insecure policies, paths, wildcards, weighted alternate backends, oldest-wins conflicts,
// namespace ownership, sharding and the haproxy.router.openshift.io annotations.
//
// Translate is pure: no clock, no I/O, no randomness; identical input gives an identical model. Every
// invalid input is rejected for its own Route only, as a Problem with an OpenShift-style reason.
package mapping
