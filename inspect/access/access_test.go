package access

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	"k8s.io/apimachinery/pkg/runtime"
	kubefake "k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

// apiServer is a fake API server that knows the tokens "reader" (allowed) and "other" (not), and
// counts the reviews it answers.
func apiServer(t *testing.T, fail *bool) (*kubefake.Clientset, *int) {
	t.Helper()
	calls := 0
	c := kubefake.NewClientset()
	c.PrependReactor("create", "tokenreviews", func(a k8stesting.Action) (bool, runtime.Object, error) {
		calls++
		if *fail {
			return true, nil, errors.New("the API server is away")
		}
		tr := a.(k8stesting.CreateAction).GetObject().(*authenticationv1.TokenReview)
		switch tr.Spec.Token {
		case "reader", "other":
			tr.Status = authenticationv1.TokenReviewStatus{Authenticated: true,
				User: authenticationv1.UserInfo{Username: "system:serviceaccount:mon:" + tr.Spec.Token, Groups: []string{"system:serviceaccounts"}}}
		}
		return true, tr, nil
	})
	c.PrependReactor("create", "subjectaccessreviews", func(a k8stesting.Action) (bool, runtime.Object, error) {
		calls++
		sar := a.(k8stesting.CreateAction).GetObject().(*authorizationv1.SubjectAccessReview)
		ra := sar.Spec.ResourceAttributes
		want := authorizationv1.ResourceAttributes{Group: Group, Resource: Resource, Subresource: Subresource, Name: "default", Verb: Verb}
		if ra == nil || *ra != want {
			t.Errorf("access review of %+v, want %+v", ra, want)
		}
		sar.Status.Allowed = sar.Spec.User == "system:serviceaccount:mon:reader"
		if !sar.Status.Allowed {
			sar.Status.Reason = "no RBAC policy matched"
		}
		return true, sar, nil
	})
	return c, &calls
}

func TestReviewer(t *testing.T) {
	fail := false
	client, calls := apiServer(t, &fail)
	r := New(client, "default", nil)
	now := time.Unix(1_000_000, 0)
	r.now = func() time.Time { return now }
	h := r.Wrap(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("metrics")) }))
	get := func(auth string) (int, string) {
		req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec.Code, rec.Body.String()
	}
	for _, c := range []struct {
		auth string
		code int
		body string
	}{
		{"", http.StatusUnauthorized, "needs a bearer token"},
		{"Basic dTpw", http.StatusUnauthorized, "needs a bearer token"},
		{"Bearer nobody", http.StatusUnauthorized, "does not authenticate"},
		{"Bearer other", http.StatusForbidden, "no RBAC policy matched"},
		{"Bearer reader", http.StatusOK, "metrics"},
		{"bearer  reader", http.StatusOK, "metrics"},
	} {
		if code, body := get(c.auth); code != c.code || !strings.Contains(body, c.body) {
			t.Errorf("GET /metrics with %q = %d %q, want %d with %q", c.auth, code, body, c.code, c.body)
		}
	}
	// Answers are reused: an allowed token for allowTTL, a refused one for denyTTL; an API error is
	// not cached.
	before := *calls
	get("Bearer reader")
	get("Bearer other")
	if *calls != before {
		t.Errorf("%d reviews for tokens answered a moment ago, want 0", *calls-before)
	}
	now = now.Add(denyTTL + time.Second)
	get("Bearer reader")
	get("Bearer other")
	if *calls != before+2 {
		t.Errorf("%d reviews after the deny TTL, want 2 (the refused token's TokenReview and access review)", *calls-before)
	}
	fail = true
	now = now.Add(allowTTL + time.Second)
	if code, _ := get("Bearer reader"); code != http.StatusInternalServerError {
		t.Errorf("GET while the API server fails = %d, want 500", code)
	}
	fail = false
	if code, _ := get("Bearer reader"); code != http.StatusOK {
		t.Errorf("GET after the API server is back = %d, want 200", code)
	}
}
