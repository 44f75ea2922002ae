package cluster

import (
	"encoding/json"
	"fmt"
	"strings"

	machinev1beta1 "github.com/openshift/api/machine/v1beta1"

	"github.com/wmcon/wmcon/model"
)

// providerFields are the fields of the five platforms' providerSpecs that the MachineSet details show,
// read leniently (a providerSpec wmcon does not know shows what it can).
type providerFields struct {
	InstanceType string `json:"instanceType"` // AWS
	VMSize       string `json:"vmSize"`       // Azure
	MachineType  string `json:"machineType"`  // GCP
	NumCPUs      int    `json:"numCPUs"`      // vSphere
	MemoryMiB    int64  `json:"memoryMiB"`
	VCPUSockets  int    `json:"vcpuSockets"` // Nutanix
	VCPUsPerSock int    `json:"vcpusPerSocket"`
	MemorySize   string `json:"memorySize"`
	Placement    struct {
		AvailabilityZone string `json:"availabilityZone"`
	} `json:"placement"`
	Zone string `json:"zone"` // Azure, GCP
	AMI  struct {
		ID string `json:"id"`
	} `json:"ami"`
	Image    json.RawMessage          `json:"image"` // Azure: publisher/offer/sku/version or resourceID; Nutanix: name
	Disks    []struct{ Image string } `json:"disks"`
	Template string                   `json:"template"` // vSphere
	UserData *struct {
		Name string `json:"name"`
	} `json:"userDataSecret"`
}

// providerSummary reads what a MachineSet's providerSpec asks for; an empty or unreadable one says nothing.
func providerSummary(ps machinev1beta1.ProviderSpec) model.ProviderSummary {
	var f providerFields
	if ps.Value == nil || json.Unmarshal(ps.Value.Raw, &f) != nil {
		return model.ProviderSummary{}
	}
	out := model.ProviderSummary{InstanceType: firstOf(f.InstanceType, f.VMSize, f.MachineType), Zone: firstOf(f.Placement.AvailabilityZone, f.Zone),
		Image: firstOf(f.AMI.ID, imageName(f.Image), f.Template)}
	if out.InstanceType == "" && f.NumCPUs > 0 {
		out.InstanceType = fmt.Sprintf("%d CPUs, %d MiB", f.NumCPUs, f.MemoryMiB)
	}
	if out.InstanceType == "" && f.VCPUSockets > 0 {
		out.InstanceType = fmt.Sprintf("%d×%d vCPUs, %s", f.VCPUSockets, max(f.VCPUsPerSock, 1), f.MemorySize)
	}
	if out.Image == "" && len(f.Disks) > 0 {
		out.Image = f.Disks[0].Image
	}
	if f.UserData != nil {
		out.UserDataSecret = f.UserData.Name
	}
	return out
}

// imageName is an Azure image (publisher:offer:sku:version, or its resource ID) or a Nutanix image's name.
func imageName(raw json.RawMessage) string {
	var img struct {
		Publisher, Offer, SKU, Version, ResourceID, Name string
	}
	if len(raw) == 0 || json.Unmarshal(raw, &img) != nil {
		return ""
	}
	if img.Publisher != "" {
		return strings.Join([]string{img.Publisher, img.Offer, img.SKU, img.Version}, ":")
	}
	return firstOf(img.ResourceID, img.Name)
}

func firstOf(values ...string) string {
	for _, v := range values {
		if v != "" {
			return v
		}
	}
	return ""
}
