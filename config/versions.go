package config

import (
	"net"
	"regexp"
	"strconv"
)

// KubernetesWindow is the Kubernetes minor versions a WMCO release supports: 11.0 documents v1.36–v1.37;
// WMCO 10.y ships with OpenShift 4.y, whose Kubernetes is 1.(y+13). ok is false for a release it does not
// know.
func KubernetesWindow(operator string) (lo, hi int, ok bool) {
	major, minor, ok := MajorMinor(operator)
	switch {
	case !ok:
		return 0, 0, false
	case major == 11 && minor == 0:
		return 36, 37, true
	case major == 10 && minor >= 12:
		return minor + 13, minor + 13, true
	}
	return 0, 0, false
}

var versionPrefix = regexp.MustCompile(`^v?(\d+)\.(\d+)`)

// MajorMinor reads the major and minor numbers of a version ("v1.37.2", "11.0.1").
func MajorMinor(v string) (major, minor int, ok bool) {
	m := versionPrefix.FindStringSubmatch(v)
	if m == nil {
		return 0, 0, false
	}
	major, _ = strconv.Atoi(m[1])
	minor, _ = strconv.Atoi(m[2])
	return major, minor, true
}

// ClassE is 240.0.0.0/4, the reserved class E range: Windows cannot route it, so a cluster or service
// network in it cannot have Windows nodes.
var ClassE = &net.IPNet{IP: net.IPv4(240, 0, 0, 0).To4(), Mask: net.CIDRMask(4, 32)}
