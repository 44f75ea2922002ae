package windows

import (
	"fmt"
	"net"
	"net/url"
	"strings"

	"github.com/wmcon/wmcon/config"
)

// The cloud's instance metadata as a host reaches it with Invoke-RestMethod: answered inside the simulator,
// never over a socket (the project's network rule), and only where the real host could reach it: AWS's at
// 169.254.169.254 while the metadata route is in the host's table, GCP's at metadata.google.internal with the
// Metadata-Flavor header. Anything else cannot be connected to, as from a host without a route out.

// metadataAnswer is the body the metadata service gives for a URL, or the error Invoke-RestMethod shows.
type metadataAnswer struct {
	body   string
	status int // 0: no connection; else the HTTP status
}

// CloudHostname is the name the platform's cloud provider knows this instance by (AWS: the metadata's
// local-hostname; GCP: the instance's hostname), "" on platforms whose cloud provider takes the node's name.
func (h *Host) CloudHostname() string {
	switch strings.ToLower(h.opts.Platform) {
	case "aws":
		return h.opts.AWSLocalHostname
	case "gcp":
		return h.opts.GCPHostname
	}
	return ""
}

// defaultAWSLocalHostname is EC2's private DNS name for an address in us-east-1: ip-a-b-c-d.ec2.internal.
func defaultAWSLocalHostname(addr string) string {
	host, _, _ := net.SplitHostPort(addr)
	return "ip-" + strings.ReplaceAll(host, ".", "-") + ".ec2.internal"
}

func (h *Host) metadata(rawURL string, headers map[string]string) metadataAnswer {
	u, err := url.Parse(rawURL)
	if err != nil {
		return metadataAnswer{}
	}
	platform := strings.ToLower(h.opts.Platform)
	switch {
	case u.Hostname() == config.EC2MetadataIP && platform == "aws":
		if !h.HasMetadataRoute() {
			return metadataAnswer{} // EC2Launch's route is gone: the link-local address is unreachable
		}
		return h.awsMetadata(u.Path)
	case u.Hostname() == "metadata.google.internal" && platform == "gcp":
		if !strings.EqualFold(headers["metadata-flavor"], "Google") {
			return metadataAnswer{status: 403, body: "Missing required header: Metadata-Flavor"}
		}
		if u.Path == "/computeMetadata/v1/instance/hostname" {
			return metadataAnswer{status: 200, body: h.opts.GCPHostname}
		}
		return metadataAnswer{status: 404}
	}
	return metadataAnswer{}
}

func (h *Host) awsMetadata(path string) metadataAnswer {
	switch path {
	case "/latest/meta-data/local-hostname", "/latest/meta-data/hostname":
		return metadataAnswer{status: 200, body: h.opts.AWSLocalHostname}
	case "/latest/meta-data/local-ipv4":
		return metadataAnswer{status: 200, body: h.hostIP()}
	case "/latest/meta-data/instance-id":
		return metadataAnswer{status: 200, body: h.InstanceID()}
	}
	return metadataAnswer{status: 404}
}

// runInvokeRestMethod is Invoke-RestMethod [-UseBasicParsing] [-Method GET] [-Headers @{...}] -Uri URL
// against the cloud's metadata service; a text answer is emitted as one string, as PowerShell does.
func runInvokeRestMethod(p *pipeline, a *boundArgs, emit emitFn) error {
	uri, _ := a.str("uri")
	if m, ok := a.str("method"); ok && !strings.EqualFold(m, "GET") {
		p.cmdError("Invoke-RestMethod", a, "winsim simulates GET requests only.", "NotImplemented: (:) [Invoke-RestMethod], NotSupportedException", "SimulatorUnsupported")
		return nil
	}
	headers := map[string]string{}
	for k, v := range a.named["headers"].hash {
		headers[strings.ToLower(k)] = v
	}
	ans := p.s.h.metadata(uri, headers)
	const category = "InvalidOperation: (System.Net.HttpWebRequest:HttpWebRequest) [Invoke-RestMethod], WebException"
	const id = "WebCmdletWebResponseException,Microsoft.PowerShell.Commands.InvokeRestMethodCommand"
	switch {
	case ans.status == 0:
		p.cmdError("Invoke-RestMethod", a, "Unable to connect to the remote server", category, id)
		return nil
	case ans.status == 403:
		p.cmdError("Invoke-RestMethod", a, "The remote server returned an error: (403) Forbidden.", category, id)
		return nil
	case ans.status != 200:
		p.cmdError("Invoke-RestMethod", a, fmt.Sprintf("The remote server returned an error: (%d) Not Found.", ans.status), category, id)
		return nil
	}
	return emit(ans.body)
}

// InstanceID is the cloud's ID of this instance (EC2's form), stable for the host's address.
func (h *Host) InstanceID() string {
	return fmt.Sprintf("i-%017x", seedOf(h.opts.Addr)&0xfffffffffffffff)
}
