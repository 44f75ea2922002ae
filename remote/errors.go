package remote

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"
)

// UnreachableError says a host could not be reached in time, and what to check.
type UnreachableError struct {
	Host    string        // address dialled
	Via     string        // the bastion the dial went through, "" when direct
	Timeout time.Duration // the dial budget
	Bastion bool          // Host is itself a bastion (a jump host), not the node
	Err     error
}

func (e *UnreachableError) Error() string {
	if e.Bastion {
		via := ""
		if e.Via != "" {
			via = " through bastion " + e.Via
		}
		return fmt.Sprintf("cannot reach the bastion %s%s within %s: %v. Check the bastion's address and port "+
			"(--ssh-bastion or ProxyJump in ~/.ssh/config), that it is running and that it accepts SSH from this machine",
			e.Host, via, e.Timeout, e.Err)
	}
	if e.Via != "" {
		return fmt.Sprintf("cannot reach %s through bastion %s within %s: %v. Check that the host is running and "+
			"that its security group or firewall allows port 22 from the bastion", e.Host, e.Via, e.Timeout, e.Err)
	}
	return fmt.Sprintf("cannot reach %s within %s: %v. Check that the host is running, that this machine can route to it "+
		"(nodes usually need a bastion: --ssh-bastion or ProxyJump in ~/.ssh/config) and that port 22 is open", e.Host, e.Timeout, e.Err)
}

func (e *UnreachableError) Unwrap() error { return e.Err }

// LocalError is a connection that failed on this machine before anything was sent to the host: the private
// key cannot be read or unlocked (a wrong passphrase), the local known_hosts file cannot be read, no
// credentials are configured. The host was not contacted, so nothing is known about it.
type LocalError struct {
	Host string
	Err  error
}

func (e *LocalError) Error() string {
	return fmt.Sprintf("cannot connect to %s because of a problem on this machine (the host was not contacted): %v", e.Host, e.Err)
}

func (e *LocalError) Unwrap() error { return e.Err }

// AuthError says the host refused every key offered.
type AuthError struct {
	User, Host string
	Bastion    bool // Host is a bastion (a jump host), not the node
	Err        error
}

func (e *AuthError) Error() string {
	if e.Bastion {
		return fmt.Sprintf("the bastion %s refused key login for user %s: check the bastion user (--ssh-bastion user@host; "+
			"core by default) and that the bastion accepts your key", e.Host, e.User)
	}
	return fmt.Sprintf("%s refused key login for user %s: check the user name (Administrator, capi on Azure, or the "+
		"windows-instances entry) and that the private key matches the key in windows-user-data", e.Host, e.User)
}

func (e *AuthError) Unwrap() error { return e.Err }

// ErrConnectionLost is what a command or transfer interrupted by a dropped connection wraps. The next
// call dials again; wmcon does not resend the interrupted command by itself (commands are not all
// idempotent), callers that know they are retry.
var ErrConnectionLost = errors.New("the SSH connection was lost")

// ConnectionLostError names the host whose connection dropped.
type ConnectionLostError struct {
	Host string
	Err  error
}

func (e *ConnectionLostError) Error() string {
	return fmt.Sprintf("connection to %s lost: %v", e.Host, e.Err)
}

func (e *ConnectionLostError) Is(target error) bool { return target == ErrConnectionLost }
func (e *ConnectionLostError) Unwrap() error        { return e.Err }

// CommandError is a command that ran and failed.
type CommandError struct {
	Host    string
	Command string // the command line as wmcon built it (a secret in it, such as a proxy password, masked)
	Exit    int
	Stderr  string
}

var notRecognised = regexp.MustCompile(`^(\S+) : The term '`)

func (e *CommandError) Error() string {
	if m := notRecognised.FindStringSubmatch(strings.TrimSpace(e.Stderr)); m != nil {
		return fmt.Sprintf("%s does not know the command %s (exit %d): is PowerShell the host's shell and the host a supported Windows Server?", e.Host, m[1], e.Exit)
	}
	msg := firstLine(e.Stderr)
	if msg == "" {
		msg = "no error output"
	}
	return fmt.Sprintf("%s: %q failed with exit %d: %s", e.Host, summarize(e.Command), e.Exit, msg)
}

// UnknownCommand reports whether the host did not recognise the command at all.
func (e *CommandError) UnknownCommand() bool {
	return notRecognised.MatchString(strings.TrimSpace(e.Stderr))
}

// HostNeverCameBackError says a rebooted host did not answer SSH again in time.
type HostNeverCameBackError struct {
	Host   string
	Waited time.Duration
	Err    error // the last dial error
}

func (e *HostNeverCameBackError) Error() string {
	return fmt.Sprintf("%s did not come back within %s after the reboot (last attempt: %v): check the instance in the "+
		"cloud console (stuck updating? stopped?) and retry the reboot action", e.Host, e.Waited, e.Err)
}

func (e *HostNeverCameBackError) Unwrap() error { return e.Err }

// HostStayedUpError says a host did not go down after Restart-Computer.
type HostStayedUpError struct {
	Host   string
	Waited time.Duration
}

func (e *HostStayedUpError) Error() string {
	return fmt.Sprintf("%s did not go down within %s after Restart-Computer -Force: a shutdown may be blocked; check the host", e.Host, e.Waited)
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexAny(s, "\r\n"); i >= 0 {
		return s[:i]
	}
	return s
}

func summarize(cmd string) string {
	const limit = 120
	if len(cmd) > limit {
		return cmd[:limit] + "…"
	}
	return cmd
}
