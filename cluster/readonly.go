package cluster

import (
	"fmt"
	"net/http"
	"strings"

	"k8s.io/apimachinery/pkg/runtime"
	k8stesting "k8s.io/client-go/testing"
)

// ReadOnlyError is a write wmcon refused because it runs with --read-only.
type ReadOnlyError struct {
	Verb     string // HTTP method or client-go verb
	Resource string // URL path or resource
}

func (e *ReadOnlyError) Error() string {
	return fmt.Sprintf("--read-only is set: refusing to %s %s (restart wmcon without --read-only to change the cluster)", e.Verb, e.Resource)
}

// reviewPaths are the POSTs that only ask a question (may I? who am I?) and store nothing.
var reviewPaths = []string{"/selfsubjectaccessreviews", "/selfsubjectrulesreviews", "/selfsubjectreviews"}

// readOnlyAllows tells whether an HTTP request may go to the API server under --read-only.
func readOnlyAllows(method, path string) bool {
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		return true
	case http.MethodPost:
		for _, p := range reviewPaths {
			if strings.HasSuffix(path, p) && (strings.HasPrefix(path, "/apis/authorization.k8s.io/") || strings.HasPrefix(path, "/apis/authentication.k8s.io/")) {
				return true
			}
		}
	}
	return false
}

// readOnlyTransport is the one guard of --read-only for every request to a real cluster: whatever code
// path tries to write (a cordon, an eviction, a host-key pin, a future action), the request never leaves
// the process.
type readOnlyTransport struct{ next http.RoundTripper }

func (t readOnlyTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if !readOnlyAllows(req.Method, req.URL.Path) {
		if req.Body != nil {
			req.Body.Close()
		}
		return nil, &ReadOnlyError{Verb: req.Method, Resource: req.URL.Path}
	}
	return t.next.RoundTrip(req)
}

// ReadOnly returns clients that refuse every write: on a real cluster a transport refuses any request but
// reads and access reviews; on the demo's fake clientsets a reactor does the same (the simulated
// kubelets' Node status updates excepted, since they stand in for the cluster, not for wmcon).
func (c Clients) ReadOnly() (Clients, error) {
	if c.REST != nil {
		cfg := *c.REST
		cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { return readOnlyTransport{next: rt} })
		return NewClients(&cfg)
	}
	for _, cs := range []any{c.Kube, c.Machine, c.Config, c.Dynamic} {
		if f, ok := cs.(reactorHolder); ok {
			f.PrependReactor("*", "*", refuseFakeWrite)
		}
	}
	return c, nil
}

// reactorHolder is what fake clientsets (and wrappers embedding them) offer.
type reactorHolder interface {
	PrependReactor(verb, resource string, reaction k8stesting.ReactionFunc)
}

// refuseFakeWrite is readOnlyTransport for fake clientsets.
func refuseFakeWrite(a k8stesting.Action) (bool, runtime.Object, error) {
	switch a.GetVerb() {
	case "get", "list", "watch":
		return false, nil, nil
	}
	res := a.GetResource().Resource
	if res == "nodes" && a.GetSubresource() == "status" {
		return false, nil, nil // the demo's simulated kubelets
	}
	if strings.HasPrefix(res, "selfsubject") {
		return false, nil, nil
	}
	if a.GetSubresource() != "" {
		res += "/" + a.GetSubresource()
	}
	return true, nil, &ReadOnlyError{Verb: a.GetVerb(), Resource: res}
}
