package windows

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// cmdletSpec declares a cmdlet's parameters so arguments bind as PowerShell binds them.
type cmdletSpec struct {
	name       string
	params     []string // take a value
	switches   []string
	positional string // parameter the first positional argument binds to
	run        func(p *pipeline, a *boundArgs, emit emitFn) error
}

var cmdlets map[string]*cmdletSpec

func init() {
	specs := []*cmdletSpec{
		{name: "Get-Help", params: []string{"Name"}, positional: "Name", run: runGetHelp},
		{name: "Test-Path", params: []string{"LiteralPath", "Path"}, positional: "Path", run: runTestPath},
		{name: "Get-FileHash", params: []string{"LiteralPath", "Path", "Algorithm"}, positional: "Path", run: runGetFileHash},
		{name: "New-Item", params: []string{"Path", "ItemType", "Name", "Value"}, switches: []string{"Force"}, positional: "Path", run: runNewItem},
		{name: "Move-Item", params: []string{"LiteralPath", "Path", "Destination"}, switches: []string{"Force"}, positional: "Path", run: runMoveItem},
		{name: "Remove-Item", params: []string{"LiteralPath", "Path"}, switches: []string{"Force", "Recurse"}, positional: "Path", run: runRemoveItem},
		{name: "Get-Item", params: []string{"LiteralPath", "Path"}, switches: []string{"Force"}, positional: "Path", run: runGetItem},
		{name: "Get-Content", params: []string{"LiteralPath", "Path", "Tail"}, switches: []string{"Wait"}, positional: "Path", run: runGetContent},
		{name: "Get-ChildItem", params: []string{"LiteralPath", "Path", "Filter"}, switches: []string{"Name", "Force"}, positional: "Path", run: runGetChildItem},
		{name: "Get-Service", params: []string{"Name"}, positional: "Name", run: runGetService},
		{name: "Restart-Computer", switches: []string{"Force"}, run: runRestartComputer},
		{name: "Rename-Computer", params: []string{"NewName"}, switches: []string{"Force"}, positional: "NewName", run: runRenameComputer},
		{name: "Get-NetRoute", params: []string{"DestinationPrefix", "AddressFamily"}, positional: "DestinationPrefix", run: runGetNetRoute},
		{name: "Get-WinEvent", params: []string{"FilterHashtable", "MaxEvents", "LogName"}, positional: "LogName", run: runGetWinEvent},
		{name: "Import-Module", params: []string{"Name"}, switches: []string{"DisableNameChecking"}, positional: "Name", run: runImportModule},
		{name: "Get-HnsNetwork", run: runGetHnsNetwork},
		{name: "Get-Date", params: []string{"Format"}, run: runGetDate},
		{name: "Invoke-HNSRequest", params: []string{"Method", "Type", "Action", "Data", "Id"}, run: runInvokeHNSRequest},
		{name: "New-HnsEndpoint", params: []string{"NetworkId", "Name", "IPAddress", "Gateway", "MacAddress"}, run: runNewHnsEndpoint},
		{name: "Attach-HNSHostEndpoint", params: []string{"EndpointID", "CompartmentID"}, run: runAttachHNSHostEndpoint},
		{name: "Get-NetIPConfiguration", switches: []string{"AllCompartments", "All", "Detailed"}, run: runGetNetIPConfiguration},
		{name: "Get-NetIPAddress", params: []string{"AddressFamily", "InterfaceIndex"}, run: runGetNetIPAddress},
		{name: "Invoke-RestMethod", params: []string{"Uri", "Method", "Headers", "TimeoutSec"}, switches: []string{"UseBasicParsing"}, positional: "Uri", run: runInvokeRestMethod},
		{name: "Get-Process", params: []string{"Name"}, positional: "Name", run: runGetProcess},
		{name: "Add-MpPreference", params: []string{"ExclusionProcess"}, run: runAddMpPreference},
		{name: "Remove-HnsNetwork"},
		{name: "Where-Object", params: []string{"Property", "Value"}, switches: []string{"EQ"}, positional: "Property"},
		{name: "Out-Null"},
		{name: "Select-Object", params: []string{"Skip", "First"}},
		{name: "ForEach-Object", params: []string{"Process"}, positional: "Process"},
	}
	cmdlets = map[string]*cmdletSpec{}
	for _, s := range specs {
		cmdlets[strings.ToLower(s.name)] = s
	}
	cmdlets["foreach"] = cmdlets["foreach-object"]
	cmdlets["%"] = cmdlets["foreach-object"]
	cmdlets["select"] = cmdlets["select-object"]
	cmdlets["gc"] = cmdlets["get-content"]
}

