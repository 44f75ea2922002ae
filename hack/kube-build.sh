#!/usr/bin/env bash
# kube-build.sh builds one server that testsupport/kubeapi runs (kube-apiserver, kube-controller-manager for
# tests that ask for it, or etcd) from its tools module (tools/kube-apiserver, tools/etcd), into the
# git-ignored .cache/bin/. The build takes minutes, so it runs only when the binary is missing or reports
# another version; it prints the binary's path either way.
#
# Usage: hack/kube-build.sh kube-apiserver|kube-controller-manager|etcd
#        prints .cache/bin/<component>-<version> (absolute path)
set -euo pipefail

component="${1:-}"
case "$component" in
kube-apiserver | kube-controller-manager)
	version=v1.37.1 # must match the k8s.io/kubernetes version required by tools/kube-apiserver/go.mod
	major=1
	minor=37
	module=tools/kube-apiserver
	pkg=k8s.io/component-base/version
	# Stamp the version so /version (which the console shows) reports $version rather than v0.0.0-master.
	ldflags="-X $pkg.gitVersion=$version -X $pkg.gitMajor=${major} -X $pkg.gitMinor=${minor} -X $pkg.gitTreeState=clean"
	main="k8s.io/kubernetes/cmd/$component"
	reports="Kubernetes $version"
	;;
etcd)
	# The 3.5 line, as OpenShift 4.20 and 4.21 ship: new enough (>= 3.5.13) for the API server to serve
	# consistent lists from its watch cache and to stream lists (WatchList), which need etcd's progress
	# notifications. Must match go.etcd.io/etcd/server/v3 in tools/etcd/go.mod.
	version=v3.5.35
	module=tools/etcd
	ldflags="-X go.etcd.io/etcd/api/v3/version.GitSHA=${version}"
	main=go.etcd.io/etcd/server/v3
	reports="etcd Version: ${version#v}"
	;;
*)
	echo "usage: hack/kube-build.sh kube-apiserver|kube-controller-manager|etcd (got '${component}')" >&2
	exit 64
	;;
esac

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
if [ -x "$bin" ] && "$bin" --version 2>/dev/null | grep -qx "$reports"; then
	echo "$bin"
	exit 0
fi

mkdir -p "$bin_dir"
# Build under a temporary name and rename: an interrupted build must never leave a binary that looks cached.
tmp="$bin.tmp.$$"
trap 'rm -f "$tmp"' EXIT
echo "$me: building $component $version (first build takes several minutes)" >&2
(
	cd "$root/$module"
	GONOSUMDB=k8s.io go build -o "$tmp" -ldflags "$ldflags" "$main"
)
mv -f "$tmp" "$bin"
echo "$bin"
