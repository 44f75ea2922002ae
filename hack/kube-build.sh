#!/usr/bin/env bash
# kube-build.sh builds one Kubernetes component that testsupport/kubeapi runs (kube-apiserver, or
# kube-controller-manager for tests that ask for it) from the tools module tools/kube-apiserver, into the
# git-ignored .cache/bin/. The build takes minutes, so it runs only when the binary is missing or reports
# another version; it prints the binary's path either way.
#
# Usage: hack/kube-build.sh kube-apiserver|kube-controller-manager
#        prints .cache/bin/<component>-<version> (absolute path)
set -euo pipefail

component="${1:-}"
case "$component" in
kube-apiserver | kube-controller-manager) ;;
*)
	echo "usage: hack/kube-build.sh kube-apiserver|kube-controller-manager (got '${component}')" >&2
	exit 64
	;;
esac

version=v1.37.1 # must match the k8s.io/kubernetes version required by tools/kube-apiserver/go.mod
major=1
minor=37
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bin_dir="$root/.cache/bin"
bin="$bin_dir/$component-$version"
me="kube-build.sh $component"

# Another build of the same binary (a second make, or one started by hand) would only compete for the CPU
# and race on the output: wait for it and use its result.
waited=0
while pgrep -f "go build -o $bin" >/dev/null 2>&1; do
	if [ "$waited" -eq 0 ]; then
		echo "$me: another build of $bin is running; waiting for it" >&2
	fi
	sleep 5
	waited=$((waited + 5))
	if [ "$waited" -ge 1800 ]; then
		echo "$me: the other build is still running after 30 minutes; stop it or wait" >&2
		exit 1
	fi
done

# A binary built before the version was stamped reports v0.0.0-master; rebuild it (mostly a cached link).
if [ -x "$bin" ] && "$bin" --version 2>/dev/null | grep -qx "Kubernetes $version"; then
	echo "$bin"
	exit 0
fi

mkdir -p "$bin_dir"
# Build under a temporary name and rename: an interrupted build must never leave a binary that looks cached.
tmp="$bin.tmp.$$"
trap 'rm -f "$tmp"' EXIT
echo "$me: building $component $version (first build takes several minutes)" >&2
(
	cd "$root/tools/kube-apiserver"
	# Stamp the version so /version (which the console shows) reports $version rather than v0.0.0-master.
	pkg=k8s.io/component-base/version
	GONOSUMDB=k8s.io go build -o "$tmp" \
		-ldflags "-X $pkg.gitVersion=$version -X $pkg.gitMajor=${major} -X $pkg.gitMinor=${minor} -X $pkg.gitTreeState=clean" \
		"k8s.io/kubernetes/cmd/$component"
)
mv -f "$tmp" "$bin"
echo "$bin"
