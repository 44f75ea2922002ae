package windows

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// pathArg resolves -LiteralPath, or -Path when it holds no wildcard (the simulator does not expand
// them). It reports the error itself and returns ok=false.
func (p *pipeline) pathArg(cmd string, a *boundArgs, params ...string) (string, bool) {
	if len(params) == 0 {
		params = []string{"literalpath", "path"}
	}
	for _, name := range params {
		raw, ok := a.str(name)
		if !ok {
			continue
		}
		if raw == "" {
			p.emptyPath(cmd, a, name)
			return "", false
		}
		if name == "path" && strings.ContainsAny(raw, "*?[") {
			p.cmdError(cmd, a, "winsim does not expand wildcards; use -LiteralPath.", "NotImplemented: (:) [], NotSupportedException", "SimulatorUnsupported")
			return "", false
		}
		clean, err := cleanWinPath(raw, p.s.h.home)
		if err != nil {
			p.cmdError(cmd, a, "The given path's format is not supported.", "NotSpecified: (:) ["+cmd+"], NotSupportedException",
				"System.NotSupportedException,Microsoft.PowerShell.Commands."+strings.ReplaceAll(cmd, "-", "")+"Command")
			return "", false
		}
		return clean, true
	}
	p.cmdError(cmd, a, "winsim: this command needs -LiteralPath.", "InvalidArgument: (:) ["+cmd+"], ParameterBindingException", "MissingMandatoryParameter")
	return "", false
}

// emptyPath is PowerShell's binding error for an empty path: nothing runs.
func (p *pipeline) emptyPath(cmd string, a *boundArgs, param string) {
	names := map[string]string{"literalpath": "LiteralPath", "path": "Path", "destination": "Destination"}
	p.cmdError(cmd, a, fmt.Sprintf("Cannot bind argument to parameter '%s' because it is an empty string.", names[param]),
		"InvalidData: (:) ["+cmd+"], ParameterBindingValidationException",
		"ParameterArgumentValidationErrorEmptyStringNotAllowed,Microsoft.PowerShell.Commands."+strings.ReplaceAll(cmd, "-", "")+"Command")
}

func (p *pipeline) notFound(cmd string, a *boundArgs, path string) {
	p.cmdError(cmd, a, fmt.Sprintf("Cannot find path '%s' because it does not exist.", path),
		fmt.Sprintf("ObjectNotFound: (%s:String) [%s], ItemNotFoundException", path, cmd),
		"PathNotFound,Microsoft.PowerShell.Commands."+strings.ReplaceAll(cmd, "-", "")+"Command")
}

func runTestPath(p *pipeline, a *boundArgs, emit emitFn) error {
	v, ok := a.named["literalpath"]
	if !ok {
		v, ok = a.named["path"]
	}
	if !ok || len(v.list) == 0 {
		p.cmdError("Test-Path", a, "winsim: Test-Path needs -LiteralPath.", "InvalidArgument: (:) [Test-Path], ParameterBindingException", "MissingMandatoryParameter")
		return nil
	}
	// Like PowerShell, a list of paths gives one True/False per path, in order.
	for _, raw := range v.list {
		if raw == "" {
			p.emptyPath("Test-Path", a, "literalpath")
			return nil
		}
	}
	for _, raw := range v.list {
		clean, err := cleanWinPath(raw, p.s.h.home)
		if err != nil {
			if err := emit(false); err != nil { // Test-Path answers False for a path NTFS cannot hold
				return err
			}
			continue
		}
		_, err = p.s.h.fs.stat(clean)
		if err := emit(err == nil); err != nil {
			return err
		}
	}
	return nil
}

type hashInfo struct{ algorithm, hash, path string }

func (x hashInfo) property(n string) (any, bool) {
	switch n {
	case "algorithm":
		return x.algorithm, true
	case "hash":
		return x.hash, true
	case "path":
		return x.path, true
	}
	return nil, false
}

func (x hashInfo) tableHeader() []string {
	return []string{"Algorithm       Hash                                                                   Path",
		"---------       ----                                                                   ----"}
}

func (x hashInfo) tableRow() string {
	return fmt.Sprintf("%-15s %-70s %s", x.algorithm, x.hash, x.path)
}

