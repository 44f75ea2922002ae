// Package operator is the console's Operator view (O): WMCO's OLM objects and the SSH key, with what
// wmcon operator install / uninstall and wmcon key create / generate do.
package operator

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/viewport"
	tea "charm.land/bubbletea/v2"

	"github.com/wmcon/wmcon/actions/event"
	"github.com/wmcon/wmcon/actions/request"
	"github.com/wmcon/wmcon/ui/binding"
	"github.com/wmcon/wmcon/ui/dialog"
	"github.com/wmcon/wmcon/ui/helpview"
	"github.com/wmcon/wmcon/ui/layout"
	"github.com/wmcon/wmcon/ui/page"
	"github.com/wmcon/wmcon/ui/view"
)

// Launcher opens the view with O when the console has a runner (the view reads through it).
var Launcher = view.Launcher{
	Key:       binding.New("O", "operator & key", "O"),
	Available: func(ctx *view.ProgramContext) bool { return ctx.Runner != nil },
	Open:      func(ctx *view.ProgramContext, _ view.Selection) view.Component { return New(ctx) },
	Quiet:     true,
}

// View shows WMCO's OLM objects and the SSH key (wmcon operator status, wmcon key show), read through
// the Runner, and offers what wmcon operator install / uninstall and wmcon key create / generate do: each runs
// in the action panel like any action (audited, its questions as dialogs), then the view reads again.
type View struct {
	ctx      *view.ProgramContext
	viewport viewport.Model
	seq      int
	loading  bool
	state    *operatorState
	keys     operatorKeys
}

type operatorKeys struct{ Install, Uninstall, KeyFile, KeyGenerate, Reload key.Binding }

// operatorState is what the two reads said: each a summary and its lines, or why it could not be read.
type operatorState struct {
	operator, key statusRead
}

type statusRead struct {
	summary string
	lines   []string
	err     string
}

type operatorLoadedMsg struct {
	seq   int
	state operatorState
}

// New is the view; its Init reads the operator's objects and the key.
func New(ctx *view.ProgramContext) *View {
	v := &View{ctx: ctx, viewport: viewport.New(), keys: operatorKeys{
		Install:     binding.New("i", "install WMCO", "i"),
		Uninstall:   binding.New("x", "uninstall WMCO", "x"),
		KeyFile:     binding.New("f", "key from a file", "f"),
		KeyGenerate: binding.New("n", "generate a key", "n"),
		Reload:      binding.New("r", "read again", "r"),
	}}
	for _, b := range []*key.Binding{&v.keys.Install, &v.keys.Uninstall, &v.keys.KeyFile, &v.keys.KeyGenerate} {
		b.SetEnabled(!ctx.ReadOnly)
	}
	return v
}

func (v *View) Init() tea.Cmd { return v.load() }

// Loaded says the first reads have answered.
func (v *View) Loaded() bool { return v.state != nil }

// Refresh reads again once an action ended (an install, an uninstall or a new key changes what is shown).
func (v *View) Refresh() tea.Cmd { return v.load() }

func (v *View) load() tea.Cmd {
	v.seq++
	v.loading = true
	v.render()
	seq, runner := v.seq, v.ctx.Runner
	return func() tea.Msg {
		var st operatorState
		var wg sync.WaitGroup
		wg.Add(2)
		go func() { defer wg.Done(); st.operator = readThrough(runner, request.OperatorStatus{}) }()
		go func() { defer wg.Done(); st.key = readThrough(runner, request.KeyShow{}) }()
		wg.Wait()
		return operatorLoadedMsg{seq: seq, state: st}
	}
}

// readThrough runs a request that changes nothing and keeps its log lines and how it ended.
func readThrough(runner view.Runner, req request.Request) statusRead {
	events, err := view.RunRead(context.Background(), runner, req)
	var res statusRead
	failure := ""
	for _, e := range events {
		switch e.Kind {
		case event.StepLog:
			res.lines = append(res.lines, e.Message)
		case event.StepFailed:
			failure = view.FailureText(e)
		case event.Finished:
			res.summary = e.Message
			if e.Outcome != event.Succeeded && failure == "" {
				failure = view.FailureText(e)
			}
		}
	}
	switch {
	case failure != "":
		res.err = failure
	case err != nil:
		res.err = err.Error()
	}
	return res
}

