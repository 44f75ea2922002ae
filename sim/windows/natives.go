package windows

import (
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf16"
)

// nativeProgram is an .exe: it writes its output and returns its exit code.
type nativeProgram func(s *shellSession, args []string, stdout io.Writer) int

var nativePrograms map[string]nativeProgram

func init() {
	nativePrograms = map[string]nativeProgram{
		"sc.exe":         runSC,
		"route":          runRoute,
		"route.exe":      runRoute,
		"ipconfig":       runIpconfig,
		"ipconfig.exe":   runIpconfig,
		"hostname":       runHostname,
		"hostname.exe":   runHostname,
		"powershell":     runPowerShellExe,
		"powershell.exe": runPowerShellExe,
	}
}

func runHostname(s *shellSession, _ []string, out io.Writer) int {
	fmt.Fprintf(out, "%s\r\n", s.h.Hostname())
	return 0
}

func runIpconfig(s *shellSession, args []string, out io.Writer) int {
	io.WriteString(out, s.h.ipconfigText(slices.ContainsFunc(args, func(a string) bool { return strings.EqualFold(a, "/all") })))
	return 0
}

func runRoute(s *shellSession, args []string, out io.Writer) int {
	switch {
	case len(args) >= 1 && strings.EqualFold(args[0], "print"):
		io.WriteString(out, s.h.routePrintText())
		return 0
	case len(args) >= 1 && strings.EqualFold(args[0], "add"):
		text, code := s.h.routeAdd(args[1:])
		io.WriteString(out, text)
		return code
	}
	io.WriteString(out, "\r\nManipulates network routing tables.\r\n\r\nROUTE [-f] [-p] [-4|-6] command [destination]\r\n                  [MASK netmask]  [gateway] [METRIC metric]  [IF interface]\r\n")
	return 1
}

// runPowerShellExe handles powershell.exe [-NonInteractive] [-ExecutionPolicy X] [-NoProfile]
// (-EncodedCommand B64 | -Command text...): what the client sends on a host whose shell is cmd.
func runPowerShellExe(s *shellSession, args []string, out io.Writer) int {
	for i := 0; i < len(args); i++ {
		switch strings.ToLower(args[i]) {
		case "-noninteractive", "-noprofile", "-nologo":
		case "-executionpolicy", "-ep":
			i++
		case "-encodedcommand", "-enc", "-ec", "-e":
			if i+1 >= len(args) {
				break
			}
			script, err := decodeEncodedCommand(args[i+1])
			if err != nil {
				fmt.Fprintf(s.stderr, "Cannot process the command because the value specified with -EncodedCommand is not properly encoded. The value must be Base64 encoded.\r\n")
				return 1
			}
			return s.child(out).runPowerShell(script)
		case "-command", "-c":
			return s.child(out).runPowerShell(strings.Join(args[i+1:], " "))
		default:
			fmt.Fprintf(s.stderr, "winsim: powershell.exe argument %q is not simulated\r\n", args[i])
			return 1
		}
	}
	fmt.Fprintf(s.stderr, "winsim: an interactive powershell.exe is not simulated; pass -EncodedCommand\r\n")
	return 1
}

func (s *shellSession) child(out io.Writer) *shellSession {
	return &shellSession{h: s.h, ctx: s.ctx, stdout: out, stderr: s.stderr}
}

// decodeEncodedCommand reverses -EncodedCommand: base64 of the UTF-16LE text.
func decodeEncodedCommand(b64 string) (string, error) {
	raw, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		return "", err
	}
	if len(raw)%2 != 0 {
		return "", fmt.Errorf("odd length %d for UTF-16", len(raw))
	}
	units := make([]uint16, len(raw)/2)
	for i := range units {
		units[i] = binary.LittleEndian.Uint16(raw[2*i:])
	}
	return string(utf16.Decode(units)), nil
}

// EncodeCommand is the -EncodedCommand form of a PowerShell line, for tests and other packages.
func EncodeCommand(script string) string {
	units := utf16.Encode([]rune(script))
	raw := make([]byte, 2*len(units))
	for i, u := range units {
		binary.LittleEndian.PutUint16(raw[2*i:], u)
	}
	return base64.StdEncoding.EncodeToString(raw)
}

// runCmd is cmd.exe /c LINE: native programs run, anything else is not recognized (exit 9009).
func (s *shellSession) runCmd(line string) int {
	args := cmdSplit(line)
	if len(args) == 0 {
		return 0
	}
	name := strings.ToLower(args[0])
	if name == "sc" {
		name = "sc.exe"
	}
	if prog, ok := nativePrograms[name]; ok {
		return prog(s, args[1:], s.stdout)
	}
	fmt.Fprintf(s.stderr, "'%s' is not recognized as an internal or external command,\r\noperable program or batch file.\r\n", args[0])
	return 9009
}

