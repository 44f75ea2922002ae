package remote

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode"

	"github.com/wmcon/wmcon/config"
	"github.com/wmcon/wmcon/model"
)

// Hostname is the host's computer name.
func (c *Client) Hostname(ctx context.Context) (string, error) {
	out, err := c.RunOK(ctx, cmdHostname())
	return strings.TrimSpace(out), err
}

// Gateway is the first IPv4 default gateway ipconfig shows.
func (c *Client) Gateway(ctx context.Context) (string, error) {
	out, err := c.RunOK(ctx, cmdIPConfig())
	if err != nil {
		return "", err
	}
	gw := parseGateway(out)
	if gw == "" {
		return "", fmt.Errorf("%s: ipconfig shows no IPv4 default gateway: check the instance's network configuration", c.Name())
	}
	return gw, nil
}

// parseGateway reads "Default Gateway . . . : a" and its continuation lines (ipconfig lists an IPv6
// gateway first on its own line and the IPv4 one on the next, indented).
func parseGateway(ipconfig string) string {
	inGateway := false
	for _, l := range lines(ipconfig) {
		value := ""
		switch {
		case strings.Contains(l, "Default Gateway"):
			inGateway = true
			if _, v, ok := strings.Cut(l, ":"); ok {
				value = v
			}
		case inGateway && strings.HasPrefix(l, " ") && !strings.Contains(l, ". :"):
			value = l
		default:
			inGateway = false
		}
		if v := strings.TrimSpace(value); v != "" && ValidateIPv4(v) == nil {
			return v
		}
	}
	return ""
}

// HasMetadataRoute says whether the EC2 metadata route (169.254.169.254/32) exists.
func (c *Client) HasMetadataRoute(ctx context.Context) (bool, error) {
	res, err := c.Run(ctx, cmdMetadataRoute())
	if err != nil {
		return false, err
	}
	return strings.Contains(res.Stdout, config.EC2MetadataIP), nil
}

// EnsureMetadataRoute adds the EC2 metadata route through the default gateway when it is missing, as
// the documented reboot procedure does on AWS. It reports whether it added the route.
func (c *Client) EnsureMetadataRoute(ctx context.Context) (bool, error) {
	if err := c.changing("add the metadata route"); err != nil {
		return false, err
	}
	ok, err := c.HasMetadataRoute(ctx)
	if err != nil || ok {
		return false, err
	}
	gw, err := c.Gateway(ctx)
	if err != nil {
		return false, err
	}
	if err := ValidateIPv4(gw); err != nil {
		return false, err
	}
	out, err := c.RunOK(ctx, cmdAddMetadataRoute(gw))
	if err != nil {
		return false, fmt.Errorf("add metadata route via %s: %w", gw, err)
	}
	if !strings.Contains(out, "OK!") {
		return false, fmt.Errorf("%s: route add did not confirm the metadata route: %q", c.Name(), strings.TrimSpace(out))
	}
	return true, nil
}

// GetEnv reads a machine environment variable ("" when unset).
func (c *Client) GetEnv(ctx context.Context, name string) (string, error) {
	out, err := c.RunOK(ctx, cmdGetEnv(name))
	return strings.TrimRight(out, "\r\n"), err
}

// SetEnv sets a machine environment variable (services see it after a reboot).
func (c *Client) SetEnv(ctx context.Context, name, value string) error {
	if err := c.changing("set an environment variable"); err != nil {
		return err
	}
	if err := checkEnvValue(name, value); err != nil {
		return err
	}
	_, err := c.RunOK(ctx, cmdSetEnv(name, value))
	return maskEnvCommand(err, cmdSetEnv(name, model.RedactURL(value)))
}

// checkEnvValue refuses a machine variable value with a control character: a CR or LF would be stored as
// it is and split or corrupt what every service reads. The value is not shown (a proxy URL may hold a password).
func checkEnvValue(name, value string) error {
	if strings.IndexFunc(value, unicode.IsControl) >= 0 {
		return fmt.Errorf("%s: the value has a control character (such as CR or LF): not written to the machine environment", name)
	}
	return nil
}

// maskEnvCommand puts the masked command line into a failed command's error: the real one carries the
// value, which may hold a proxy password.
func maskEnvCommand(err error, masked string) error {
	var ce *CommandError
	if errors.As(err, &ce) {
		ce.Command = masked
	}
	return err
}

// RemoveEnv deletes a machine environment variable.
func (c *Client) RemoveEnv(ctx context.Context, name string) error {
	if err := c.changing("remove an environment variable"); err != nil {
		return err
	}
	_, err := c.RunOK(ctx, cmdRemoveEnv(name))
	return err
}

// ServiceEvent is one Service Control Manager event.
type ServiceEvent struct {
	Time    time.Time
	Level   string // Information, Warning, Error
	Message string
}

// ServiceEvents returns the newest Service Control Manager events, newest first.
func (c *Client) ServiceEvents(ctx context.Context, max int) ([]ServiceEvent, error) {
	if max <= 0 {
		max = 50
	}
	res, err := c.Run(ctx, cmdServiceEvents(max))
	if err != nil {
		return nil, err
	}
	if res.Exit != 0 && strings.Contains(res.Stderr, "No events were found") {
		return nil, nil
	}
	if res.Exit != 0 {
		return nil, &CommandError{Host: c.Name(), Command: cmdServiceEvents(max), Exit: res.Exit, Stderr: res.Stderr}
	}
	var events []ServiceEvent
	for _, l := range lines(res.Stdout) {
		if e, ok := parseServiceEvent(l); ok {
			events = append(events, e)
		}
	}
	return events, nil
}

func parseServiceEvent(l string) (ServiceEvent, bool) {
	stamp, rest, ok := strings.Cut(l, " ")
	if !ok {
		return ServiceEvent{}, false
	}
	t, err := time.Parse(time.RFC3339Nano, stamp)
	if err != nil {
		return ServiceEvent{}, false
	}
	level, msg, _ := strings.Cut(rest, " ")
	return ServiceEvent{Time: t, Level: level, Message: msg}, true
}

// Routes is `route print -4` as the host prints it, for triage.
func (c *Client) Routes(ctx context.Context) (string, error) {
	return c.RunOK(ctx, cmdRoutePrint())
}
