#!/bin/bash
# Registers (or unregisters) a congestion control of reno_2004.bpf.c, as root:
#   bash congestion-control.sh register reno_2004     # or reno_ss15 (slow start only)
#   bash congestion-control.sh unregister reno_2004
# Needs clang, bpftool and libbpf-dev (Debian) and a kernel with BTF (/sys/kernel/btf/vmlinux).
# Registered, it is offered to every network namespace (non-restricted) until unregistered.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
action=${1:-}
name=${2:-}
case "$name" in
reno_2004) defines=() ;;
reno_ss15) defines=(-DSLOW_START_ONLY) ;;
*) echo "usage: $0 register|unregister reno_2004|reno_ss15" >&2; exit 2 ;;
esac

registered() { grep -qw "$name" /proc/sys/net/ipv4/tcp_available_congestion_control; }

register() {
	registered && { echo "$name: already registered"; return; }
	local build
	build=$(mktemp -d)
	trap 'rm -rf "$build"' RETURN
	bpftool btf dump file /sys/kernel/btf/vmlinux format c > "$build/vmlinux.h"
	clang -O2 -g -target bpf "${defines[@]}" -I"$build" -c "$here/reno_2004.bpf.c" -o "$build/$name.bpf.o"
	bpftool struct_ops register "$build/$name.bpf.o"
}

case "$action" in
register) register ;;
unregister) if registered; then bpftool struct_ops unregister name "$name"; fi ;;
*) echo "usage: $0 register|unregister reno_2004|reno_ss15" >&2; exit 2 ;;
esac
