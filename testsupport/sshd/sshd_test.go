package sshd

import (
	"testing"
	"time"

	"golang.org/x/crypto/ssh"
)

func TestStartServesKeyLoginWithItsHostKey(t *testing.T) {
	s := Start(t)
	cfg := &ssh.ClientConfig{
		User:            s.User,
		Auth:            []ssh.AuthMethod{ssh.PublicKeys(s.ClientKey)},
		HostKeyCallback: ssh.FixedHostKey(s.HostKey),
		Timeout:         10 * time.Second,
	}
	c, err := ssh.Dial("tcp", s.Addr, cfg)
	if err != nil {
		t.Fatalf("dial: %v\n%s", err, s.Log())
	}
	defer c.Close()
	sess, err := c.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	out, err := sess.Output("echo hello")
	if err != nil || string(out) != "hello\n" {
		t.Fatalf("echo: %q %v", out, err)
	}
}
