#!/usr/bin/env bash
# kube-controller-manager.sh builds the kube-controller-manager that cluster/testserver runs (when a test asks
# for it) from the same tools module as kube-apiserver, into the git-ignored .cache/bin/. Like
# hack/kube-apiserver.sh it builds only when the binary is missing and prints the binary's path either way.
#
# Usage: hack/kube-controller-manager.sh    prints .cache/bin/kube-controller-manager-<version> (absolute path)
set -euo pipefail

version=v1.37.1 # must match the k8s.io/kubernetes version required by tools/kube-apiserver/go.mod
major=1
minor=37
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bin_dir="$root/.cache/bin"
bin="$bin_dir/kube-controller-manager-$version"

# Another build of the same binary would only compete for the CPU and race on the output: wait for it.
waited=0
while pgrep -f "go build -o $bin" >/dev/null 2>&1; do
	if [ "$waited" -eq 0 ]; then
		echo "kube-controller-manager.sh: another build of $bin is running; waiting for it" >&2
	fi
	sleep 5
	waited=$((waited + 5))
	if [ "$waited" -ge 1800 ]; then
		echo "kube-controller-manager.sh: the other build is still running after 30 minutes; stop it or wait" >&2
		exit 1
	fi
done
if [ -x "$bin" ] && "$bin" --version 2>/dev/null | grep -qx "Kubernetes $version"; then
	echo "$bin"
	exit 0
fi

mkdir -p "$bin_dir"
# Build under a temporary name and rename: an interrupted build must never leave a binary that looks cached.
tmp="$bin.tmp.$$"
trap 'rm -f "$tmp"' EXIT
echo "kube-controller-manager.sh: building kube-controller-manager $version (first build takes several minutes)" >&2
(
	cd "$root/tools/kube-apiserver"
	pkg=k8s.io/component-base/version
	GONOSUMDB=k8s.io go build -o "$tmp" \
		-ldflags "-X $pkg.gitVersion=$version -X $pkg.gitMajor=${major} -X $pkg.gitMinor=${minor} -X $pkg.gitTreeState=clean" \
		k8s.io/kubernetes/cmd/kube-controller-manager
)
mv -f "$tmp" "$bin"
echo "$bin"
