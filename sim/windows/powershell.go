package windows

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// shellSession runs one exec request's command line.
type shellSession struct {
	h      *Host
	ctx    context.Context
	stdout io.Writer
	stderr io.Writer
	// stopped is set by an error under -ErrorAction Stop: it is terminating, so the rest of the line does
	// not run (powershell -Command then exits 1).
	stopped bool
	// hnsImported: Import-Module of hns.psm1 ran in this session, so its HNS cmdlets exist.
	hnsImported bool
}

// runCommandLine runs a line with the host's default shell, as Windows OpenSSH does with
// `powershell.exe -c <line>` or `cmd.exe /c <line>`.
func (s *shellSession) runCommandLine(line string) int {
	if s.h.opts.Shell == "cmd" {
		return s.runCmd(line)
	}
	return s.runPowerShell(line)
}

// runPowerShell runs every statement; like `powershell -Command`, the exit code is 0 when the last
// statement succeeded and 1 otherwise (a native program's own non-zero code also becomes 1).
func (s *shellSession) runPowerShell(line string) int {
	s.h.mu.Lock()
	s.h.executed = append(s.h.executed, line)
	s.h.mu.Unlock()
	script, err := parseScript(line)
	if err != nil {
		s.writeParseError(err)
		return 1
	}
	ok := true
	for _, pipe := range script {
		if s.ctx.Err() != nil {
			return 1
		}
		ok = s.runStatement(pipe)
		if s.stopped {
			return 1
		}
	}
	if ok {
		return 0
	}
	return 1
}

func (s *shellSession) writeParseError(err error) {
	var pe *parseError
	id := "ParseException"
	if errors.As(err, &pe) {
		id = pe.id
	}
	fmt.Fprintf(s.stderr, "At line:1 char:%d\r\n%s\r\n    + CategoryInfo          : ParserError: (:) [], ParentContainsErrorRecordException\r\n    + FullyQualifiedErrorId : %s\r\n \r\n",
		pos(pe)+1, err.Error(), id)
}

func pos(pe *parseError) int {
	if pe == nil {
		return 0
	}
	return pe.pos
}

// emitFn passes one object down the pipeline. errStopPipeline ends the source early (Select -First).
type emitFn func(v any) error

var errStopPipeline = errors.New("pipeline stopped")

// pipeline runs one statement and remembers whether any command in it wrote an error: PowerShell
// sets $? to false then, even when -ErrorAction SilentlyContinue hid the message.
type pipeline struct {
	s      *shellSession
	failed bool
}

func (s *shellSession) runStatement(pipe [][]token) bool {
	p := &pipeline{s: s}
	out := &formatter{w: s.stdout}
	sink := emitFn(out.write)
	for i := len(pipe) - 1; i >= 1; i-- {
		next, err := p.filter(pipe[i], sink)
		if err != nil {
			p.reportBindError(pipe[i], err)
			return false
		}
		sink = next
	}
	if err := p.source(pipe[0], sink); err != nil && !errors.Is(err, errStopPipeline) {
		p.failed = true
	}
	out.finish()
	return !p.failed
}

// cmdError writes a non-terminating error the way PowerShell shows it, unless silenced.
func (p *pipeline) cmdError(cmd string, a *boundArgs, msg, category, id string) {
	p.failed = true
	if a != nil && a.stop() {
		p.s.stopped = true
	}
	if a != nil && a.silent() {
		return
	}
	fmt.Fprintf(p.s.stderr, "%s : %s\r\nAt line:1 char:1\r\n    + CategoryInfo          : %s\r\n    + FullyQualifiedErrorId : %s\r\n \r\n",
		cmd, msg, category, id)
}

