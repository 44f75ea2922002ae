package nodeconfig

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"path"
	"sort"
	"strings"

	"github.com/wmcon/wmcon/config"
)

// PayloadFile is one verified file of a payload, as the payload package hands it over.
type PayloadFile struct {
	Name   string // path inside the payload, slash-separated, without .tar.gz
	Local  string // the verified file on this machine
	SHA256 string // lower-case hex
	Size   int64
}

// FileKind says where a desired file comes from.
type FileKind string

const (
	PayloadKind FileKind = "payload" // a binary or script from the payload
	ConfigKind  FileKind = "config"  // rendered from the cluster's facts
)

// File is a file the host must have, with this exact content.
type File struct {
	Path   string // Windows path
	Kind   FileKind
	SHA256 string // lower-case hex of the content
	Size   int64
	Local  string // payload file on this machine (Kind payload), or
	Data   []byte `json:"-"` // the content (Kind config); never serialised
	Secret bool   // the content holds credentials: never printed
}

// Service is a Windows service the host must run.
type Service struct {
	Name        string
	BinPath     string // executable and arguments, as sc.exe create binPath= takes them
	DependsOn   []string
	StartOrder  int
	Description string
	// AfterJoin services are the contract's non-bootstrap ones: as WMCO's daemon does, they start once the
	// Node has registered (some read the node's kubeconfig, which the kubelet's TLS bootstrap writes, or
	// the Node itself); only containerd and the kubelet start before.
	AfterJoin bool
	// Pending names the host-side step of WMCO's this service's contract command needs and wmcon does not
	// perform yet; BinPath is then wmcon's own command line ("" = BinPath is the contract's).
	Pending string `json:",omitempty"`
	// PreScripts are the contract's pre-scripts run for their effect before the service starts (containerd's
	// Defender exclusion, kube-proxy's network configuration), as the contract writes them (hoststep runs them).
	PreScripts []string `json:",omitempty"`
}

// State is the desired state of a configured host.
type State struct {
	Host     Host
	Dirs     []string
	Files    []File    // payload files first, then configuration files, each sorted by path
	Services []Service // in start order (dependencies before dependents)
	Env      map[string]string
	// RegistryFiles are the entries (one directory per mirrored registry) RegistriesDir must hold, as
	// lower-case Windows paths; any other entry there goes.
	RegistryFiles map[string]bool
}

