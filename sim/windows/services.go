package windows

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/wmcon/wmcon/config"
)

// ServiceState is a service's state with the numbers sc.exe prints.
type ServiceState int

const (
	StateStopped      ServiceState = 1
	StateStartPending ServiceState = 2
	StateStopPending  ServiceState = 3
	StateRunning      ServiceState = 4
)

func (s ServiceState) String() string {
	switch s {
	case StateStartPending:
		return "START_PENDING"
	case StateStopPending:
		return "STOP_PENDING"
	case StateRunning:
		return "RUNNING"
	}
	return "STOPPED"
}

// psStatus is the ServiceControllerStatus name Get-Service reports.
func (s ServiceState) psStatus() string {
	switch s {
	case StateStartPending:
		return "StartPending"
	case StateStopPending:
		return "StopPending"
	case StateRunning:
		return "Running"
	}
	return "Stopped"
}

// RecoveryAction is one step of `sc.exe failure ... actions=`.
type RecoveryAction struct {
	Type  string        // "restart", "run", "reboot" or ""
	Delay time.Duration // sc.exe gives milliseconds
}

// ServiceInfo is what the tests can inspect about a service.
type ServiceInfo struct {
	Name         string
	DisplayName  string
	Description  string
	BinaryPath   string
	StartType    string // AUTO_START, DEMAND_START, DISABLED
	Dependencies []string
	State        ServiceState
	PID          int
	ResetPeriod  time.Duration // sc.exe failure reset= (seconds)
	Recovery     []RecoveryAction
	Crashes      int  // unexpected terminations since install
	MarkedDelete bool // sc.exe delete on a running service: removed once stopped
}

type service struct {
	ServiceInfo
	failures    int       // failures since the reset period began: which recovery action is next
	lastFailure time.Time // when the last one was
	started     time.Time // when it last reached RUNNING, by the real clock (its process's age)
	state       ServiceState
	pid         int
	cancel      func()   // ends the running Program, if any
	images      []func() // release the locks on the running process's executables
}

// endProcessLocked stops the service's Program, if one runs, and releases its executables.
func (s *service) endProcessLocked() {
	if s.cancel != nil {
		s.cancel()
		s.cancel = nil
	}
	for _, release := range s.images {
		release()
	}
	s.images = nil
}

// scmEvent is one System log entry from the Service Control Manager.
type scmEvent struct {
	time    time.Time
	level   string // Information, Warning, Error
	id      int
	message string
}

// Service returns a service's configuration and state.
func (h *Host) Service(name string) (ServiceInfo, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	s, ok := h.services[strings.ToLower(name)]
	if !ok {
		return ServiceInfo{}, false
	}
	info := s.ServiceInfo
	info.State, info.PID = s.state, s.pid
	info.Dependencies = slices.Clone(s.Dependencies)
	info.Recovery = slices.Clone(s.Recovery)
	return info, true
}

// ServicePID is the process ID of a running service, 0 when it does not run: a new ID is a new process.
func (h *Host) ServicePID(name string) int {
	info, ok := h.Service(name)
	if !ok || info.State != StateRunning {
		return 0
	}
	return info.PID
}

// ServiceRunning reports whether a service is RUNNING.
func (h *Host) ServiceRunning(name string) bool {
	info, ok := h.Service(name)
	return ok && info.State == StateRunning
}

// StopService simulates a crash: the service stops at once and the SCM records an error event.
func (h *Host) StopService(name string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if s, ok := h.services[strings.ToLower(name)]; ok && s.state != StateStopped {
		h.crashLocked(s)
	}
}

func (h *Host) eventLocked(level string, id int, msg string) {
	h.events = append(h.events, scmEvent{time: h.now(), level: level, id: id, message: msg})
	if len(h.events) > 2000 {
		h.events = h.events[len(h.events)-1000:]
	}
}

// scError is a Win32 error sc.exe reports.
type scError struct {
	code int
	text string
}

var (
	errSvcMissing         = &scError{1060, "The specified service does not exist as an installed service."}
	errSvcExists          = &scError{1073, "The specified service already exists."}
	errSvcMarkedDelete    = &scError{1072, "The specified service has been marked for deletion."}
	errSvcDisabled        = &scError{1058, "The service cannot be started, either because it is disabled or because it has no enabled devices associated with it."}
	errSvcRunning         = &scError{1056, "An instance of the service is already running."}
	errSvcNotActive       = &scError{1062, "The service has not been started."}
	errSvcDependents      = &scError{1051, "A stop control has been sent to a service that other running services are dependent on."}
	errSvcDepMissing      = &scError{1075, "The dependency service does not exist or has been marked for deletion."}
	errSvcDepFailed       = &scError{1068, "The dependency service or group failed to start."}
	errSvcCircular        = &scError{1059, "Circular service dependency was specified."}
	errSvcFileMissing     = &scError{2, "The system cannot find the file specified."}
	errSvcCannotAccept    = &scError{1061, "The service cannot accept control messages at this time."}
	errSvcInvalidArgument = &scError{87, "The parameter is incorrect."}
)