func (p *pipeline) notRecognized(name string) {
	p.failed = true
	fmt.Fprintf(p.s.stderr, "%s : The term '%s' is not recognized as the name of a cmdlet, function, script file, or operable program.\r\n"+
		"Check the spelling of the name, or if a path was included, verify that the path is correct and try again.\r\n"+
		"At line:1 char:1\r\n    + CategoryInfo          : ObjectNotFound: (%s:String) [], CommandNotFoundException\r\n"+
		"    + FullyQualifiedErrorId : CommandNotFoundException\r\n \r\n", name, name, name)
}

func (p *pipeline) reportBindError(toks []token, err error) {
	name := "winsim"
	if len(toks) > 0 {
		name = toks[0].text
	}
	var be *bindError
	if errors.As(err, &be) {
		p.cmdError(be.cmd, nil, be.msg, "InvalidArgument: (:) ["+be.cmd+"], ParameterBindingException", be.id)
		return
	}
	var ue *unknownCommand
	if errors.As(err, &ue) {
		p.notRecognized(ue.name)
		return
	}
	p.cmdError(name, nil, err.Error(), "NotImplemented: (:) [], NotSupportedException", "SimulatorUnsupported")
}

type unknownCommand struct{ name string }

func (e *unknownCommand) Error() string { return "unknown command " + e.name }

// source runs the first element of a pipeline: an expression, a static method call, a literal, a
// cmdlet or a native program.
func (p *pipeline) source(toks []token, emit emitFn) error {
	first := toks[0]
	switch {
	case first.kind == tokOp && (first.text == "(" || first.text == "@("):
		return p.memberExpression(toks, emit)
	case first.kind == tokWord && strings.HasPrefix(first.text, "["):
		return p.staticCall(toks, emit)
	case first.kind == tokString && len(toks) == 1:
		return emit(first.text)
	case first.kind == tokWord:
		return p.command(toks, emit)
	}
	p.reportBindError(toks, fmt.Errorf("winsim does not simulate an expression starting with %q", first.text))
	return nil
}

func (p *pipeline) command(toks []token, emit emitFn) error {
	name := toks[0].text
	if spec, ok := cmdlets[strings.ToLower(name)]; ok && spec.run != nil {
		a, err := bindArgs(spec, toks[1:])
		if err != nil {
			p.reportBindError(toks, err)
			return nil
		}
		return spec.run(p, a, emit)
	}
	if native, ok := nativePrograms[strings.ToLower(name)]; ok {
		args, err := nativeArgs(toks[1:])
		if err != nil {
			p.reportBindError(toks, err)
			return nil
		}
		return p.runNative(native, args, emit)
	}
	if strings.EqualFold(name, "sc") {
		p.cmdError("Set-Content", nil, "A positional parameter cannot be found that accepts argument '"+argText(toks, 2)+"'.",
			"InvalidArgument: (:) [Set-Content], ParameterBindingException", "PositionalParameterNotFound,Microsoft.PowerShell.Commands.SetContentCommand")
		return nil
	}
	p.notRecognized(name)
	return nil
}

func argText(toks []token, i int) string {
	if i < len(toks) {
		return toks[i].text
	}
	return ""
}

// runNative runs a program: its stdout lines become pipeline strings as they are written, stderr
// goes straight out.
func (p *pipeline) runNative(native nativeProgram, args []string, emit emitFn) error {
	w := &lineWriter{emit: emit}
	if code := native(p.s, args, w); code != 0 {
		p.failed = true
	}
	return w.flush()
}

