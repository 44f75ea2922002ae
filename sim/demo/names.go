package demo

import (
	"fmt"
	"sort"
)

// NodeNames are the names of the nodes the demo starts with, Windows nodes first, each group in name
// order. Shell completion lists them without starting the demo: a TAB must not boot simulated hosts.
// The node that joins during the demo is included, as it is there moments after the start.
func NodeNames(fresh bool) (windows, linux []string) {
	if !fresh {
		for _, w := range windowsNodes() {
			windows = append(windows, NodeName(w.IP))
		}
	}
	for i := 0; i < 3; i++ {
		linux = append(linux, linuxNodeName(10+i), linuxNodeName(20+i))
	}
	sort.Strings(windows)
	sort.Strings(linux)
	return windows, linux
}

// linuxNodeName is the name of the Linux node at 127.0.1.N.
func linuxNodeName(n int) string { return NodeName(fmt.Sprintf("127.0.1.%d", n)) }
