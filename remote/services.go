package remote

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// ServiceState is a Windows service state as Get-Service names it.
type ServiceState string

// The states wmcon distinguishes.
const (
	ServiceMissing      ServiceState = ""
	ServiceStopped      ServiceState = "Stopped"
	ServiceStartPending ServiceState = "StartPending"
	ServiceStopPending  ServiceState = "StopPending"
	ServiceRunning      ServiceState = "Running"
)

// ServiceStatus is what sc.exe query says about one service.
type ServiceStatus struct {
	Name   string
	Exists bool
	State  ServiceState
}

// ServiceSpec is a service to install.
type ServiceSpec struct {
	Name        string
	BinPath     string   // executable and arguments, as sc.exe binPath= takes them
	DependsOn   []string // services that must run first
	Description string
	Recovery    bool // restart on failure after 10/30/60/120 s, as WMCO configures
}

// Win32 errors sc.exe reports that callers react to.
var (
	ErrServiceNotFound        = errors.New("service does not exist")            // 1060
	ErrServiceAlreadyRunning  = errors.New("service is already running")        // 1056
	ErrServiceNotActive       = errors.New("service is not started")            // 1062
	ErrServiceHasDependents   = errors.New("running services depend on it")     // 1051
	ErrServiceMarkedForDelete = errors.New("service is marked for deletion")    // 1072
	ErrServiceExists          = errors.New("service already exists")            // 1073
	ErrServiceBusy            = errors.New("service cannot accept control now") // 1061
)

var scErrorCodes = map[int]error{
	1060: ErrServiceNotFound, 1056: ErrServiceAlreadyRunning, 1062: ErrServiceNotActive,
	1051: ErrServiceHasDependents, 1072: ErrServiceMarkedForDelete, 1073: ErrServiceExists, 1061: ErrServiceBusy,
}

// SCError is an sc.exe failure: "[SC] <Op> FAILED <Code>:" and its message.
type SCError struct {
	Host    string
	Service string
	Op      string
	Code    int
	Message string
}

func (e *SCError) Error() string {
	hint := ""
	if e.Code == 1051 {
		hint = " (stop the services that depend on it first)"
	}
	return fmt.Sprintf("%s: service %s: sc.exe %s failed with error %d: %s%s", e.Host, e.Service, e.Op, e.Code, e.Message, hint)
}

// Is matches the Err* sentinels by Win32 code.
func (e *SCError) Is(target error) bool { return scErrorCodes[e.Code] == target && target != nil }

// scResult is one sc.exe command's outcome inside (possibly joined) output.
type scResult struct {
	failed  bool
	op      string
	code    int
	message string
	state   ServiceState
}

var (
	scFailedLine = regexp.MustCompile(`^\[SC\] (.+) FAILED (\d+):`)
	scStateLine  = regexp.MustCompile(`^\s*STATE\s+:\s+(\d+)\s+(\w+)`)
)

// parseSC cuts sc.exe output into one result per command: each command prints exactly one marker, an
// "[SC] ..." line or, for query/start/stop, a "SERVICE_NAME:" block.
func parseSC(out string) []scResult {
	var results []scResult
	ls := lines(out)
	for i, l := range ls {
		switch {
		case strings.HasPrefix(l, "[SC]"):
			r := scResult{}
			if m := scFailedLine.FindStringSubmatch(l); m != nil {
				r.failed, r.op = true, m[1]
				r.code, _ = strconv.Atoi(m[2])
				r.message = nextText(ls[i+1:])
			}
			results = append(results, r)
		case strings.HasPrefix(l, "SERVICE_NAME:"):
			results = append(results, scResult{})
		case len(results) > 0:
			if m := scStateLine.FindStringSubmatch(l); m != nil {
				results[len(results)-1].state = scState(m[2])
			}
		}
	}
	return results
}

func nextText(rest []string) string {
	for _, l := range rest {
		if t := strings.TrimSpace(l); t != "" {
			return t
		}
	}
	return ""
}

