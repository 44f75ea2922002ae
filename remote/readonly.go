package remote

import "fmt"

// ReadOnlyError is a change to a host that wmcon refused because it runs with --read-only.
type ReadOnlyError struct {
	Host string
	Op   string
}

func (e *ReadOnlyError) Error() string {
	return fmt.Sprintf("--read-only is set: refusing to %s on %s (restart wmcon without --read-only to change the host)", e.Op, e.Host)
}

// changing is the read-only guard every operation that changes a host calls first (services, files,
// environment, routes, reboot). Run and Stream execute arbitrary commands and are for reading: an
// operation that changes a host gets a method of its own here, so this guard sees it.
func (c *Client) changing(op string) error {
	if c.pool.cfg.ReadOnly {
		return &ReadOnlyError{Host: c.Name(), Op: op}
	}
	return nil
}
