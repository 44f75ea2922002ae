package kubeapi

import (
	"slices"

	"github.com/wmcon/wmcon/config"
)

// Option changes what StartMain sets up.
type Option func(*options)

type options struct {
	crds       []CRD
	namespaces []string
	extraFlags []string
	auditLog   string

	controllerManager bool
}

// DefaultNamespaces are the namespaces WMCO's objects live in, created by Start unless told otherwise.
var DefaultNamespaces = []string{config.OperatorNamespace, config.MachineAPINamespace, config.OpenShiftConfigNS}

func defaultOptions() options {
	return options{crds: slices.Clone(AllCRDs), namespaces: slices.Clone(DefaultNamespaces)}
}

// WithCRDs loads only these CRDs instead of AllCRDs; WithCRDs() loads none, for "API absent" tests.
func WithCRDs(crds ...CRD) Option {
	return func(o *options) { o.crds = slices.Clone(crds) }
}

// WithNamespaces creates these namespaces instead of DefaultNamespaces; WithNamespaces() creates none.
func WithNamespaces(namespaces ...string) Option {
	return func(o *options) { o.namespaces = slices.Clone(namespaces) }
}

// WithAPIServerFlags appends flags (--name=value) to kube-apiserver's command line; later flags win.
func WithAPIServerFlags(flags ...string) Option {
	return func(o *options) { o.extraFlags = append(o.extraFlags, flags...) }
}

// WithControllerManager also runs the real kube-controller-manager with the CSR signer, the node
// lifecycle controller and the service-account token controller (ControllerManagerControllers), but not the CSR approver: a kubelet's certificate
// requests are signed with the test CA once approved through the API. It adds a few seconds to the start.
func WithControllerManager() Option {
	return func(o *options) { o.controllerManager = true }
}

// WithAuditLog has kube-apiserver write one JSON line per request (metadata only: who, verb, URI, user agent,
// status) to path once the request completes, so a benchmark or script can count what a client asked for.
func WithAuditLog(path string) Option {
	return func(o *options) { o.auditLog = path }
}
