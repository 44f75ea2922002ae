package demo

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/wmcon/wmcon/config"
	"github.com/wmcon/wmcon/sim/windows"
)

// growMachineSets plays the MachineSet controller on the default demo (the fresh demo runs sim/machineapi):
// a Windows MachineSet scaled above its Machines gets new Machines, each an instance on the next free
// address that joins as the demo's joining node does (Provisioned, its node registers, Running, configured
// by WMCO). Scaling down is left to the user deleting a Machine, as the demo has no deleting controller.
func (c *Cluster) growMachineSets(ctx context.Context) {
	sets, err := c.machine.MachineV1beta1().MachineSets(config.MachineAPINamespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return
	}
	machines, err := c.machine.MachineV1beta1().Machines(config.MachineAPINamespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return
	}
	have := map[string]int{}
	for _, m := range machines.Items {
		if m.DeletionTimestamp == nil {
			have[m.Labels[config.MachineSetLabel]]++
		}
	}
	for _, ms := range sets.Items {
		if ms.Spec.Template.Labels[config.MachineOSIDLabel] != config.WindowsOSID || ms.Spec.Replicas == nil {
			continue
		}
		for i := have[ms.Name]; i < int(*ms.Spec.Replicas); i++ {
			if err := c.addMachine(ctx, ms.Name); err != nil {
				return // the demo only stops adding; the next round tries again
			}
		}
	}
}

// addMachine creates a Machine of set with its instance and lets it join.
func (c *Cluster) addMachine(ctx context.Context, set string) error {
	ip := c.freeMachineIP()
	if ip == "" {
		return fmt.Errorf("no free address for a new Machine of %s", set)
	}
	w := WindowsNode{IP: ip, MachineSet: set, Machine: fmt.Sprintf("%s-%05x", set, fnv64(ip)&0xfffff), Version: currentWMCO}
	h, err := c.startNodeHost(w)
	if err != nil {
		return err
	}
	c.grownMu.Lock()
	if c.grown == nil {
		c.grown = map[string]*windows.Host{}
	}
	c.grown[ip] = h
	c.grownMu.Unlock()
	m := machine(w.Machine, set, true, "Provisioning", "", 0, c.opts.Now())
	if _, err := c.machine.MachineV1beta1().Machines(config.MachineAPINamespace).Create(ctx, m, metav1.CreateOptions{}); err != nil {
		return err
	}
	go c.join(ctx, w)
	return nil
}

// freeMachineIP is the first of FreshMachineIPs no host of the demo uses.
func (c *Cluster) freeMachineIP() string {
	c.grownMu.Lock()
	defer c.grownMu.Unlock()
	for _, ip := range FreshMachineIPs() {
		if c.Hosts[NodeName(ip)] == nil && c.grown[ip] == nil && c.bare[ip] == nil {
			return ip
		}
	}
	return ""
}
