#!/bin/bash
# Attaches (or detaches) initial_rto.bpf.c, the 2004 initial RTO of 3 s for the sockets of lanes
# 114-116 only, to the root of the cgroup v2 hierarchy, as root:
#   bash initial-rto.sh attach      # every TCP socket of those lanes' addresses, whatever cgroup
#   bash initial-rto.sh detach
#   bash initial-rto.sh status
# LANE_FIRST / LANE_LAST in the environment choose other lanes. Needs clang, bpftool and
# libbpf-dev (Debian), and a kernel with BTF (/sys/kernel/btf/vmlinux), cgroup BPF and /proc/config.gz or /boot/config-* (the
# program reads CONFIG_HZ). Attached with `multi`, beside any other sock_ops program; the root
# program reaches squall's per-program cgroups (testbed/cpu_wait.py) and nginx wherever
# it runs. Attached, it stays until detached: call detach on every path (a trap).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
name=initial_rto
lane_first=${LANE_FIRST:-114}
lane_last=${LANE_LAST:-116}

cgroup2_root() {
	awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts
}

root=$(cgroup2_root)
[ -n "$root" ] || { echo "no cgroup v2 mounted" >&2; exit 1; }

attached_ids() {
	bpftool cgroup show "$root" | awk -v name="$name" '($2 == "sock_ops" || $2 == "cgroup_sock_ops") && $NF == name { print $1 }'
}

attach() {
	if [ -n "$(attached_ids)" ]; then echo "$name: already attached to $root"; return; fi
	build=$(mktemp -d)   # global: the EXIT trap needs it after attach() has returned
	trap 'umount "$build/bpffs" 2>/dev/null || true; rm -rf "$build"' EXIT
	bpftool btf dump file /sys/kernel/btf/vmlinux format c > "$build/vmlinux.h"
	clang -O2 -g -target bpf -DLANE_FIRST="$lane_first" -DLANE_LAST="$lane_last" -I"$build" \
		-c "$here/initial_rto.bpf.c" -o "$build/$name.bpf.o"
	# A private bpffs for the pin: the cgroup holds the program once attached.
	mkdir "$build/bpffs"
	mount -t bpf bpf "$build/bpffs"
	bpftool prog load "$build/$name.bpf.o" "$build/bpffs/$name" type sockops
	bpftool cgroup attach "$root" sock_ops pinned "$build/bpffs/$name" multi
	echo "$name: attached to $root (lanes $lane_first-$lane_last: initial RTO 3 s)"
}

detach() {
	local id
	for id in $(attached_ids); do
		bpftool cgroup detach "$root" sock_ops id "$id"
		echo "$name: detached (program $id) from $root"
	done
}

case "${1:-}" in
attach) attach ;;
detach) detach ;;
status) ids=$(attached_ids); if [ -n "$ids" ]; then echo "$name: attached ($ids) to $root"; else echo "$name: not attached"; fi ;;
*) echo "usage: $0 attach|detach|status" >&2; exit 2 ;;
esac