// argValue is a bound argument: a list of strings, a script block or a hashtable.
type argValue struct {
	list  []string
	block []token
	hash  map[string]string
}

type boundArgs struct {
	named    map[string]argValue // lower-case parameter name
	switches map[string]bool
}

func (a *boundArgs) str(name string) (string, bool) {
	v, ok := a.named[name]
	if !ok || len(v.list) == 0 {
		return "", false
	}
	return v.list[0], true
}

// silent reports -ErrorAction SilentlyContinue or Ignore.
func (a *boundArgs) silent() bool {
	ea, _ := a.str("erroraction")
	return strings.EqualFold(ea, "SilentlyContinue") || strings.EqualFold(ea, "Ignore")
}

// stop reports -ErrorAction Stop: the cmdlet's errors end the whole command line.
func (a *boundArgs) stop() bool {
	ea, _ := a.str("erroraction")
	return strings.EqualFold(ea, "Stop")
}

type bindError struct{ cmd, msg, id string }

func (e *bindError) Error() string { return e.msg }

// bindArgs binds tokens to a cmdlet's parameters: exact (case-insensitive) names, switches, one
// positional parameter, comma lists, script blocks and hashtables. -ErrorAction is common to all.
func bindArgs(spec *cmdletSpec, toks []token) (*boundArgs, error) {
	a := &boundArgs{named: map[string]argValue{}, switches: map[string]bool{}}
	params := append([]string{"ErrorAction"}, spec.params...)
	for i := 0; i < len(toks); {
		t := toks[i]
		if t.kind == tokWord && isParameterName(t.text) {
			name := strings.TrimSuffix(t.text[1:], ":")
			if sw := findFold(spec.switches, name); sw != "" {
				a.switches[strings.ToLower(sw)] = true
				i++
				continue
			}
			param := findFold(params, name)
			if param == "" && strings.EqualFold(name, "ifIndex") { // InterfaceIndex's alias
				param = findFold(params, "InterfaceIndex")
			}
			if param == "" {
				return nil, &bindError{spec.name, fmt.Sprintf("A parameter cannot be found that matches parameter name '%s'.", name), "NamedParameterNotFound"}
			}
			v, next, err := readValue(toks, i+1)
			if err != nil || next == i+1 {
				return nil, &bindError{spec.name, fmt.Sprintf("Missing an argument for parameter '%s'. Specify a parameter of type 'System.String' and try again.", param), "MissingArgument"}
			}
			a.named[strings.ToLower(param)] = v
			i = next
			continue
		}
		v, next, err := readValue(toks, i)
		if err != nil {
			return nil, err
		}
		if spec.positional == "" || a.has(spec.positional) {
			return nil, &bindError{spec.name, fmt.Sprintf("A positional parameter cannot be found that accepts argument '%s'.", t.text), "PositionalParameterNotFound"}
		}
		a.named[strings.ToLower(spec.positional)] = v
		i = next
	}
	return a, nil
}

func (a *boundArgs) has(name string) bool {
	_, ok := a.named[strings.ToLower(name)]
	return ok
}

func isParameterName(s string) bool {
	if len(s) < 2 || s[0] != '-' {
		return false
	}
	_, err := strconv.ParseFloat(s, 64)
	return err != nil
}

func findFold(list []string, s string) string {
	for _, x := range list {
		if strings.EqualFold(x, s) {
			return x
		}
	}
	return ""
}

