package configure

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/wmcon/wmcon/nodeconfig"
	"github.com/wmcon/wmcon/remote"
)

// ObservedHost is what observing a host reads; it changes nothing.
type ObservedHost interface {
	PathsExist(ctx context.Context, paths []string) (map[string]bool, error)
	FileHashes(ctx context.Context, paths []string) (map[string]string, error)
	ListDir(ctx context.Context, path string) ([]string, error)
	ServiceStates(ctx context.Context, names ...string) (map[string]remote.ServiceState, error)
	ServiceConfigs(ctx context.Context, names ...string) (map[string]remote.ServiceConfig, error)
	GetEnvs(ctx context.Context, names []string) (map[string]string, error)
}

// ObserveHost reads what a host has of a desired state, in a handful of round trips: one Test-Path for
// every directory, one Get-FileHash for every file, one Get-Service and one line of sc.exe qc for the
// services, one read of the environment, one listing of the registries directory.
func ObserveHost(ctx context.Context, h ObservedHost, want nodeconfig.State) (nodeconfig.Observed, error) {
	o := nodeconfig.Observed{Dirs: map[string]bool{}, Hashes: map[string]string{}, Services: map[string]nodeconfig.ObservedService{}}
	exist, err := h.PathsExist(ctx, want.Dirs)
	if err != nil {
		return o, fmt.Errorf("read the host's directories: %w", err)
	}
	for p, ok := range exist {
		o.Dirs[strings.ToLower(p)] = ok
	}
	paths := make([]string, len(want.Files))
	for i, f := range want.Files {
		paths[i] = f.Path
	}
	hashes, err := h.FileHashes(ctx, paths)
	if err != nil {
		return o, fmt.Errorf("read the host's file hashes: %w", err)
	}
	for p, hash := range hashes {
		o.Hashes[strings.ToLower(p)] = hash
	}
	if err := observeServices(ctx, h, want, &o); err != nil {
		return o, err
	}
	names := make([]string, 0, len(want.Env))
	for n := range want.Env {
		names = append(names, n)
	}
	sort.Strings(names)
	if o.Env, err = h.GetEnvs(ctx, names); err != nil {
		return o, fmt.Errorf("read the host's machine environment: %w", err)
	}
	if o.Dirs[strings.ToLower(nodeconfig.RegistriesDir)] {
		entries, err := h.ListDir(ctx, nodeconfig.RegistriesDir)
		if err != nil {
			return o, fmt.Errorf("list %s: %w", nodeconfig.RegistriesDir, err)
		}
		for _, e := range entries {
			if e = strings.TrimSpace(e); e != "" {
				o.RegistryFiles = append(o.RegistryFiles, nodeconfig.RegistriesDir+`\`+e)
			}
		}
	}
	return o, nil
}

func observeServices(ctx context.Context, h ObservedHost, want nodeconfig.State, o *nodeconfig.Observed) error {
	names := make([]string, len(want.Services))
	for i, s := range want.Services {
		names[i] = s.Name
	}
	states, err := h.ServiceStates(ctx, names...)
	if err != nil {
		return fmt.Errorf("read the host's services: %w", err)
	}
	var installed []string
	for _, n := range names {
		if _, ok := states[n]; ok {
			installed = append(installed, n)
		}
	}
	cfgs, err := h.ServiceConfigs(ctx, installed...)
	if err != nil {
		return fmt.Errorf("read the host's service configuration: %w", err)
	}
	for _, n := range installed {
		o.Services[n] = nodeconfig.ObservedService{State: string(states[n]), BinPath: cfgs[n].BinPath, DependsOn: cfgs[n].Dependencies}
	}
	return nil
}
