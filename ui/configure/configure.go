// Package configure is the console's C dialog: which Windows host to configure, when there is more than the
// selected node's (the demo's bare host, or another host the console was told of). The configure action then
// inspects the host and asks with the plan before it changes anything.
package configure

import (
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/wmcon/wmcon/actions/request"
	"github.com/wmcon/wmcon/model"
	"github.com/wmcon/wmcon/ui/binding"
	"github.com/wmcon/wmcon/ui/layout"
	"github.com/wmcon/wmcon/ui/view"
)

// Choice is one host C can configure: the selected node's, or an unconfigured host that is not a node yet.
type Choice struct {
	Label string
	Req   request.Request // what configuring it runs
}

// Choices are the hosts C offers: the selected Windows node's host, then each unconfigured host the console
// was told of (Options.Hosts) that has not become a node yet.
func Choices(snap *model.Snapshot, node model.NodeInfo, hosts []string) []Choice {
	var out []Choice
	if node.Windows {
		out = append(out, Choice{Label: "the host of node " + node.Name + " (" + node.InternalIP + ")",
			Req: request.Configure{Node: node.Name, Confirm: true}})
	}
	for _, addr := range hosts {
		if snap != nil {
			if _, isNode := snap.NodeByAddress(addr); isNode {
				continue
			}
		}
		out = append(out, Choice{Label: "the unconfigured host at " + addr + " (not a node yet: it joins as a BYOH node)",
			Req: request.Configure{Address: addr, Confirm: true}})
	}
	return out
}

// HostChooser asks which host to configure when there is more than one; it answers with a view.FormResult.
// The action then inspects the host and asks again with the plan before it changes anything.
type HostChooser struct {
	ctx           *view.ProgramContext
	width, height int
	choices       []Choice
	cursor        int
}

// NewHostChooser asks which of choices to configure.
func NewHostChooser(ctx *view.ProgramContext, choices []Choice) *HostChooser {
	return &HostChooser{ctx: ctx, choices: choices}
}

func (c *HostChooser) Init() tea.Cmd    { return nil }
func (c *HostChooser) SetSize(w, h int) { c.width, c.height = w, h }

var hostChooserKeys = []key.Binding{
	binding.New("↑/↓", "choose", "up", "down"),
	binding.New("enter", "inspect it and show the plan", "enter"),
	binding.New("esc", "cancel", "esc"),
}

func (c *HostChooser) ShortHelp() []key.Binding  { return hostChooserKeys }
func (c *HostChooser) FullHelp() [][]key.Binding { return [][]key.Binding{hostChooserKeys} }

// Update answers on enter or esc (a view.FormResult, which the root runs) and leaves the stack; other keys
// are taken and ignored.
func (c *HostChooser) Update(msg tea.Msg) (view.Component, tea.Cmd) {
	k, ok := msg.(tea.KeyPressMsg)
	if !ok {
		return c, nil
	}
	switch k.String() {
	case "up", "k", "shift+tab":
		c.cursor = max(0, c.cursor-1)
	case "down", "j", "tab":
		c.cursor = min(len(c.choices)-1, c.cursor+1)
	case "enter":
		req := c.choices[c.cursor].Req
		return nil, func() tea.Msg { return view.FormResult{Confirmed: true, Request: req} }
	case "esc", "q", "ctrl+c":
		return nil, func() tea.Msg { return view.FormResult{} }
	}
	return c, nil
}

func (c *HostChooser) View() string { return layout.PlaceInBox(c.Box(), c.width, c.height) }

// Box is the dialog alone, drawn over the list (view.Dialog).
func (c *HostChooser) Box() string {
	st := &c.ctx.Styles
	lines := make([]string, len(c.choices))
	for i, ch := range c.choices {
		mark := "  "
		if i == c.cursor {
			mark = c.ctx.Marks.Cursor + " "
			lines[i] = st.Selected.Render(mark + ch.Label)
			continue
		}
		lines[i] = mark + ch.Label
	}
	return st.PanelBorder.Padding(1, 2).Width(min(c.width, 96)).Render(
		st.DetailTitle.Render("Configure which Windows host?") + "\n\n" + strings.Join(lines, "\n") + "\n\n" +
			st.Muted.Render("wmcon inspects the host, then shows the plan and asks before it changes anything") + "\n\n" +
			st.Muted.Render("↑/↓ choose · enter inspect · esc cancel"))
}