// cmdSplit splits a cmd.exe command line on spaces, honouring double quotes.
func cmdSplit(line string) []string {
	var args []string
	var cur strings.Builder
	inQuote, have := false, false
	for _, r := range line {
		switch {
		case r == '"':
			inQuote, have = !inQuote, true
		case (r == ' ' || r == '\t') && !inQuote:
			if have {
				args = append(args, cur.String())
				cur.Reset()
				have = false
			}
		default:
			cur.WriteRune(r)
			have = true
		}
	}
	if have {
		args = append(args, cur.String())
	}
	return args
}

// lineWriter turns a native program's output into pipeline strings as it is written.
type lineWriter struct {
	emit emitFn
	buf  []byte
	err  error
}

func (w *lineWriter) Write(b []byte) (int, error) {
	if w.err != nil {
		return 0, w.err
	}
	w.buf = append(w.buf, b...)
	for {
		i := strings.IndexByte(string(w.buf), '\n')
		if i < 0 {
			return len(b), nil
		}
		line := strings.TrimSuffix(string(w.buf[:i]), "\r")
		w.buf = w.buf[i+1:]
		if w.err = w.emit(line); w.err != nil {
			return 0, w.err
		}
	}
}

func (w *lineWriter) flush() error {
	if len(w.buf) > 0 && w.err == nil {
		w.err = w.emit(string(w.buf))
		w.buf = nil
	}
	return w.err
}

// runSC implements the sc.exe commands in COMMANDS.md. sc.exe writes everything, errors included,
// to stdout, and exits with the Win32 error code.
func runSC(s *shellSession, args []string, out io.Writer) int {
	if len(args) < 2 {
		io.WriteString(out, "DESCRIPTION:\r\n        SC is a command line program used for communicating with the\r\n        Service Control Manager and services.\r\n")
		return 1639
	}
	// The output is written after the lock is released: writers may wait (latency) or block.
	var buf strings.Builder
	s.h.mu.Lock()
	code := scLocked(s.h, args, &buf)
	s.h.mu.Unlock()
	io.WriteString(out, buf.String())
	return code
}

func scLocked(h *Host, args []string, out io.Writer) int {
	op, name, rest := strings.ToLower(args[0]), args[1], args[2:]
	switch op {
	case "qc":
		return scQC(h, name, out)
	case "query":
		svc, ok := h.services[strings.ToLower(name)]
		if !ok {
			return scFail(out, "EnumQueryServicesStatus:OpenService", errSvcMissing)
		}
		io.WriteString(out, queryBlock(svc, false))
		return 0
	case "start":
		svc, err := h.startLocked(name)
		if err != nil {
			return scFail(out, scOp("StartService", err), err)
		}
		io.WriteString(out, queryBlock(svc, true))
		return 0
	case "stop":
		svc, err := h.stopLocked(name)
		if err != nil {
			return scFail(out, scOp("ControlService", err), err)
		}
		io.WriteString(out, queryBlock(svc, false))
		return 0
	case "delete":
		if err := h.deleteLocked(name); err != nil {
			return scFail(out, scOp("DeleteService", err), err)
		}
		io.WriteString(out, "[SC] DeleteService SUCCESS\r\n")
		return 0
	case "create":
		return scCreate(h, name, rest, out)
	case "description":
		svc, ok := h.services[strings.ToLower(name)]
		if !ok {
			return scFail(out, "OpenService", errSvcMissing)
		}
		svc.Description = strings.Join(rest, " ")
		io.WriteString(out, "[SC] ChangeServiceConfig2 SUCCESS\r\n")
		return 0
	case "failure":
		return scFailureActions(h, name, rest, out)
	}
	fmt.Fprintf(out, "[SC] winsim does not simulate sc.exe %s\r\n", args[0])
	return 1639
}

func scOp(op string, err *scError) string {
	if err == errSvcMissing {
		if op == "StartService" {
			return "StartService: OpenService"
		}
		return "OpenService"
	}
	return op
}

func scFail(out io.Writer, op string, err *scError) int {
	fmt.Fprintf(out, "[SC] %s FAILED %d:\r\n\r\n%s\r\n\r\n", op, err.code, err.text)
	return err.code
}

func queryBlock(s *service, withPID bool) string {
	controls := "(STOPPABLE, NOT_PAUSABLE, ACCEPTS_SHUTDOWN)"
	if s.state != StateRunning {
		controls = "(NOT_STOPPABLE, NOT_PAUSABLE, IGNORES_SHUTDOWN)"
	}
	lines := []string{
		"",
		"SERVICE_NAME: " + s.Name,
		"        TYPE               : 10  WIN32_OWN_PROCESS  ",
		fmt.Sprintf("        STATE              : %d  %s ", int(s.state), s.state),
		"                                " + controls,
		"        WIN32_EXIT_CODE    : 0  (0x0)",
		"        SERVICE_EXIT_CODE  : 0  (0x0)",
		"        CHECKPOINT         : 0x0",
		"        WAIT_HINT          : 0x7d0",
	}
	if withPID {
		lines = append(lines, "        PID                : "+strconv.Itoa(s.pid), "        FLAGS              :")
	}
	return strings.Join(lines, "\r\n") + "\r\n"
}