// memberExpression evaluates (pipeline).Member, @(pipeline).Count and @(pipeline).
func (p *pipeline) memberExpression(toks []token, emit emitFn) error {
	end := matchClose(toks, 0)
	rest := toks[end+1:]
	if len(rest) > 1 || (len(rest) == 1 && (rest[0].kind != tokWord || !strings.HasPrefix(rest[0].text, ".") || !rest[0].glued)) {
		p.reportBindError(toks, errors.New("winsim only simulates (command).Member and @(command).Count"))
		return nil
	}
	inner, err := splitTop(toks[1:end], "|")
	if err != nil || len(inner) == 0 || len(inner[0]) == 0 {
		p.reportBindError(toks, errors.New("winsim: empty sub-expression"))
		return nil
	}
	var values []any
	sub := &pipeline{s: p.s}
	collect := func(v any) error { values = append(values, v); return nil }
	if !sub.runInner(inner, collect) {
		p.failed = true
	}
	if len(rest) == 0 {
		for _, v := range values {
			if err := emit(v); err != nil {
				return err
			}
		}
		return nil
	}
	member := strings.ToLower(strings.TrimPrefix(rest[0].text, "."))
	if toks[0].text == "@(" && (member == "count" || member == "length") {
		return emit(len(values))
	}
	return emitMember(values, member, emit)
}

// runInner runs a nested pipeline, feeding a collector.
func (p *pipeline) runInner(pipe [][]token, collect emitFn) bool {
	sink := collect
	for i := len(pipe) - 1; i >= 1; i-- {
		next, err := p.filter(pipe[i], sink)
		if err != nil {
			p.reportBindError(pipe[i], err)
			return false
		}
		sink = next
	}
	if err := p.source(pipe[0], sink); err != nil && !errors.Is(err, errStopPipeline) {
		p.failed = true
	}
	return !p.failed
}

// emitMember applies member access with PowerShell's member enumeration over several objects.
func emitMember(values []any, member string, emit emitFn) error {
	if len(values) == 1 {
		if v, ok := propertyOf(values[0], member); ok {
			return emit(v)
		}
		if member == "count" || member == "length" {
			return emit(1)
		}
		return nil
	}
	if member == "count" || member == "length" {
		return emit(len(values))
	}
	for _, x := range values {
		if v, ok := propertyOf(x, member); ok {
			if err := emit(v); err != nil {
				return err
			}
		}
	}
	return nil
}

// psList is a collection: a member of it is that member of each item (PowerShell's member enumeration), one
// value when one item has it; as text its items are joined with spaces, as PowerShell converts an array.
type psList []any

func (l psList) property(name string) (any, bool) {
	if name == "count" || name == "length" {
		return len(l), true
	}
	var out psList
	for _, x := range l {
		if v, ok := propertyOf(x, name); ok {
			out = append(out, v)
		}
	}
	if len(out) == 1 {
		return out[0], true
	}
	return out, true
}

func (l psList) String() string {
	parts := make([]string, len(l))
	for i, x := range l {
		parts[i] = toText(x)
	}
	return strings.Join(parts, " ")
}

type propertyHolder interface {
	property(lowerName string) (any, bool)
}

func propertyOf(v any, name string) (any, bool) {
	switch x := v.(type) {
	case propertyHolder:
		return x.property(name)
	case string:
		if name == "length" {
			return len([]rune(x)), true
		}
	}
	return nil, false
}

// staticCall handles [Environment]::GetEnvironmentVariable/SetEnvironmentVariable.
func (p *pipeline) staticCall(toks []token, emit emitFn) error {
	name := strings.ToLower(toks[0].text)
	name = strings.Replace(name, "[system.environment]", "[environment]", 1)
	if len(toks) < 3 || toks[1].text != "(" || !toks[1].glued || matchClose(toks, 1) != len(toks)-1 {
		p.reportBindError(toks, errors.New("winsim only simulates [Environment]::Method(arguments)"))
		return nil
	}
	args, err := methodArgs(toks[2 : len(toks)-1])
	if err != nil {
		p.reportBindError(toks, err)
		return nil
	}
	switch name {
	case "[environment]::getenvironmentvariable":
		return p.getEnv(args, emit)
	case "[environment]::setenvironmentvariable":
		p.setEnv(args)
		return nil
	}
	p.reportBindError(toks, fmt.Errorf("winsim does not simulate %s", toks[0].text))
	return nil
}