func scState(word string) ServiceState {
	switch word {
	case "RUNNING":
		return ServiceRunning
	case "STOPPED":
		return ServiceStopped
	case "START_PENDING":
		return ServiceStartPending
	case "STOP_PENDING":
		return ServiceStopPending
	}
	return ServiceState(word)
}

// runSC runs sc.exe commands (joined: one round trip) and returns one result per command.
func (c *Client) runSC(ctx context.Context, cmds []string) ([]scResult, error) {
	res, err := c.Run(ctx, joinCommands(cmds))
	if err != nil {
		return nil, err
	}
	results := parseSC(res.Stdout)
	if len(results) != len(cmds) {
		return nil, &CommandError{Host: c.Name(), Command: joinCommands(cmds), Exit: res.Exit,
			Stderr: fmt.Sprintf("unexpected sc.exe output (%d results for %d commands): %s %s", len(results), len(cmds), res.Stdout, res.Stderr)}
	}
	return results, nil
}

func (c *Client) scErr(service string, r scResult) error {
	return &SCError{Host: c.Name(), Service: service, Op: r.op, Code: r.code, Message: r.message}
}

// ServiceQuery says whether a service exists and its state.
func (c *Client) ServiceQuery(ctx context.Context, name string) (ServiceStatus, error) {
	if err := ValidateServiceName(name); err != nil {
		return ServiceStatus{}, err
	}
	results, err := c.runSC(ctx, []string{cmdSCQuery(name)})
	if err != nil {
		return ServiceStatus{}, err
	}
	r := results[0]
	if r.failed {
		if r.code == 1060 {
			return ServiceStatus{Name: name}, nil
		}
		return ServiceStatus{}, c.scErr(name, r)
	}
	return ServiceStatus{Name: name, Exists: true, State: r.state}, nil
}

// ServiceStates reads many services at once (Get-Service); missing services are absent from the map.
func (c *Client) ServiceStates(ctx context.Context, names ...string) (map[string]ServiceState, error) {
	for _, n := range names {
		if err := ValidateServiceName(n); err != nil {
			return nil, err
		}
	}
	cmd := cmdServiceStates(names)
	res, err := c.Run(ctx, cmd)
	if err != nil {
		return nil, err
	}
	// A missing service makes PowerShell exit 1 even with SilentlyContinue; only error output is a failure.
	if res.Exit != 0 && strings.TrimSpace(res.Stderr) != "" {
		return nil, &CommandError{Host: c.Name(), Command: cmd, Exit: res.Exit, Stderr: res.Stderr}
	}
	states := map[string]ServiceState{}
	for _, l := range lines(res.Stdout) {
		name, state, ok := strings.Cut(strings.TrimSpace(l), "=")
		if !ok {
			continue
		}
		for _, want := range names { // Windows names are case-insensitive; answer with the caller's spelling
			if strings.EqualFold(want, name) {
				states[want] = ServiceState(state)
			}
		}
	}
	return states, nil
}

// CreateService installs a service (start=auto) with its description and recovery actions, in one
// round trip.
func (c *Client) CreateService(ctx context.Context, spec ServiceSpec) error {
	if err := c.changing("create a service"); err != nil {
		return err
	}
	cmds, err := createCommands(spec)
	if err != nil {
		return err
	}
	results, err := c.runSC(ctx, cmds)
	if err != nil {
		return err
	}
	for _, r := range results {
		if r.failed {
			return c.scErr(spec.Name, r)
		}
	}
	return nil
}