func runGetFileHash(p *pipeline, a *boundArgs, emit emitFn) error {
	if alg, ok := a.str("algorithm"); ok && !strings.EqualFold(alg, "SHA256") {
		p.cmdError("Get-FileHash", a, "winsim only computes SHA256 hashes.", "NotImplemented: (:) [], NotSupportedException", "SimulatorUnsupported")
		return nil
	}
	// -LiteralPath takes a list: one object per existing file, an error for each missing one.
	for _, one := range a.each("literalpath", "path") {
		path, ok := p.pathArg("Get-FileHash", one)
		if !ok {
			continue
		}
		n, err := p.s.h.fs.stat(path)
		if err != nil {
			p.notFound("Get-FileHash", one, path)
			continue
		}
		if n.dir {
			continue // Get-FileHash skips directories silently
		}
		if err := emit(hashInfo{algorithm: "SHA256", hash: sha256Upper(n.data), path: n.path}); err != nil {
			return err
		}
	}
	return nil
}

// each splits a list-valued path parameter into one bound argument set per value, so single-path code
// can serve a list as PowerShell's cmdlets do.
func (a *boundArgs) each(params ...string) []*boundArgs {
	for _, name := range params {
		v, ok := a.named[name]
		if !ok || len(v.list) < 2 {
			continue
		}
		out := make([]*boundArgs, len(v.list))
		for i, item := range v.list {
			named := map[string]argValue{}
			for k, val := range a.named {
				named[k] = val
			}
			named[name] = argValue{list: []string{item}}
			out[i] = &boundArgs{named: named, switches: a.switches}
		}
		return out
	}
	return []*boundArgs{a}
}

// fileItem is a FileInfo or DirectoryInfo.
type fileItem struct{ n fsNode }

func (f fileItem) property(name string) (any, bool) {
	switch name {
	case "name":
		return baseOf(f.n.path), true
	case "fullname":
		return f.n.path, true
	case "length":
		if f.n.dir {
			return nil, false // DirectoryInfo has no Length
		}
		return len(f.n.data), true
	case "lastwritetime":
		return f.n.modTime, true
	case "psiscontainer":
		return f.n.dir, true
	}
	return nil, false
}

func (f fileItem) tableHeader() []string {
	return []string{"    Directory: " + parentOf(f.n.path), "", "", "Mode                 LastWriteTime         Length Name",
		"----                 -------------         ------ ----"}
}

func (f fileItem) tableRow() string {
	mode, length := "-a----", strconv.Itoa(len(f.n.data))
	if f.n.dir {
		mode, length = "d-----", ""
	}
	return fmt.Sprintf("%-6s %25s %14s %s", mode, f.n.modTime.Format("1/2/2006   3:04 PM"), length, baseOf(f.n.path))
}

func runNewItem(p *pipeline, a *boundArgs, emit emitFn) error {
	path, ok := p.pathArg("New-Item", a, "path")
	if !ok {
		return nil
	}
	if name, ok := a.str("name"); ok {
		if path, ok = p.joinChild("New-Item", a, path, name); !ok {
			return nil
		}
	}
	fs := p.s.h.fs
	existing, statErr := fs.stat(path)
	if statErr == nil && !(a.switches["force"] && existing.dir) {
		p.cmdError("New-Item", a, fmt.Sprintf("An item with the specified name %s already exists.", path),
			fmt.Sprintf("ResourceExists: (%s:String) [New-Item], IOException", path), "DirectoryExist,Microsoft.PowerShell.Commands.NewItemCommand")
		return nil
	}
	kind, _ := a.str("itemtype")
	var err error
	switch strings.ToLower(kind) {
	case "directory":
		err = fs.mkdirAll(path)
	case "file", "":
		value, _ := a.str("value")
		err = fs.writeFile(path, []byte(value), a.switches["force"])
	default:
		p.cmdError("New-Item", a, "winsim only creates items of type Directory or File.", "NotImplemented: (:) [], NotSupportedException", "SimulatorUnsupported")
		return nil
	}
	if err != nil {
		p.ioError("New-Item", a, path, err)
		return nil
	}
	n, _ := fs.stat(path)
	return emit(fileItem{n})
}

