#!/usr/bin/env bash
# deps.sh installs the Debian packages wmcon's tests and demo need: OpenSSH (the SSH test servers) and
# Prometheus (the metrics tests); etcd is built from its Go module (hack/kube-build.sh etcd). It is
# idempotent: it calls apt-get only when a package is missing, and
# it never leaves a system service running because of the install (our tests start their own servers on
# free loopback ports; a system sshd or Prometheus would only get in the way).
#
# Usage: hack/deps.sh            (as root, or with passwordless sudo)
set -euo pipefail

required=(openssh-server openssh-sftp-server openssh-client prometheus)
optional=(tmux) # handy for the demo; its absence is not an error

is_installed() {
	[ "$(dpkg-query -W -f='${db:Status-Status}' "$1" 2>/dev/null || true)" = "installed" ]
}

missing=()
for pkg in "${required[@]}" "${optional[@]}"; do
	is_installed "$pkg" || missing+=("$pkg")
done
if [ "${#missing[@]}" -eq 0 ]; then
	exit 0
fi

if ! command -v apt-get >/dev/null 2>&1; then
	echo "deps.sh: missing ${missing[*]} and apt-get is not available; install them with your package manager" >&2
	exit 1
fi

sudo=()
if [ "$(id -u)" -ne 0 ]; then
	if ! command -v sudo >/dev/null 2>&1; then
		echo "deps.sh: missing ${missing[*]}; run this script as root to install them" >&2
		exit 1
	fi
	sudo=(sudo -n)
fi

# Debian's maintainer scripts start sshd and Prometheus right after unpacking them. A policy-rc.d that exits 101
# ("action forbidden") stops invoke-rc.d and deb-systemd-invoke from doing so. Keep an existing policy
# (container images often ship one) and remove only the one we created.
policy=/usr/sbin/policy-rc.d
created_policy=""
remove_policy() {
	if [ -n "$created_policy" ]; then
		"${sudo[@]}" rm -f "$policy"
	fi
}
trap remove_policy EXIT
if [ ! -e "$policy" ]; then
	printf '#!/bin/sh\n# temporary, written by wmcon hack/deps.sh: do not start services during install\nexit 101\n' |
		"${sudo[@]}" tee "$policy" >/dev/null
	"${sudo[@]}" chmod 0755 "$policy"
	created_policy=yes
fi

export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null
for pkg in "${missing[@]}"; do
	echo "deps.sh: installing $pkg"
	if ! "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
		-o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold "$pkg" >/dev/null; then
		for req in "${required[@]}"; do
			if [ "$req" = "$pkg" ]; then
				echo "deps.sh: installing $pkg failed; see the apt-get output above" >&2
				exit 1
			fi
		done
		echo "deps.sh: optional $pkg could not be installed; continuing without it" >&2
	fi
done