// readValue reads one argument starting at i: glued parts form one string, commas join a list, and
// { } and @{ } are a script block and a hashtable.
func readValue(toks []token, i int) (argValue, int, error) {
	if i >= len(toks) {
		return argValue{}, i, nil
	}
	switch toks[i].text {
	case "{":
		end := matchClose(toks, i)
		next := end + 1
		if next < len(toks) && toks[next].glued && toks[next].kind == tokWord && toks[next].text == "[0]" {
			next++ // {$_.ifIndex}[0]: indexing one value with 0 gives the value itself, as PowerShell does
		}
		return argValue{block: toks[i+1 : end]}, next, nil
	case "@{":
		end := matchClose(toks, i)
		h, err := parseHashtable(toks[i+1 : end])
		return argValue{hash: h}, end + 1, err
	}
	var v argValue
	for {
		s, next, ok := readScalar(toks, i)
		if !ok {
			return v, i, nil
		}
		v.list = append(v.list, s)
		i = next
		if i < len(toks) && toks[i].kind == tokOp && toks[i].text == "," {
			i++
			continue
		}
		return v, i, nil
	}
}

func readScalar(toks []token, i int) (string, int, bool) {
	if i >= len(toks) || toks[i].kind == tokOp || (toks[i].kind == tokWord && isParameterName(toks[i].text)) {
		return "", i, false
	}
	var sb strings.Builder
	sb.WriteString(toks[i].text)
	i++
	for i < len(toks) && toks[i].glued && toks[i].kind != tokOp {
		sb.WriteString(toks[i].text)
		i++
	}
	return sb.String(), i, true
}

// parseHashtable reads Key='value'; 'Key'='value' pairs.
func parseHashtable(toks []token) (map[string]string, error) {
	entries, err := splitTop(toks, ";")
	if err != nil {
		return nil, err
	}
	h := map[string]string{}
	for _, e := range entries {
		if len(e) == 0 {
			continue
		}
		switch {
		case len(e) == 2 && e[0].kind == tokWord && strings.HasSuffix(e[0].text, "=") && e[1].kind == tokString:
			h[strings.ToLower(strings.TrimSuffix(e[0].text, "="))] = e[1].text
		case len(e) == 3 && e[0].kind == tokString && e[1].kind == tokWord && e[1].text == "=" && e[2].kind == tokString:
			h[strings.ToLower(e[0].text)] = e[2].text // 'Metadata-Flavor'='Google': a key that needs quotes
		default:
			return nil, errors.New("winsim only simulates hashtables of Key='value' entries")
		}
	}
	return h, nil
}

// filter builds a downstream pipeline element: Out-Null, Select-Object, ForEach-Object, Where-Object,
// Remove-HnsNetwork.
func (p *pipeline) filter(toks []token, next emitFn) (emitFn, error) {
	if toks[0].kind != tokWord {
		return nil, errors.New("winsim: expressions are only simulated at the start of a pipeline")
	}
	spec, ok := cmdlets[strings.ToLower(toks[0].text)]
	if !ok {
		return nil, &unknownCommand{toks[0].text}
	}
	a, err := bindArgs(spec, toks[1:])
	if err != nil {
		return nil, err
	}
	switch spec.name {
	case "Out-Null":
		return func(any) error { return nil }, nil
	case "Select-Object":
		return selectObject(spec, a, next)
	case "Where-Object":
		return whereObject(spec, a, next)
	case "Remove-HnsNetwork":
		return p.removeHnsNetwork(next)
	case "Get-NetIPAddress":
		return p.getNetIPAddressFilter(spec, a, next)
	case "ForEach-Object":
		v, ok := a.named["process"]
		if !ok || v.block == nil {
			return nil, &bindError{spec.name, "winsim only simulates ForEach-Object { script block }.", "SimulatorUnsupported"}
		}
		return func(in any) error {
			out, err := evalBlock(v.block, in)
			if err != nil {
				p.cmdError("ForEach-Object", a, err.Error(), "InvalidOperation: (:) [], RuntimeException", "SimulatorUnsupported")
				return nil
			}
			return next(out)
		}, nil
	}
	return nil, fmt.Errorf("winsim: %s is not simulated after a pipe", spec.name)
}

