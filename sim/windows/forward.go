package windows

import (
	"io"
	"net"
	"strconv"
	"strings"
	"time"

	"golang.org/x/crypto/ssh"
)

// directTCPIP is the payload of a direct-tcpip channel request (RFC 4254 7.2).
type directTCPIP struct {
	Host       string
	Port       uint32
	OriginHost string
	OriginPort uint32
}

// forward serves a direct-tcpip channel as Windows' OpenSSH server does (AllowTcpForwarding is on by
// default), for the one service the simulated host listens on locally: windows_exporter at
// 127.0.0.1:9182 (or localhost), reached at its simulated address. Any other target is refused as a
// connection that failed.
func (h *Host) forward(nc ssh.NewChannel) {
	var req directTCPIP
	if err := ssh.Unmarshal(nc.ExtraData(), &req); err != nil {
		_ = nc.Reject(ssh.ConnectionFailed, "bad direct-tcpip request")
		return
	}
	local := req.Host == "127.0.0.1" || strings.EqualFold(req.Host, "localhost")
	addr := h.ExporterAddr()
	if !local || req.Port != RealExporterPort || addr == "" || !h.ServiceRunning("windows_exporter") {
		_ = nc.Reject(ssh.ConnectionFailed, "connect to "+net.JoinHostPort(req.Host, strconv.Itoa(int(req.Port)))+": connection refused")
		return
	}
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		_ = nc.Reject(ssh.ConnectionFailed, err.Error())
		return
	}
	defer conn.Close()
	ch, reqs, err := nc.Accept()
	if err != nil {
		return
	}
	defer ch.Close()
	go ssh.DiscardRequests(reqs)
	done := make(chan struct{}, 2)
	go func() { _, _ = io.Copy(conn, ch); _ = conn.(*net.TCPConn).CloseWrite(); done <- struct{}{} }()
	go func() { _, _ = io.Copy(ch, conn); _ = ch.CloseWrite(); done <- struct{}{} }()
	<-done
	<-done
}