// Desired computes the state a host must reach to become a worker node of the cluster described by f.
func Desired(f Facts, h Host, payload []PayloadFile) (State, error) {
	if err := f.Validate(); err != nil {
		return State{}, err
	}
	if err := h.Validate(); err != nil {
		return State{}, err
	}
	st := State{Host: h, Dirs: append([]string(nil), config.NodeDirectories...), Env: proxyEnv(f.Proxy)}
	files, err := payloadFiles(f.Platform, payload)
	if err != nil {
		return State{}, err
	}
	if err := checkManifest(f, files); err != nil {
		return State{}, err
	}
	cfg, err := configFiles(f, payloadHas(files, ExporterWebConfigPath))
	if err != nil {
		return State{}, err
	}
	st.Files = append(files, cfg...)
	st.RegistryFiles = map[string]bool{}
	for rel := range f.Registries {
		top, _, _ := strings.Cut(strings.ReplaceAll(rel, "/", `\`), `\`)
		st.RegistryFiles[strings.ToLower(RegistriesDir+`\`+top)] = true
	}
	if st.Services, err = Services(f, h); err != nil {
		return State{}, err
	}
	return st, nil
}

func payloadFiles(platform string, payload []PayloadFile) ([]File, error) {
	byName := map[string]PayloadFile{}
	for _, p := range payload {
		byName[path.Clean(p.Name)] = p
	}
	var missing []string
	var out []File
	for _, e := range payloadLayout {
		if !e.onPlatform(platform) {
			continue
		}
		p, ok := byName[e.Name]
		if !ok {
			if !e.Optional {
				missing = append(missing, e.Name)
			}
			continue
		}
		out = append(out, File{Path: e.Dest, Kind: PayloadKind, SHA256: strings.ToLower(p.SHA256), Size: p.Size, Local: p.Local})
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("the payload lacks %s: use a complete WMCO payload (--payload DIR or --payload-image REF)", strings.Join(missing, ", "))
	}
	sortFiles(out)
	return out, nil
}

// checkManifest holds the payload to the contract's file manifest: WMCO's ConfigMap lists the files it copies
// to a host with their SHA-256, and a payload file it lists with another checksum is not the installed
// operator's payload. Refused before anything is written, naming each file and both checksums.
func checkManifest(f Facts, files []File) error {
	data, err := f.ServicesContract()
	if err != nil || len(data.Files) == 0 {
		return err
	}
	source := f.ContractSource
	if source == "" {
		source = "the services contract"
	}
	var errs []error
	for _, m := range data.Files {
		for _, p := range files {
			if strings.EqualFold(p.Path, m.Path) && !strings.EqualFold(p.SHA256, m.Checksum) {
				errs = append(errs, fmt.Errorf("payload file %s (%s) has sha256 %s, but %s lists %s with sha256 %s",
					p.Path, p.Local, p.SHA256, source, m.Path, strings.ToLower(m.Checksum)))
			}
		}
	}
	if len(errs) == 0 {
		return nil
	}
	return fmt.Errorf("%w: this payload is not the one the installed operator copies to its nodes; nothing was written to the host: "+
		"give the operator's own payload (--payload-image with WMCO's image, or --payload with a directory extracted from it)", errors.Join(errs...))
}

func payloadHas(files []File, path string) bool {
	for _, f := range files {
		if strings.EqualFold(f.Path, path) {
			return true
		}
	}
	return false
}

// ExporterWebConfig is windows_exporter's web configuration, as WMCO's payload has it: TLS with the
// certificate in C:\k\tls\certs (Windows paths with doubled backslashes, which Windows reads as single).
func ExporterWebConfig() []byte {
	return []byte("tls_server_config:\n  cert_file: C:\\\\k\\\\tls\\\\certs\\\\tls.crt\n  key_file: C:\\\\k\\\\tls\\\\certs\\\\tls.key\n")
}

func configFiles(f Facts, payloadWebConfig bool) ([]File, error) {
	kubelet, err := KubeletConfig(f)
	if err != nil {
		return nil, err
	}
	bootstrap, err := BootstrapKubeconfig(f)
	if err != nil {
		return nil, err
	}
	out := []File{
		dataFile(KubeletConfPath, kubelet, false),
		dataFile(BootstrapKubeconfigPath, bootstrap, true),
		dataFile(BootstrapCAPath, f.BootstrapCA, false),
		dataFile(KubeletCAPath, f.KubeletCA, false),
		dataFile(ContainerdConfPath, ContainerdConfig(), false),
	}
	if len(f.TrustedCABundle) > 0 {
		out = append(out, dataFile(TrustedCABundlePath, f.TrustedCABundle, false))
	}
	if strings.EqualFold(f.Platform, "AWS") {
		out = append(out, dataFile(CredentialProviderPath, CredentialProviderConfig(), false))
	}
	if f.NeedsWICDKubeconfig() {
		if f.WICDToken == "" || len(f.WICDCA) == 0 {
			return nil, fmt.Errorf("cloud-node-manager runs with %s, and there are no service-account credentials for it "+
				"(a node's own credentials may not initialize its Node): wmcon reads or creates them when it reads the cluster's facts", WICDKubeconfigPath)
		}
		kc, err := WICDKubeconfig(f)
		if err != nil {
			return nil, err
		}
		out = append(out, dataFile(WICDKubeconfigPath, kc, true))
	}
	if f.needsExporterTLS() && !f.hasExporterTLS() {
		return nil, fmt.Errorf("windows_exporter serves TLS (%s) and there is no certificate for it: wmcon reads or makes one when it reads the cluster's facts", ExporterWebConfigPath)
	}
	if f.hasExporterTLS() {
		out = append(out, dataFile(ExporterCertPath, f.ExporterTLSCert, false), dataFile(ExporterKeyPath, f.ExporterTLSKey, true))
		if !payloadWebConfig {
			out = append(out, dataFile(ExporterWebConfigPath, ExporterWebConfig(), false))
		}
	}
	for rel, data := range f.Registries {
		// hosts.toml may carry registry credentials (an authorization header).
		out = append(out, dataFile(RegistriesDir+`\`+rel, data, true))
	}
	sortFiles(out)
	return out, nil
}

func dataFile(p string, data []byte, secret bool) File {
	sum := sha256.Sum256(data)
	return File{Path: p, Kind: ConfigKind, SHA256: hex.EncodeToString(sum[:]), Size: int64(len(data)), Data: data, Secret: secret}
}

func sortFiles(fs []File) {
	sort.Slice(fs, func(i, j int) bool { return fs[i].Path < fs[j].Path })
}

// proxyEnv is the machine environment the cluster proxy asks for; "" values are removed from the host.
func proxyEnv(p Proxy) map[string]string {
	return map[string]string{"HTTP_PROXY": p.HTTP, "HTTPS_PROXY": p.HTTPS, "NO_PROXY": p.NoProxy}
}

// StartBatches splits services (in start order) where one has pre-scripts to run first: each batch but the
// first begins with such a service, so its pre-scripts run once every service before it runs (kube-proxy's
// network step needs hybrid-overlay-node's HNS network) and the rest start together, in as few round trips
// as possible.
func StartBatches(services []Service) [][]Service {
	var out [][]Service
	for _, s := range services {
		if len(out) == 0 || len(s.PreScripts) > 0 {
			out = append(out, nil)
		}
		out[len(out)-1] = append(out[len(out)-1], s)
	}
	return out
}