func (v *View) SetSize(w, h int) {
	v.viewport.SetWidth(w)
	v.viewport.SetHeight(max(0, h))
	v.render()
}

func (v *View) actionKeys() []key.Binding {
	return binding.Enabled(v.keys.Install, v.keys.Uninstall, v.keys.KeyFile, v.keys.KeyGenerate)
}

func (v *View) ShortHelp() []key.Binding {
	keys := append(v.actionKeys(), v.keys.Reload)
	if !v.viewport.AtBottom() || v.viewport.YOffset() > 0 {
		keys = append(keys, v.ctx.Keys.Down, v.ctx.Keys.PageDown)
	}
	return append(keys, v.ctx.Keys.Back)
}

func (v *View) FullHelp() [][]key.Binding {
	return [][]key.Binding{v.actionKeys(), {v.keys.Reload, v.ctx.Keys.Up, v.ctx.Keys.Down, v.ctx.Keys.PageUp, v.ctx.Keys.PageDown, v.ctx.Keys.Back, v.ctx.Keys.Help}}
}

func (v *View) Update(msg tea.Msg) (view.Component, tea.Cmd) {
	switch msg := msg.(type) {
	case operatorLoadedMsg:
		if msg.seq == v.seq {
			v.loading = false
			v.state = &msg.state
			v.render()
		}
	case tea.KeyPressMsg:
		return v.handleKey(msg)
	}
	return v, nil
}

func (v *View) handleKey(msg tea.KeyPressMsg) (view.Component, tea.Cmd) {
	k := v.ctx.Keys
	switch {
	case key.Matches(msg, k.Back):
		return nil, nil
	case key.Matches(msg, k.Help):
		return v, view.Open(helpview.New(v.ctx, v))
	case key.Matches(msg, v.keys.Reload):
		return v, v.load()
	case key.Matches(msg, v.keys.Install):
		return v, view.Open(NewInstallForm(v.ctx))
	case key.Matches(msg, v.keys.Uninstall):
		// The action asks its own question (what stays, what goes) as a dialog before it deletes anything.
		return v, func() tea.Msg { return view.FormResult{Confirmed: true, Request: request.OperatorUninstall{}} }
	case key.Matches(msg, v.keys.KeyFile):
		return v, view.Open(newKeyFromFileForm(v.ctx))
	case key.Matches(msg, v.keys.KeyGenerate):
		return v, view.Open(newGenerateKeyForm(v.ctx))
	case key.Matches(msg, k.Down):
		v.viewport.ScrollDown(1)
	case key.Matches(msg, k.Up):
		v.viewport.ScrollUp(1)
	case key.Matches(msg, k.PageDown):
		v.viewport.PageDown()
	case key.Matches(msg, k.PageUp):
		v.viewport.PageUp()
	default:
		page.Scroll(&v.viewport, k, msg)
	}
	return v, nil
}

// View is the visible part; when more follows below (the SSH key section on a short terminal), its last
// line says how much and how to get there.
func (v *View) View() string {
	out := v.viewport.View()
	if v.viewport.AtBottom() || v.viewport.Height() < 2 {
		return out
	}
	below := v.viewport.TotalLineCount() - v.viewport.YOffset() - v.viewport.Height() + 1
	lines := strings.Split(out, "\n")
	lines[len(lines)-1] = layout.FitLine(v.ctx.Styles.Muted.Render(fmt.Sprintf("… %d more lines: ↓ or pgdn scrolls", below)), v.viewport.Width())
	return strings.Join(lines, "\n")
}

func (v *View) render() {
	offset := v.viewport.YOffset()
	content := operatorContent(v.ctx, v.state, v.loading)
	if w := v.viewport.Width(); w > 0 {
		content = strings.Join(layout.WrapIndented(strings.Split(content, "\n"), w), "\n")
	}
	v.viewport.SetContent(strings.TrimRight(content, "\n ")) // trailing blank lines are nothing to scroll to
	v.viewport.SetYOffset(offset)
}