func createCommands(spec ServiceSpec) ([]string, error) {
	if err := ValidateServiceName(spec.Name); err != nil {
		return nil, err
	}
	for _, d := range spec.DependsOn {
		if err := ValidateServiceName(d); err != nil {
			return nil, fmt.Errorf("service %s dependency: %w", spec.Name, err)
		}
	}
	if err := checkNativeArg("binPath of "+spec.Name, spec.BinPath); err != nil {
		return nil, err
	}
	if err := checkNativeArg("description of "+spec.Name, spec.Description); err != nil {
		return nil, err
	}
	cmds := []string{cmdSCCreate(spec.Name, spec.BinPath, spec.DependsOn)}
	if spec.Description != "" {
		cmds = append(cmds, cmdSCDescription(spec.Name, spec.Description))
	}
	if spec.Recovery {
		cmds = append(cmds, cmdSCFailure(spec.Name))
	}
	return cmds, nil
}

// ServiceTimeout bounds the wait for a service to reach RUNNING or STOPPED.
var ServiceTimeout = 2 * time.Minute

// servicePoll is how often a pending service is queried again.
var servicePoll = 100 * time.Millisecond

// StartService starts a service (dependencies first, as Windows does) and waits until it runs.
// Starting a running service is not an error.
func (c *Client) StartService(ctx context.Context, name string) error {
	if err := c.changing("start a service"); err != nil {
		return err
	}
	if err := ValidateServiceName(name); err != nil {
		return err
	}
	results, err := c.runSC(ctx, []string{cmdSCStart(name)})
	if err != nil {
		return err
	}
	if r := results[0]; r.failed && r.code != 1056 {
		return c.scErr(name, r)
	}
	return c.waitStates(ctx, []string{name}, ServiceRunning)
}

// StopService stops a service and polls until it is stopped (bounded by ServiceTimeout). Stopping a
// stopped service is not an error; one that running services depend on gives ErrServiceHasDependents.
func (c *Client) StopService(ctx context.Context, name string) error {
	if err := c.changing("stop a service"); err != nil {
		return err
	}
	if err := ValidateServiceName(name); err != nil {
		return err
	}
	results, err := c.runSC(ctx, []string{cmdSCStop(name)})
	if err != nil {
		return err
	}
	r := results[0]
	switch {
	case r.failed && r.code == 1062:
		return nil
	case r.failed && r.code != 1061: // 1061: already changing state, so wait for it
		return c.scErr(name, r)
	}
	return c.waitStates(ctx, []string{name}, ServiceStopped)
}

// DeleteService removes a service; a missing one is not an error.
func (c *Client) DeleteService(ctx context.Context, name string) error {
	if err := c.changing("delete a service"); err != nil {
		return err
	}
	if err := ValidateServiceName(name); err != nil {
		return err
	}
	results, err := c.runSC(ctx, []string{cmdSCDelete(name)})
	if err != nil {
		return err
	}
	if r := results[0]; r.failed && r.code != 1060 {
		return c.scErr(name, r)
	}
	return nil
}

// EnsureServices installs the missing services and starts every one, in as few round trips as possible:
// one Get-Service for all, one line creating all missing ones, one line starting all (in the given
// order), then Get-Service polls until all run. Existing services are not reconfigured.
func (c *Client) EnsureServices(ctx context.Context, specs []ServiceSpec) error {
	if err := c.changing("install services"); err != nil {
		return err
	}
	names := make([]string, len(specs))
	for i, s := range specs {
		names[i] = s.Name
	}
	states, err := c.ServiceStates(ctx, names...)
	if err != nil {
		return err
	}
	if err := c.createMissing(ctx, specs, states); err != nil {
		return err
	}
	if err := c.startNotRunning(ctx, names, states); err != nil {
		return err
	}
	return c.waitStates(ctx, names, ServiceRunning)
}

func (c *Client) createMissing(ctx context.Context, specs []ServiceSpec, states map[string]ServiceState) error {
	var cmds, owners []string
	for _, s := range specs {
		if _, exists := states[s.Name]; exists {
			continue
		}
		sc, err := createCommands(s)
		if err != nil {
			return err
		}
		for range sc {
			owners = append(owners, s.Name)
		}
		cmds = append(cmds, sc...)
	}
	if len(cmds) == 0 {
		return nil
	}
	results, err := c.runSC(ctx, cmds)
	if err != nil {
		return err
	}
	for i, r := range results {
		if r.failed {
			return c.scErr(owners[i], r)
		}
	}
	return nil
}