func (h *Host) createServiceLocked(name, binPath, startType string, deps []string) *scError {
	if s, ok := h.services[strings.ToLower(name)]; ok {
		if s.MarkedDelete {
			return errSvcMarkedDelete
		}
		return errSvcExists
	}
	h.services[strings.ToLower(name)] = &service{
		ServiceInfo: ServiceInfo{Name: name, DisplayName: name, BinaryPath: binPath, StartType: startType, Dependencies: deps},
		state:       StateStopped,
	}
	return nil
}

// startLocked starts a service as the SCM does: stopped dependencies first (synchronously), then the
// service itself, which stays START_PENDING for ServicePending.
func (h *Host) startLocked(name string) (*service, *scError) {
	s, ok := h.services[strings.ToLower(name)]
	if !ok {
		return nil, errSvcMissing
	}
	if err := h.checkStartableLocked(s); err != nil {
		return s, err
	}
	if s.state != StateStopped {
		return s, errSvcRunning
	}
	if err := h.startDependenciesLocked(s, map[string]bool{strings.ToLower(s.Name): true}); err != nil {
		return s, err
	}
	s.state, s.pid = StateStartPending, h.newPID()
	epoch := h.epoch
	time.AfterFunc(h.opts.ServicePending, func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		if h.epoch == epoch && s.state == StateStartPending {
			h.runningLocked(s)
		}
	})
	return s, nil
}

func (h *Host) checkStartableLocked(s *service) *scError {
	switch {
	case s.MarkedDelete:
		return errSvcMarkedDelete
	case s.StartType == "DISABLED":
		return errSvcDisabled
	case !h.binaryExists(s.BinaryPath):
		return errSvcFileMissing
	}
	return nil
}

func (h *Host) startDependenciesLocked(s *service, visiting map[string]bool) *scError {
	for _, d := range s.Dependencies {
		dep, ok := h.services[strings.ToLower(d)]
		if !ok || dep.MarkedDelete {
			return errSvcDepMissing
		}
		if visiting[strings.ToLower(d)] {
			return errSvcCircular
		}
		if dep.state == StateRunning || dep.state == StateStartPending {
			continue
		}
		if h.checkStartableLocked(dep) != nil {
			return errSvcDepFailed
		}
		visiting[strings.ToLower(d)] = true
		if err := h.startDependenciesLocked(dep, visiting); err != nil {
			return err
		}
		dep.pid = h.newPID()
		h.runningLocked(dep)
		if dep.state != StateRunning {
			return errSvcDepFailed // its process exited at once
		}
	}
	return nil
}

// binaryExists checks the executable at the head of a binPath, when it is an absolute path.
func (h *Host) binaryExists(binPath string) bool {
	exe := strings.Fields(binPath)
	if len(exe) == 0 {
		return false
	}
	p, err := cleanWinPath(exe[0], h.home)
	if err != nil || !(len(exe[0]) > 2 && exe[0][1] == ':') {
		return true // a bare program name resolves through PATH; the simulator trusts it
	}
	n, err := h.fs.stat(p)
	return err == nil && !n.dir
}

func (h *Host) newPID() int { return 1000 + 4*h.rng.IntN(2000) }

// runningLocked completes a start: event, a start line in the log, then the process, which may exit at
// once when what it needs is missing. A kubelet without a Program gets the stand-in configuration check.
func (h *Host) runningLocked(s *service) {
	s.state, s.started = StateRunning, time.Now()
	h.eventLocked("Information", 7036, fmt.Sprintf("The %s service entered the running state.", s.DisplayName))
	h.writeStartLineLocked(s)
	if !h.startProcessLocked(s) {
		return
	}
	if strings.EqualFold(s.Name, "kubelet") && s.cancel == nil {
		epoch := h.epoch
		h.wg.Add(1)
		go func() {
			defer h.wg.Done()
			h.checkKubelet(epoch)
		}()
	}
}

// stopLocked stops a service; Windows refuses while running services depend on it.
func (h *Host) stopLocked(name string) (*service, *scError) {
	s, ok := h.services[strings.ToLower(name)]
	if !ok {
		return nil, errSvcMissing
	}
	switch s.state {
	case StateStopped:
		return s, errSvcNotActive
	case StateStopPending, StateStartPending:
		return s, errSvcCannotAccept
	}
	for _, other := range h.services {
		if other.state != StateStopped && containsFold(other.Dependencies, s.Name) {
			return s, errSvcDependents
		}
	}
	s.state = StateStopPending
	epoch := h.epoch
	time.AfterFunc(h.opts.ServicePending, func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		if h.epoch == epoch && s.state == StateStopPending {
			h.stoppedLocked(s)
		}
	})
	return s, nil
}