func selectObject(spec *cmdletSpec, a *boundArgs, next emitFn) (emitFn, error) {
	skip, first := 0, -1
	var err error
	if s, ok := a.str("skip"); ok {
		if skip, err = strconv.Atoi(s); err != nil || skip < 0 {
			return nil, &bindError{spec.name, fmt.Sprintf("Cannot validate argument on parameter 'Skip'. %q is not a non-negative integer.", s), "ParameterArgumentValidationError"}
		}
	}
	if s, ok := a.str("first"); ok {
		if first, err = strconv.Atoi(s); err != nil || first < 0 {
			return nil, &bindError{spec.name, fmt.Sprintf("Cannot validate argument on parameter 'First'. %q is not a non-negative integer.", s), "ParameterArgumentValidationError"}
		}
	}
	seen, passed := 0, 0
	return func(v any) error {
		seen++
		if seen <= skip {
			return nil
		}
		if first >= 0 && passed >= first {
			return errStopPipeline
		}
		passed++
		if err := next(v); err != nil {
			return err
		}
		if first >= 0 && passed >= first {
			return errStopPipeline
		}
		return nil
	}, nil
}

// evalBlock evaluates a script block of the form term + term + ..., where a term is a literal or
// $_ with properties and an optional ToString('format') call.
func evalBlock(block []token, in any) (any, error) {
	var result any
	expectTerm := true
	for i := 0; i < len(block); {
		t := block[i]
		if !expectTerm {
			if t.kind != tokWord || t.text != "+" {
				return nil, fmt.Errorf("winsim: unsupported token %q in a script block", t.text)
			}
			expectTerm = true
			i++
			continue
		}
		v, next, err := evalTerm(block, i, in)
		if err != nil {
			return nil, err
		}
		if result == nil {
			result = v
		} else {
			result = toText(result) + toText(v)
		}
		i, expectTerm = next, false
	}
	return result, nil
}

func evalTerm(block []token, i int, in any) (any, int, error) {
	t := block[i]
	if t.kind == tokString {
		return t.text, i + 1, nil
	}
	if t.kind != tokWord || !(t.text == "$_" || strings.HasPrefix(t.text, "$_.")) {
		return nil, 0, fmt.Errorf("winsim: unsupported term %q in a script block", t.text)
	}
	path := strings.Split(strings.ToLower(t.text), ".")[1:]
	var callArgs []token
	next := i + 1
	if next < len(block) && block[next].kind == tokOp && block[next].text == "(" && block[next].glued {
		end := matchClose(block, next)
		callArgs, next = block[next+1:end], end+1
	}
	hasCall := next > i+1
	v := in
	for j, name := range path {
		if j == len(path)-1 && hasCall {
			return callMethod(v, name, callArgs), next, nil
		}
		v, _ = propertyOf(v, name)
	}
	return v, next, nil
}

// callMethod supports ToString, ToString('o'), ToUpper and ToLower.
func callMethod(v any, name string, args []token) any {
	switch name {
	case "tostring":
		if t, ok := v.(time.Time); ok && len(args) == 1 && args[0].text == "o" {
			return roundTrip(t)
		}
		return toText(v)
	case "toupper":
		return strings.ToUpper(toText(v))
	case "tolower":
		return strings.ToLower(toText(v))
	}
	return nil
}

func runGetHelp(p *pipeline, _ *boundArgs, emit emitFn) error {
	for _, l := range []string{"", "TOPIC", "    Windows PowerShell Help System", "", "SHORT DESCRIPTION",
		"    Displays help about Windows PowerShell cmdlets and concepts."} {
		if err := emit(l); err != nil {
			return err
		}
	}
	return nil
}

func runGetService(p *pipeline, a *boundArgs, emit emitFn) error {
	h := p.s.h
	h.mu.Lock()
	var out []any
	var missing []string
	if v, ok := a.named["name"]; ok {
		for _, n := range v.list {
			if s, ok := h.services[strings.ToLower(n)]; ok {
				out = append(out, serviceObject{name: s.Name, display: s.DisplayName, status: s.state.psStatus(), startType: s.StartType})
			} else {
				missing = append(missing, n)
			}
		}
	} else {
		for _, s := range h.sortedServicesLocked() {
			out = append(out, serviceObject{name: s.Name, display: s.DisplayName, status: s.state.psStatus(), startType: s.StartType})
		}
	}
	h.mu.Unlock()
	for _, n := range missing {
		p.cmdError("Get-Service", a, fmt.Sprintf("Cannot find any service with service name '%s'.", n),
			fmt.Sprintf("ObjectNotFound: (%s:String) [Get-Service], ServiceCommandException", n), "NoServiceFoundForGivenName,Microsoft.PowerShell.Commands.GetServiceCommand")
	}
	return emitAll(out, emit)
}