func (c *Client) startNotRunning(ctx context.Context, names []string, states map[string]ServiceState) error {
	var cmds, owners []string
	for _, n := range names {
		if st := states[n]; st == ServiceRunning || st == ServiceStartPending {
			continue
		}
		cmds, owners = append(cmds, cmdSCStart(n)), append(owners, n)
	}
	if len(cmds) == 0 {
		return nil
	}
	results, err := c.runSC(ctx, cmds)
	if err != nil {
		return err
	}
	for i, r := range results {
		if r.failed && r.code != 1056 { // 1056: started earlier in the line as a dependency
			return c.scErr(owners[i], r)
		}
	}
	return nil
}

// waitStates polls Get-Service until every service is in state, within ServiceTimeout.
func (c *Client) waitStates(parent context.Context, names []string, want ServiceState) error {
	ctx, cancel := context.WithTimeout(parent, ServiceTimeout)
	defer cancel()
	for {
		states, err := c.ServiceStates(ctx, names...)
		if err != nil {
			return err
		}
		pending := notIn(names, states, want)
		if len(pending) == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			if parent.Err() != nil { // the caller stopped (a signal): not the services' timeout
				return fmt.Errorf("%s: stopped waiting for services %s to reach %s: %w", c.Name(), strings.Join(pending, ", "), want, context.Cause(parent))
			}
			return fmt.Errorf("%s: services %s did not reach %s within %s (last states %v): check their logs and events",
				c.Name(), strings.Join(pending, ", "), want, ServiceTimeout, states)
		case <-time.After(servicePoll):
		}
	}
}

func notIn(names []string, states map[string]ServiceState, want ServiceState) []string {
	var out []string
	for _, n := range names {
		if states[n] != want {
			out = append(out, n)
		}
	}
	return out
}

// ServiceConfig is what sc.exe qc says about an installed service.
type ServiceConfig struct {
	Name         string
	BinPath      string
	StartType    string // AUTO_START, DEMAND_START, DISABLED
	Dependencies []string
}

// ServiceConfig reads a service's configuration; a missing service gives ErrServiceNotFound.
func (c *Client) ServiceConfig(ctx context.Context, name string) (ServiceConfig, error) {
	if err := ValidateServiceName(name); err != nil {
		return ServiceConfig{}, err
	}
	res, err := c.Run(ctx, cmdSCQueryConfig(name))
	if err != nil {
		return ServiceConfig{}, err
	}
	if rs := parseSC(res.Stdout); len(rs) > 0 && rs[0].failed {
		return ServiceConfig{}, c.scErr(name, rs[0])
	}
	return parseQC(name, res.Stdout), nil
}

// parseQC reads the "KEY : value" lines of sc.exe qc; DEPENDENCIES continues on lines with an empty key.
func parseQC(name, out string) ServiceConfig {
	cfg := ServiceConfig{Name: name}
	lastKey := ""
	for _, l := range lines(out) {
		key, value, ok := strings.Cut(l, ":")
		if !ok {
			continue
		}
		key, value = strings.TrimSpace(key), strings.TrimSpace(value)
		if key == "" {
			key = lastKey
		}
		lastKey = key
		switch key {
		case "BINARY_PATH_NAME":
			_, value, _ = strings.Cut(l, ": ")
			cfg.BinPath = strings.TrimSpace(value)
		case "START_TYPE":
			if f := strings.Fields(value); len(f) == 2 {
				cfg.StartType = f[1]
			}
		case "DEPENDENCIES":
			if value != "" {
				cfg.Dependencies = append(cfg.Dependencies, value)
			}
		}
	}
	return cfg
}