// operatorContent is the page: the operator's objects, then the key and the user data.
func operatorContent(ctx *view.ProgramContext, st *operatorState, loading bool) string {
	s := &ctx.Styles
	var b strings.Builder
	b.WriteString(s.DetailTitle.Render("WMCO and the SSH key") + "\n\n")
	if st == nil {
		b.WriteString(s.Muted.Render("reading WMCO's OLM objects and the key secrets…") + "\n")
		return b.String()
	}
	section := func(title, command string, r statusRead) {
		b.WriteString(s.DetailTitle.Render(title) + s.Muted.Render("  ("+command+")") + "\n")
		if r.err != "" {
			b.WriteString("  " + s.Bad.Render("cannot read: "+r.err) + "\n\n")
			return
		}
		if r.summary != "" && (len(r.lines) == 0 || r.lines[0] != r.summary) {
			b.WriteString("  " + r.summary + "\n")
		}
		for _, l := range r.lines {
			b.WriteString("  " + l + "\n")
		}
		b.WriteString("\n")
	}
	section("Operator (OLM)", "wmcon operator status", st.operator)
	section("SSH key", "wmcon key show", st.key)
	switch {
	case ctx.ReadOnly:
		b.WriteString(s.Muted.Render("read-only: installing, uninstalling and changing the key are off") + "\n")
	case loading:
		b.WriteString(s.Muted.Render("reading again…") + "\n")
	default:
		b.WriteString(s.Muted.Render("i install · x uninstall (asks first; nodes stay) · f key from a file · n generate a key · r read again") + "\n")
	}
	return b.String()
}

// NewInstallForm asks what wmcon operator install asks; the install is followed until the operator
// runs, its Manual approval (if any) asked as a dialog.
func NewInstallForm(ctx *view.ProgramContext) *dialog.FieldForm {
	return dialog.NewFieldForm(ctx, "Install WMCO through OLM",
		"Creates the namespace, an OperatorGroup and a Subscription, then follows the InstallPlan and the CSV until the operator runs (as wmcon operator install --wait).",
		[]dialog.Field{{Label: "channel", Value: "stable"}, {Label: "approval", Value: "Automatic", Placeholder: "Automatic or Manual"},
			{Label: "catalog source", Value: "redhat-operators", Placeholder: "redhat-operators, community-operators or another"}},
		func(v []string) (request.Request, error) {
			channel, approval, source := strings.TrimSpace(v[0]), strings.TrimSpace(v[1]), strings.TrimSpace(v[2])
			switch {
			case channel == "":
				return nil, errors.New("give the channel (stable)")
			case approval != "Automatic" && approval != "Manual":
				return nil, fmt.Errorf("approval %q: use Automatic or Manual", approval)
			case source == "":
				return nil, errors.New("give the CatalogSource (redhat-operators; OKD: community-operators)")
			}
			return request.OperatorInstall{Channel: channel, Approval: approval, Source: source, Wait: true}, nil
		})
}

// newKeyFromFileForm asks for a private key file (wmcon key create --from-file); replacing a different key
// asks first, naming what happens to the nodes.
func newKeyFromFileForm(ctx *view.ProgramContext) *dialog.FieldForm {
	return dialog.NewFieldForm(ctx, "Install a private key",
		"The key is checked first (passphrase-protected, weak and public keys are refused); its content is never shown. Without WMCO, wmcon also writes windows-user-data for it.",
		[]dialog.Field{{Label: "private key file", Value: ctx.KeyFile, Placeholder: "/path/to/id_ed25519"}},
		func(v []string) (request.Request, error) {
			path := strings.TrimSpace(v[0])
			if path == "" {
				return nil, errors.New("give the path of a private key file")
			}
			return request.KeyInstall{File: path}, nil
		})
}

// newGenerateKeyForm asks where a new key pair goes (wmcon key generate).
func newGenerateKeyForm(ctx *view.ProgramContext) *dialog.FieldForm {
	return dialog.NewFieldForm(ctx, "Generate a key pair",
		"The private key is written to the file (0600) and its public key beside it (.pub); an existing file is never overwritten. Then it is installed as cloud-private-key.",
		[]dialog.Field{{Label: "private key file", Value: ctx.KeyOut, Placeholder: "/path/to/wmcon_windows_ed25519"}, {Label: "type", Value: "ed25519", Placeholder: "ed25519 or rsa"}},
		func(v []string) (request.Request, error) {
			path, kind := strings.TrimSpace(v[0]), strings.TrimSpace(v[1])
			switch {
			case path == "":
				return nil, errors.New("give the file the private key goes to")
			case kind != "ed25519" && kind != "rsa":
				return nil, fmt.Errorf("type %q: use ed25519 or rsa", kind)
			}
			return request.KeyInstall{Generate: true, Out: path, Type: kind}, nil
		})
}