func (h *Host) stoppedLocked(s *service) {
	s.endProcessLocked()
	s.state, s.pid = StateStopped, 0
	h.eventLocked("Information", 7036, fmt.Sprintf("The %s service entered the stopped state.", s.DisplayName))
	if s.MarkedDelete {
		delete(h.services, strings.ToLower(s.Name))
	}
}

// crashLocked is an unexpected termination: 7031 when recovery actions are configured, 7034 otherwise. The
// recovery actions are recorded, not carried out (a test's StopService, a process that cannot start); see
// exitedLocked for a process that exits while it runs.
func (h *Host) crashLocked(s *service) { h.terminateLocked(s, false) }

// exitedLocked is a running process that exited on its own: the SCM carries out the service's recovery
// action, as Windows does (a restart after its delay), counting failures since the reset period began.
func (h *Host) exitedLocked(s *service) { h.terminateLocked(s, true) }

func (h *Host) terminateLocked(s *service, recover bool) {
	s.endProcessLocked()
	s.state, s.pid = StateStopped, 0
	s.Crashes++
	now := h.now()
	if s.ResetPeriod > 0 && now.Sub(s.lastFailure) > s.ResetPeriod {
		s.failures = 0
	}
	s.failures++
	s.lastFailure = now
	msg := fmt.Sprintf("The %s service terminated unexpectedly.  It has done this %d time(s).", s.DisplayName, s.Crashes)
	if len(s.Recovery) > 0 {
		a := s.Recovery[min(s.failures, len(s.Recovery))-1]
		h.eventLocked("Error", 7031, fmt.Sprintf("%s  The following corrective action will be taken in %d milliseconds: %s.",
			msg, a.Delay.Milliseconds(), recoveryVerb(a.Type)))
		if recover && a.Type == "restart" && !s.MarkedDelete {
			h.restartLaterLocked(s, a.Delay)
		}
	} else {
		h.eventLocked("Error", 7034, msg)
	}
	if s.MarkedDelete {
		delete(h.services, strings.ToLower(s.Name))
	}
}

// restartLaterLocked starts a service again after its recovery delay, unless the host went down, the service
// was deleted or someone started it meanwhile.
func (h *Host) restartLaterLocked(s *service, delay time.Duration) {
	epoch := h.epoch
	time.AfterFunc(delay, func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		if h.epoch != epoch || h.services[strings.ToLower(s.Name)] != s || s.state != StateStopped {
			return
		}
		_, _ = h.startLocked(s.Name) // a start that fails now is what the SCM logs; the service stays stopped
	})
}

func recoveryVerb(t string) string {
	switch t {
	case "restart":
		return "Restart the service"
	case "reboot":
		return "Restart the machine"
	case "run":
		return "Run the configured recovery program"
	}
	return "No action"
}

// deleteLocked removes a stopped service, or marks a running one for deletion as Windows does.
func (h *Host) deleteLocked(name string) *scError {
	s, ok := h.services[strings.ToLower(name)]
	if !ok {
		return errSvcMissing
	}
	if s.MarkedDelete {
		return errSvcMarkedDelete
	}
	if s.state == StateStopped {
		delete(h.services, strings.ToLower(name))
		return nil
	}
	s.MarkedDelete = true
	return nil
}

// startAutoServicesLocked runs at boot: auto-start services in dependency order.
func (h *Host) startAutoServicesLocked() {
	for _, s := range h.sortedServicesLocked() {
		if s.StartType != "AUTO_START" || s.state != StateStopped || h.checkStartableLocked(s) != nil {
			continue
		}
		if h.startDependenciesLocked(s, map[string]bool{strings.ToLower(s.Name): true}) != nil {
			continue
		}
		s.pid = h.newPID()
		h.runningLocked(s)
	}
}

// sortedServicesLocked orders services by WMCO's start order, then name, for stable output.
func (h *Host) sortedServicesLocked() []*service {
	out := make([]*service, 0, len(h.services))
	for _, s := range h.services {
		out = append(out, s)
	}
	order := func(s *service) int {
		if ws, ok := config.ServiceByName(s.Name); ok {
			return ws.StartOrder
		}
		return 100
	}
	slices.SortFunc(out, func(a, b *service) int {
		if d := order(a) - order(b); d != 0 {
			return d
		}
		return strings.Compare(strings.ToLower(a.Name), strings.ToLower(b.Name))
	})
	return out
}

func containsFold(list []string, s string) bool {
	for _, x := range list {
		if strings.EqualFold(x, s) {
			return true
		}
	}
	return false
}
