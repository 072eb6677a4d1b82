// Package access decides who may read haroute's /metrics in a cluster, the way OpenShift's router
// decides it: the request carries a bearer token, the API server authenticates it (a TokenReview) and
// authorizes its user for `get` on the subresource `metrics` of the `routers` resource of the group
// route.openshift.io, named after the router (a SubjectAccessReview). Answers are cached briefly, so
// that a scraper does not cost two API calls per scrape.
package access