var startTypeCodes = map[string]string{"AUTO_START": "2   AUTO_START", "DEMAND_START": "3   DEMAND_START", "DISABLED": "4   DISABLED"}

func scQC(h *Host, name string, out io.Writer) int {
	s, ok := h.services[strings.ToLower(name)]
	if !ok {
		return scFail(out, "OpenService", errSvcMissing)
	}
	deps := []string{""}
	if len(s.Dependencies) > 0 {
		deps = s.Dependencies
	}
	lines := []string{
		"[SC] QueryServiceConfig SUCCESS",
		"",
		"SERVICE_NAME: " + s.Name,
		"        TYPE               : 10  WIN32_OWN_PROCESS ",
		"        START_TYPE         : " + startTypeCodes[s.StartType],
		"        ERROR_CONTROL      : 1   NORMAL",
		"        BINARY_PATH_NAME   : " + s.BinaryPath,
		"        LOAD_ORDER_GROUP   : ",
		"        TAG                : 0",
		"        DISPLAY_NAME       : " + s.DisplayName,
		"        DEPENDENCIES       : " + deps[0],
	}
	for _, d := range deps[1:] {
		lines = append(lines, "                           : "+d)
	}
	lines = append(lines, "        SERVICE_START_NAME : LocalSystem")
	io.WriteString(out, strings.Join(lines, "\r\n")+"\r\n")
	return 0
}

// scOptions reads sc.exe's key= value options: "key=value" in one argument or "key=" then the value.
func scOptions(args []string) (map[string]string, bool) {
	opts := map[string]string{}
	for i := 0; i < len(args); i++ {
		k, v, ok := strings.Cut(args[i], "=")
		if !ok {
			return nil, false
		}
		if v == "" && i+1 < len(args) { // "binPath= C:\x.exe --a=b": the next argument is the value
			v = args[i+1]
			i++
		}
		opts[strings.ToLower(k)] = v
	}
	return opts, true
}

func scCreate(h *Host, name string, args []string, out io.Writer) int {
	opts, ok := scOptions(args)
	bin := opts["binpath"]
	if !ok || bin == "" {
		io.WriteString(out, "DESCRIPTION:\r\n        Creates a service entry in the registry and Service Database.\r\nUSAGE:\r\n        sc <server> create [service name] [binPath= ] <option1> <option2>...\r\n")
		return 1639
	}
	start := map[string]string{"auto": "AUTO_START", "delayed-auto": "AUTO_START", "demand": "DEMAND_START", "disabled": "DISABLED", "": "DEMAND_START"}[strings.ToLower(opts["start"])]
	if start == "" {
		return scFail(out, "CreateService", errSvcInvalidArgument)
	}
	var deps []string
	for _, d := range strings.Split(opts["depend"], "/") {
		if d != "" {
			deps = append(deps, d)
		}
	}
	if err := h.createServiceLocked(name, bin, start, deps); err != nil {
		return scFail(out, "CreateService", err)
	}
	if dn, ok := opts["displayname"]; ok && dn != "" {
		h.services[strings.ToLower(name)].DisplayName = dn
	}
	io.WriteString(out, "[SC] CreateService SUCCESS\r\n")
	return 0
}

// scFailureActions records `reset= N actions= type/ms/type/ms...`.
func scFailureActions(h *Host, name string, args []string, out io.Writer) int {
	s, ok := h.services[strings.ToLower(name)]
	if !ok {
		return scFail(out, "OpenService", errSvcMissing)
	}
	opts, ok := scOptions(args)
	if !ok {
		return scFail(out, "ChangeServiceConfig2", errSvcInvalidArgument)
	}
	if r, ok := opts["reset"]; ok {
		n, err := strconv.Atoi(r)
		if err != nil {
			return scFail(out, "ChangeServiceConfig2", errSvcInvalidArgument)
		}
		s.ResetPeriod = time.Duration(n) * time.Second
	}
	if a, ok := opts["actions"]; ok {
		parts := strings.Split(a, "/")
		if len(parts)%2 != 0 {
			return scFail(out, "ChangeServiceConfig2", errSvcInvalidArgument)
		}
		var actions []RecoveryAction
		for i := 0; i < len(parts); i += 2 {
			ms, err := strconv.Atoi(parts[i+1])
			if err != nil {
				return scFail(out, "ChangeServiceConfig2", errSvcInvalidArgument)
			}
			actions = append(actions, RecoveryAction{Type: strings.ToLower(parts[i]), Delay: time.Duration(ms) * time.Millisecond})
		}
		s.Recovery = actions
	}
	io.WriteString(out, "[SC] ChangeServiceConfig2 SUCCESS\r\n")
	return 0
}
