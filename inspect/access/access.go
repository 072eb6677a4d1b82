package access

import (
	"context"
	"crypto/sha256"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// Bounds of the review cache and of one review.
const (
	// allowTTL and denyTTL are how long an answer is reused: a role granted to a scraper counts
	// within denyTTL, a role taken away within allowTTL (OpenShift's router uses the same two).
	allowTTL = 2 * time.Minute
	denyTTL  = 5 * time.Second
	// maxCached bounds the cache; it is emptied when full.
	maxCached = 1024
	// reviewTimeout bounds the two API calls of one review.
	reviewTimeout = 5 * time.Second
)

// Attributes of the access a scraper needs, as OpenShift's router asks them.
const (
	Group       = "route.openshift.io"
	Resource    = "routers"
	Subresource = "metrics"
	Verb        = "get"
)

// Reviewer authorizes requests by their bearer token through the API server. Create it with New.
type Reviewer struct {
	client kubernetes.Interface
	router string
	log    *slog.Logger
	now    func() time.Time

	mu    sync.Mutex
	cache map[[sha256.Size]byte]answer
}

// answer is a cached review.
type answer struct {
	status  int    // http.StatusOK, or the refusal's status
	reason  string // why it was refused
	expires time.Time
}

// New returns a Reviewer that asks client's API server, for the router named router (ROUTER_NAME). A
// nil log discards.
func New(client kubernetes.Interface, router string, log *slog.Logger) *Reviewer {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Reviewer{client: client, router: router, log: log, now: time.Now, cache: map[[sha256.Size]byte]answer{}}
}

// Wrap serves next only to requests whose bearer token the API server authenticates and authorizes:
// 401 without a token or with one it does not authenticate, 403 when its user may not get
// routers/metrics, 500 when the API server cannot be asked (not cached).
func (r *Reviewer) Wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		token, ok := bearer(req)
		if !ok {
			w.Header().Set("WWW-Authenticate", `Bearer realm="haroute"`)
			http.Error(w, "unauthorized: /metrics needs a bearer token of a user allowed to get routers/metrics in route.openshift.io", http.StatusUnauthorized)
			return
		}
		a, err := r.review(req.Context(), token)
		if err != nil {
			r.log.Warn("reviewing a /metrics token", "error", err)
			http.Error(w, "the token could not be reviewed: "+err.Error(), http.StatusInternalServerError)
			return
		}
		if a.status != http.StatusOK {
			http.Error(w, a.reason, a.status)
			return
		}
		next.ServeHTTP(w, req)
	})
}

// bearer returns the request's bearer token.
func bearer(req *http.Request) (string, bool) {
	scheme, token, ok := strings.Cut(req.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	token = strings.TrimSpace(token)
	return token, token != ""
}

// review returns the cached answer for token, or asks the API server.
func (r *Reviewer) review(ctx context.Context, token string) (answer, error) {
	key := sha256.Sum256([]byte(token))
	now := r.now()
	r.mu.Lock()
	a, ok := r.cache[key]
	r.mu.Unlock()
	if ok && now.Before(a.expires) {
		return a, nil
	}
	ctx, cancel := context.WithTimeout(ctx, reviewTimeout)
	defer cancel()
	a, err := r.ask(ctx, token)
	if err != nil {
		return answer{}, err
	}
	ttl := allowTTL
	if a.status != http.StatusOK {
		ttl = denyTTL
	}
	a.expires = now.Add(ttl)
	r.mu.Lock()
	if len(r.cache) >= maxCached {
		clear(r.cache)
	}
	r.cache[key] = a
	r.mu.Unlock()
	return a, nil
}

// ask runs the TokenReview and the SubjectAccessReview of token.
func (r *Reviewer) ask(ctx context.Context, token string) (answer, error) {
	tr, err := r.client.AuthenticationV1().TokenReviews().Create(ctx,
		&authenticationv1.TokenReview{Spec: authenticationv1.TokenReviewSpec{Token: token}}, metav1.CreateOptions{})
	if err != nil {
		return answer{}, fmt.Errorf("token review: %w", err)
	}
	if !tr.Status.Authenticated {
		return answer{status: http.StatusUnauthorized, reason: "unauthorized: the API server does not authenticate the token"}, nil
	}
	u := tr.Status.User
	extra := make(map[string]authorizationv1.ExtraValue, len(u.Extra))
	for k, v := range u.Extra {
		extra[k] = authorizationv1.ExtraValue(v)
	}
	sar, err := r.client.AuthorizationV1().SubjectAccessReviews().Create(ctx, &authorizationv1.SubjectAccessReview{
		Spec: authorizationv1.SubjectAccessReviewSpec{
			User: u.Username, UID: u.UID, Groups: u.Groups, Extra: extra,
			ResourceAttributes: &authorizationv1.ResourceAttributes{
				Group: Group, Resource: Resource, Subresource: Subresource, Name: r.router, Verb: Verb,
			},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		return answer{}, fmt.Errorf("subject access review: %w", err)
	}
	if !sar.Status.Allowed {
		reason := fmt.Sprintf("forbidden: %s may not %s %s/%s %q in %s", u.Username, Verb, Resource, Subresource, r.router, Group)
		if sar.Status.Reason != "" {
			reason += ": " + sar.Status.Reason
		}
		return answer{status: http.StatusForbidden, reason: reason}, nil
	}
	return answer{status: http.StatusOK}, nil
}
