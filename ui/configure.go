package ui

import (
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/wmcon/wmcon/actions/request"
	"github.com/wmcon/wmcon/model"
	"github.com/wmcon/wmcon/ui/layout"
	"github.com/wmcon/wmcon/ui/view"
)

// hostChoice is one host C can configure: the selected node's, or an unconfigured host that is not a node
// yet.
type hostChoice struct {
	label string
	req   request.Request
}

// configureChoices are the hosts C offers: the selected Windows node's host, then each unconfigured host
// the console was told of (Options.Hosts) that has not become a node yet.
func configureChoices(snap *model.Snapshot, node model.NodeInfo, hosts []string) []hostChoice {
	var out []hostChoice
	if node.Windows {
		out = append(out, hostChoice{label: "the host of node " + node.Name + " (" + node.InternalIP + ")",
			req: request.Configure{Node: node.Name, Confirm: true}})
	}
	for _, addr := range hosts {
		if snap != nil {
			if _, isNode := snap.NodeByAddress(addr); isNode {
				continue
			}
		}
		out = append(out, hostChoice{label: "the unconfigured host at " + addr + " (not a node yet: it joins as a BYOH node)",
			req: request.Configure{Address: addr, Confirm: true}})
	}
	return out
}

// hostChooser asks which host to configure when there is more than one; it answers with a view.FormResult.
// The action then inspects the host and asks again with the plan before it changes anything.
type hostChooser struct {
	ctx           *view.ProgramContext
	width, height int
	choices       []hostChoice
	cursor        int
}

func newHostChooser(ctx *view.ProgramContext, choices []hostChoice) *hostChooser {
	return &hostChooser{ctx: ctx, choices: choices}
}

func (c *hostChooser) Init() tea.Cmd    { return nil }
func (c *hostChooser) SetSize(w, h int) { c.width, c.height = w, h }

var hostChooserKeys = []key.Binding{
	key.NewBinding(key.WithKeys("up", "down"), key.WithHelp("↑/↓", "choose")),
	key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "inspect it and show the plan")),
	key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "cancel")),
}

func (c *hostChooser) ShortHelp() []key.Binding  { return hostChooserKeys }
func (c *hostChooser) FullHelp() [][]key.Binding { return [][]key.Binding{hostChooserKeys} }

// Update answers on enter or esc and leaves the stack; other keys are taken and ignored.
func (c *hostChooser) Update(msg tea.Msg) (view.Component, tea.Cmd) {
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
		req := c.choices[c.cursor].req
		return nil, func() tea.Msg { return view.FormResult{Confirmed: true, Request: req} }
	case "esc", "q", "ctrl+c":
		return nil, func() tea.Msg { return view.FormResult{} }
	}
	return c, nil
}

func (c *hostChooser) View() string { return layout.PlaceInBox(c.Box(), c.width, c.height) }

func (c *hostChooser) Box() string {
	st := &c.ctx.Styles
	lines := make([]string, len(c.choices))
	for i, ch := range c.choices {
		mark := "  "
		if i == c.cursor {
			mark = c.ctx.Marks.Cursor + " "
			lines[i] = st.Selected.Render(mark + ch.label)
			continue
		}
		lines[i] = mark + ch.label
	}
	return st.PanelBorder.Padding(1, 2).Width(min(c.width, 96)).Render(
		st.DetailTitle.Render("Configure which Windows host?") + "\n\n" + strings.Join(lines, "\n") + "\n\n" +
			st.Muted.Render("wmcon inspects the host, then shows the plan and asks before it changes anything") + "\n\n" +
			st.Muted.Render("↑/↓ choose · enter inspect · esc cancel"))
}
