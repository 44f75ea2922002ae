package kubelet

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// LogFiles is what the simulated kubelet log endpoint reads from (windows.Host has it).
type LogFiles interface {
	ReadFile(winPath string) ([]byte, error)
}

// LogServer is a simulated kubelet's HTTPS endpoint serving /logs/<dir>/<file> from the host's
// C:\var\log, as the kubelet's file server does (Range requests included), so the API server's node
// proxy has something real to talk to. Like a real kubelet it answers anyone who can reach it; the
// API server, which does not check kubelet certificates unless told to, is the only client in tests.
type LogServer struct {
	listener net.Listener
	server   *http.Server

	mu         sync.Mutex
	containers *ContainerLogs // served at /containerLogs/ (nil: none)
	stats      *statsSource   // served at /stats/summary (nil: none; summary.go)
}

// StartLogServer listens on addr ("127.0.0.N:0" picks a free port; loopback only) and serves files's logs.
func StartLogServer(addr string, files LogFiles) (*LogServer, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("kubeletsim: log server address %q: %w (use 127.0.0.N:port)", addr, err)
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return nil, fmt.Errorf("kubeletsim: log server address %q is not a loopback address: use 127.0.0.N:port", addr)
	}
	cert, err := selfSignedCert(host)
	if err != nil {
		return nil, err
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("kubeletsim: listen on %s: %w", addr, err)
	}
	s := &LogServer{listener: l}
	if c, ok := files.(*ContainerLogs); ok {
		s.containers = c
	}
	mux := http.NewServeMux()
	mux.Handle("/logs/", logHandler(files))
	mux.HandleFunc("/containerLogs/", s.containerLogHandler)
	mux.HandleFunc("/stats/summary", s.summaryHandler)
	s.server = &http.Server{
		Handler:           mux,
		ReadHeaderTimeout: 10 * time.Second,
		TLSConfig:         &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12},
	}
	go func() { _ = s.server.ServeTLS(l, "", "") }()
	return s, nil
}

// Addr is the listening address, "127.0.0.N:port".
func (s *LogServer) Addr() string { return s.listener.Addr().String() }

// Port is the listening port: the Node's status.daemonEndpoints.kubeletEndpoint.port.
func (s *LogServer) Port() int { return s.listener.Addr().(*net.TCPAddr).Port }

// Close stops the server, waiting briefly for requests in flight.
func (s *LogServer) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := s.server.Shutdown(ctx); err != nil {
		return s.server.Close()
	}
	return nil
}

// logHandler serves GET /logs/<dir>/<file> from C:\var\log\<dir>\<file>.
func logHandler(files LogFiles) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rel, ok := strings.CutPrefix(r.URL.Path, "/logs/")
		if !ok || rel == "" {
			http.NotFound(w, r)
			return
		}
		winPath, err := logPath(rel)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		data, err := files.ReadFile(winPath)
		if err != nil {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		http.ServeContent(w, r, winPath, time.Time{}, bytes.NewReader(data))
	})
}

// logPath maps "kubelet/kubelet.log" to C:\var\log\kubelet\kubelet.log, refusing to leave C:\var\log.
func logPath(rel string) (string, error) {
	parts := strings.Split(rel, "/")
	for _, p := range parts {
		if p == "" || p == "." || p == ".." || strings.ContainsAny(p, `\:`) {
			return "", errors.New("invalid log path")
		}
	}
	return `C:\var\log\` + strings.Join(parts, `\`), nil
}

// selfSignedCert makes a throwaway serving certificate for host, as a kubelet's self-signed one.
func selfSignedCert(host string) (tls.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("kubeletsim: generate key: %w", err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()),
		Subject:      pkix.Name{CommonName: host + "@kubeletsim"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses:  []net.IP{net.ParseIP(host)},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("kubeletsim: create certificate: %w", err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, nil
}

// PublishEndpoint records the log server on an existing Node as a kubelet does: the kubelet port in
// status.daemonEndpoints, and the addresses given (replacing the Node's).
func PublishEndpoint(ctx context.Context, kube kubernetes.Interface, node string, port int, addrs ...corev1.NodeAddress) error {
	n, err := kube.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("get node %s: %w", node, err)
	}
	n.Status.DaemonEndpoints.KubeletEndpoint.Port = int32(port)
	n.Status.Addresses = addrs
	if _, err := kube.CoreV1().Nodes().UpdateStatus(ctx, n, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("update status of node %s: %w", node, err)
	}
	return nil
}
