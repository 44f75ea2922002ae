package model

// Proxy is the cluster-wide proxy as Windows nodes need it: the machine environment variables and the
// trusted CA bundle that goes to C:\k\ca-bundle.crt.
type Proxy struct {
	HTTP, HTTPS, NoProxy string
	TrustedCA            []byte // PEM bundle; empty when the cluster trusts no extra CA
	TrustedCAName        string // the ConfigMap it came from (openshift-config), for messages
}

// Env is the proxy as machine environment variables; an empty value means the variable must not exist.
func (p Proxy) Env() map[string]string {
	return map[string]string{"HTTP_PROXY": p.HTTP, "HTTPS_PROXY": p.HTTPS, "NO_PROXY": p.NoProxy}
}

// ProxyVariables are the variables wmcon manages, in display order.
var ProxyVariables = []string{"HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY"}