func (p *pipeline) joinChild(cmd string, a *boundArgs, dir, name string) (string, bool) {
	joined, err := cleanWinPath(dir+`\`+name, p.s.h.home)
	if err != nil {
		p.cmdError(cmd, a, "The given path's format is not supported.", "NotSpecified: (:) ["+cmd+"], NotSupportedException", "System.NotSupportedException")
		return "", false
	}
	return joined, true
}

func (p *pipeline) ioError(cmd string, a *boundArgs, path string, err error) {
	switch {
	case errors.Is(err, errNotFound):
		p.cmdError(cmd, a, fmt.Sprintf("Could not find a part of the path '%s'.", path),
			fmt.Sprintf("WriteError: (%s:String) [%s], DirectoryNotFoundException", path, cmd), "DirectoryNotFound")
	case errors.Is(err, errExists):
		p.cmdError(cmd, a, "Cannot create a file when that file already exists.",
			fmt.Sprintf("WriteError: (%s:FileInfo) [%s], IOException", path, cmd), "MoveFileInfoItemIOError")
	case errors.Is(err, errInUse) && cmd == "Move-Item":
		p.cmdError(cmd, a, fmt.Sprintf("Access to the path '%s' is denied.", path),
			fmt.Sprintf("WriteError: (%s:DirectoryInfo) [%s], IOException", path, cmd), "MoveDirectoryItemIOError,Microsoft.PowerShell.Commands.MoveItemCommand")
	case errors.Is(err, errInUse):
		p.cmdError(cmd, a, fmt.Sprintf("Cannot remove item %s: The process cannot access the file '%s' because it is being used by another process.", path, path),
			fmt.Sprintf("WriteError: (%s:FileInfo) [%s], IOException", path, cmd), "RemoveFileSystemItemIOError,Microsoft.PowerShell.Commands.RemoveItemCommand")
	case errors.Is(err, errNotEmpty):
		p.cmdError(cmd, a, fmt.Sprintf("The item at %s has children and the Recurse parameter was not specified. Non-interactive sessions cannot be prompted.", path),
			fmt.Sprintf("WriteError: (%s:String) [%s], IOException", path, cmd), "RemoveItemIOError")
	default:
		p.cmdError(cmd, a, fmt.Sprintf("%s: %v", path, err), fmt.Sprintf("WriteError: (%s:String) [%s], IOException", path, cmd), "IOError")
	}
}

// runMoveItem moves onto a file path (replacing it with -Force) or into an existing directory.
func runMoveItem(p *pipeline, a *boundArgs, _ emitFn) error {
	from, ok := p.pathArg("Move-Item", a)
	if !ok {
		return nil
	}
	to, ok := p.pathArg("Move-Item", a, "destination")
	if !ok {
		return nil
	}
	fs := p.s.h.fs
	if _, err := fs.stat(from); err != nil {
		p.notFound("Move-Item", a, from)
		return nil
	}
	if d, err := fs.stat(to); err == nil && d.dir {
		if to, ok = p.joinChild("Move-Item", a, to, baseOf(from)); !ok {
			return nil
		}
	}
	if err := fs.rename(from, to, a.switches["force"]); err != nil {
		if d, serr := fs.stat(to); errors.Is(err, errInUse) && (serr != nil || d.dir) {
			to = from // Windows names the directory it could not move, or the running file it must replace
		}
		p.ioError("Move-Item", a, to, err)
	}
	return nil
}

func runRemoveItem(p *pipeline, a *boundArgs, _ emitFn) error {
	path, ok := p.pathArg("Remove-Item", a)
	if !ok {
		return nil
	}
	err := p.s.h.fs.remove(path, a.switches["recurse"])
	switch {
	case errors.Is(err, errNotFound):
		p.notFound("Remove-Item", a, path)
	case err != nil:
		p.ioError("Remove-Item", a, path, err)
	}
	return nil
}

func runGetItem(p *pipeline, a *boundArgs, emit emitFn) error {
	path, ok := p.pathArg("Get-Item", a)
	if !ok {
		return nil
	}
	n, err := p.s.h.fs.stat(path)
	if err != nil {
		p.notFound("Get-Item", a, path)
		return nil
	}
	return emit(fileItem{n})
}

func runGetChildItem(p *pipeline, a *boundArgs, emit emitFn) error {
	paths := []string{}
	if v, ok := a.named["literalpath"]; ok && len(v.list) > 1 {
		for _, raw := range v.list {
			clean, err := cleanWinPath(raw, p.s.h.home)
			if err != nil {
				p.notFound("Get-ChildItem", a, raw)
				continue
			}
			paths = append(paths, clean)
		}
	} else {
		path, ok := p.pathArg("Get-ChildItem", a)
		if !ok {
			return nil
		}
		paths = append(paths, path)
	}
	filter, _ := a.str("filter")
	for _, path := range paths {
		if err := p.childItems(path, filter, a, emit); err != nil {
			return err
		}
	}
	return nil
}

// childItems emits a directory's entries (or the file itself) whose names match filter ("" = all), as
// Get-ChildItem's -Filter does with * and ?, case-insensitively.
func (p *pipeline) childItems(path, filter string, a *boundArgs, emit emitFn) error {
	fs := p.s.h.fs
	n, err := fs.stat(path)
	if err != nil {
		p.notFound("Get-ChildItem", a, path)
		return nil
	}
	children := []fsNode{n}
	if n.dir {
		children, _ = fs.list(path)
	}
	for _, c := range children {
		if filter != "" && !wildcardMatch(strings.ToLower(filter), strings.ToLower(baseOf(c.path))) {
			continue
		}
		var v any = fileItem{c}
		if a.switches["name"] {
			v = baseOf(c.path)
		}
		if err := emit(v); err != nil {
			return err
		}
	}
	return nil
}

// wildcardMatch matches name against a pattern of literal characters, * (any run) and ? (one character).
func wildcardMatch(pattern, name string) bool {
	if pattern == "" {
		return name == ""
	}
	switch pattern[0] {
	case '*':
		for i := 0; i <= len(name); i++ {
			if wildcardMatch(pattern[1:], name[i:]) {
				return true
			}
		}
		return false
	case '?':
		return name != "" && wildcardMatch(pattern[1:], name[1:])
	}
	return name != "" && name[0] == pattern[0] && wildcardMatch(pattern[1:], name[1:])
}

func runGetContent(p *pipeline, a *boundArgs, emit emitFn) error {
	path, ok := p.pathArg("Get-Content", a)
	if !ok {
		return nil
	}
	tail := -1
	if s, ok := a.str("tail"); ok {
		n, err := strconv.Atoi(s)
		if err != nil {
			p.cmdError("Get-Content", a, fmt.Sprintf("Cannot bind parameter 'Tail'. Cannot convert value \"%s\" to type \"System.Int32\".", s),
				"InvalidArgument: (:) [Get-Content], ParameterBindingException", "CannotConvertArgumentNoMessage")
			return nil
		}
		tail = n
	}
	n, err := p.s.h.fs.stat(path)
	if err != nil {
		p.notFound("Get-Content", a, path)
		return nil
	}
	if n.dir {
		p.cmdError("Get-Content", a, fmt.Sprintf("Unable to get content because it is a directory: '%s'. Please use 'Get-ChildItem' instead.", path),
			fmt.Sprintf("InvalidOperation: (%s:String) [Get-Content], UnauthorizedAccessException", path), "GetContentReaderUnauthorizedAccessError")
		return nil
	}
	if a.switches["wait"] {
		return p.follow(path, tail, emit)
	}
	lines, _ := splitLines(n.data)
	if tail >= 0 && tail < len(lines) {
		lines = lines[len(lines)-tail:]
	}
	for _, l := range lines {
		if err := emit(l); err != nil {
			return err
		}
	}
	return nil
}

// follow is Get-Content -Wait: the file's lines (the last tail ones if tail >= 0), then each new line
// as it is written, until the session closes. It waits on the file system's change signal, not a
// timer. A rotated or truncated file is read again from its beginning; an unterminated last line is
// held back until its newline arrives.
func (p *pipeline) follow(path string, tail int, emit emitFn) error {
	fs := p.s.h.fs
	offset, gen, first := 0, -1, true
	for {
		changed := fs.changes()
		n, err := fs.stat(path)
		if err == nil && !n.dir {
			if n.gen != gen || len(n.data) < offset {
				offset, gen = 0, n.gen
			}
			consumed := strings.LastIndexByte(string(n.data[offset:]), '\n') + 1
			lines, _ := splitLines(n.data[offset : offset+consumed])
			if first && tail >= 0 && tail < len(lines) {
				lines = lines[len(lines)-tail:]
			}
			first = false
			offset += consumed
			for _, l := range lines {
				if err := emit(l); err != nil {
					return err
				}
			}
		}
		select {
		case <-changed:
		case <-p.s.ctx.Done():
			return nil
		}
	}
}