// methodArgs reads comma-separated literal arguments; $null is nil.
func methodArgs(toks []token) ([]*string, error) {
	var out []*string
	expectValue := true
	for _, t := range toks {
		switch {
		case t.kind == tokOp && t.text == "," && !expectValue:
			expectValue = true
		case expectValue && t.kind == tokString:
			v := t.text
			out = append(out, &v)
			expectValue = false
		case expectValue && t.kind == tokWord && strings.EqualFold(t.text, "$null"):
			out = append(out, nil)
			expectValue = false
		default:
			return nil, fmt.Errorf("winsim: method arguments must be single-quoted literals or $null, got %q", t.text)
		}
	}
	return out, nil
}

func (p *pipeline) getEnv(args []*string, emit emitFn) error {
	if len(args) != 2 || args[0] == nil || args[1] == nil {
		p.cmdError("Exception calling \"GetEnvironmentVariable\"", nil, "Cannot find an overload for \"GetEnvironmentVariable\" and the argument count: \""+strconv.Itoa(len(args))+"\".",
			"NotSpecified: (:) [], MethodException", "MethodCountCouldNotFindBest")
		return nil
	}
	if !strings.EqualFold(*args[1], "Machine") {
		return nil // user and process scopes are empty in the simulator
	}
	p.s.h.mu.Lock()
	v, ok := p.s.h.env[strings.ToLower(*args[0])]
	p.s.h.mu.Unlock()
	if ok {
		return emit(v.value)
	}
	return nil
}

// setEnv sets or, for $null or ”, removes a machine variable, as .NET does.
func (p *pipeline) setEnv(args []*string) {
	if len(args) != 3 || args[0] == nil || args[2] == nil || *args[0] == "" {
		p.cmdError("Exception calling \"SetEnvironmentVariable\"", nil, "winsim: SetEnvironmentVariable needs a name, a value or $null, and 'Machine'.",
			"NotSpecified: (:) [], MethodInvocationException", "ArgumentException")
		return
	}
	if !strings.EqualFold(*args[2], "Machine") {
		return
	}
	h := p.s.h
	h.mu.Lock()
	defer h.mu.Unlock()
	key := strings.ToLower(*args[0])
	if args[1] == nil || *args[1] == "" {
		delete(h.env, key)
		return
	}
	h.env[key] = envVar{name: *args[0], value: *args[1]}
}

// formatter is Out-Default: strings and numbers one per line, objects as a table with one header.
type formatter struct {
	w         io.Writer
	header    string
	tableOpen bool
	err       error
}

type tabular interface {
	tableHeader() []string
	tableRow() string
}

func (f *formatter) line(s string) {
	if f.err == nil {
		_, f.err = io.WriteString(f.w, s+"\r\n")
	}
}

func (f *formatter) write(v any) error {
	switch x := v.(type) {
	case nil:
	case tabular:
		h := strings.Join(x.tableHeader(), "\n")
		if !f.tableOpen || h != f.header {
			f.line("")
			for _, l := range x.tableHeader() {
				f.line(l)
			}
			f.header, f.tableOpen = h, true
		}
		f.line(strings.TrimRight(x.tableRow(), " "))
	default:
		f.closeTable()
		f.line(toText(x))
	}
	return f.err
}

func (f *formatter) closeTable() {
	if f.tableOpen {
		f.line("")
		f.line("")
		f.tableOpen = false
	}
}

func (f *formatter) finish() { f.closeTable() }

// toText converts a value to a string as PowerShell does for output and string concatenation.
func toText(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case bool:
		if x {
			return "True"
		}
		return "False"
	case int:
		return strconv.Itoa(x)
	case int64:
		return strconv.FormatInt(x, 10)
	case time.Time:
		return x.Format("1/2/2006 3:04:05 PM")
	case fmt.Stringer:
		return x.String()
	}
	return fmt.Sprint(v)
}

// roundTrip is .NET's DateTime.ToString('o') for a local time.
func roundTrip(t time.Time) string {
	return t.Format("2006-01-02T15:04:05.0000000-07:00")
}