func emitAll(vs []any, emit emitFn) error {
	for _, v := range vs {
		if err := emit(v); err != nil {
			return err
		}
	}
	return nil
}

func runRestartComputer(p *pipeline, _ *boundArgs, _ emitFn) error {
	// Windows returns at once and drops the connection while shutting down; the delay lets the reply
	// (and any injected latency) reach the client first.
	time.AfterFunc(100*time.Millisecond+2*p.s.h.currentLatency(), p.s.h.Reboot)
	return nil
}

func runGetNetRoute(p *pipeline, a *boundArgs, emit emitFn) error {
	prefix, _ := a.str("destinationprefix")
	routes := p.s.h.netRoutes(prefix)
	if len(routes) == 0 {
		p.cmdError("Get-NetRoute", a, fmt.Sprintf("No MSFT_NetRoute objects found with property 'DestinationPrefix' equal to '%s'.  Verify the value of the property and retry.", prefix),
			fmt.Sprintf("ObjectNotFound: (%s:String) [Get-NetRoute], CimJobException", prefix), "CmdletizationQuery_NotFound_DestinationPrefix,Get-NetRoute")
		return nil
	}
	return emitAll(routes, emit)
}

func runGetWinEvent(p *pipeline, a *boundArgs, emit emitFn) error {
	filter := a.named["filterhashtable"].hash
	maxEvents := -1
	if s, ok := a.str("maxevents"); ok {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			p.cmdError("Get-WinEvent", a, fmt.Sprintf("Cannot validate argument on parameter 'MaxEvents'. The %s argument is less than the minimum allowed range of 1.", s),
				"InvalidData: (:) [Get-WinEvent], ParameterBindingValidationException", "ParameterArgumentValidationError")
			return nil
		}
		maxEvents = n
	}
	events := p.s.h.scmEvents(filter, maxEvents)
	if len(events) == 0 {
		p.cmdError("Get-WinEvent", a, "No events were found that match the specified selection criteria.",
			"ObjectNotFound: (:) [Get-WinEvent], Exception", "NoMatchingEventsFound,Microsoft.PowerShell.Commands.GetWinEventCommand")
		return nil
	}
	return emitAll(events, emit)
}

// scmEvents returns System log events of the Service Control Manager, newest first.
func (h *Host) scmEvents(filter map[string]string, maxEvents int) []any {
	if filter != nil {
		if ln, ok := filter["logname"]; ok && !strings.EqualFold(ln, "System") {
			return nil
		}
		if pn, ok := filter["providername"]; ok && !strings.EqualFold(pn, "Service Control Manager") {
			return nil
		}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []any
	for i := len(h.events) - 1; i >= 0 && (maxEvents < 0 || len(out) < maxEvents); i-- {
		out = append(out, eventObject(h.events[i]))
	}
	return out
}

type serviceObject struct{ name, display, status, startType string }

func (s serviceObject) property(n string) (any, bool) {
	switch n {
	case "name", "servicename":
		return s.name, true
	case "displayname":
		return s.display, true
	case "status":
		return s.status, true
	case "starttype":
		return map[string]string{"AUTO_START": "Automatic", "DEMAND_START": "Manual", "DISABLED": "Disabled"}[s.startType], true
	}
	return nil, false
}

func (s serviceObject) tableHeader() []string {
	return []string{"Status   Name               DisplayName", "------   ----               -----------"}
}

func (s serviceObject) tableRow() string {
	return fmt.Sprintf("%-8s %-18s %s", s.status, s.name, s.display)
}

type eventObject scmEvent

func (e eventObject) property(n string) (any, bool) {
	switch n {
	case "timecreated":
		return e.time, true
	case "leveldisplayname":
		return e.level, true
	case "message":
		return e.message, true
	case "id":
		return e.id, true
	case "providername":
		return "Service Control Manager", true
	case "logname":
		return "System", true
	}
	return nil, false
}

func (e eventObject) tableHeader() []string {
	return []string{"   ProviderName: Service Control Manager", "", "TimeCreated                     Id LevelDisplayName Message",
		"-----------                     -- ---------------- -------"}
}

func (e eventObject) tableRow() string {
	return fmt.Sprintf("%-26s %7d %-16s %s", toText(e.time), e.id, e.level, e.message)
}
