// Package machinesets holds the console's forms for Windows machines: a new MachineSet, its replicas, and a
// BYOH host, each building the request the matching headless command makes. The MachineSets pane opens
// them, and the guided setup opens the new MachineSet and BYOH forms for its machines step.
package machinesets

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/wmcon/wmcon/actions/request"
	"github.com/wmcon/wmcon/model"
	"github.com/wmcon/wmcon/ui/dialog"
	"github.com/wmcon/wmcon/ui/view"
)

// NewScaleForm asks for a MachineSet's replicas (wmcon machineset scale).
func NewScaleForm(ctx *view.ProgramContext, ms *model.MachineSetInfo) *dialog.FieldForm {
	intro := fmt.Sprintf("%d desired, %d ready now. Fewer replicas delete Machines and their nodes.", ms.Desired, ms.Ready)
	name := ms.Name
	return dialog.NewFieldForm(ctx, "Scale MachineSet "+name, intro, []dialog.Field{{Label: "replicas", Value: strconv.Itoa(int(ms.Desired))}},
		func(v []string) (request.Request, error) {
			n, err := strconv.Atoi(strings.TrimSpace(v[0]))
			if err != nil || n < 0 {
				return nil, fmt.Errorf("replicas %q: give a whole number, 0 or more", v[0])
			}
			return request.MachineSetScale{Name: name, Replicas: int32(n)}, nil
		})
}

// NewMachineSetForm asks for what only the user knows of a new Windows MachineSet (wmcon machineset
// generate --apply); the rest comes from the cluster.
func NewMachineSetForm(ctx *view.ProgramContext) *dialog.FieldForm {
	fields := []dialog.Field{
		{Label: "image", Placeholder: "AMI ID, Azure publisher:offer:sku:version, GCP image, vSphere template, Nutanix image"},
		{Label: "platform", Placeholder: "the cluster's"},
		{Label: "name", Placeholder: "the platform's default (at most 9 characters on vSphere and Azure)"},
		{Label: "zone", Placeholder: "the first worker's"},
		{Label: "instance type", Placeholder: "the platform's default"},
		{Label: "replicas", Value: "1"},
	}
	intro := "Built from the cluster's own settings (a worker Machine's subnets, security groups, credentials);\n" +
		"you give what only you know. The MachineSet is shown before anything is applied."
	return dialog.NewFieldForm(ctx, "New Windows MachineSet", intro, fields, func(v []string) (request.Request, error) {
		n, err := strconv.Atoi(strings.TrimSpace(v[5]))
		if err != nil || n < 0 {
			return nil, fmt.Errorf("replicas %q: give a whole number, 0 or more", v[5])
		}
		replicas := int32(n) // as given: 0 makes a MachineSet without Machines
		return request.MachineSetGenerate{Image: strings.TrimSpace(v[0]), Platform: strings.TrimSpace(v[1]), Name: strings.TrimSpace(v[2]),
			Zone: strings.TrimSpace(v[3]), InstanceType: strings.TrimSpace(v[4]), Replicas: &replicas}, nil
	})
}

// NewBYOHForm asks for a BYOH host's address and user (wmcon byoh add).
func NewBYOHForm(ctx *view.ProgramContext) *dialog.FieldForm {
	fields := []dialog.Field{{Label: "address", Placeholder: "IPv4 address or DNS name"}, {Label: "user", Value: "Administrator"}}
	intro := "Adds the host to windows-instances; WMCO then configures it as a Windows node over SSH."
	return dialog.NewFieldForm(ctx, "New BYOH host", intro, fields, func(v []string) (request.Request, error) {
		return BYOHRequest(v[0], v[1])
	})
}

// BYOHRequest checks a BYOH host's address and user as the form takes them, with the checks byoh add uses.
func BYOHRequest(addr, user string) (request.BYOHAdd, error) {
	if err := model.CheckBYOHAddress(addr); err != nil {
		return request.BYOHAdd{}, err
	}
	if err := model.CheckBYOHUser(user); err != nil {
		return request.BYOHAdd{}, fmt.Errorf("%w: give the Windows user WMCO logs in as (e.g. Administrator)", err)
	}
	return request.BYOHAdd{Address: addr, User: user}, nil
}
