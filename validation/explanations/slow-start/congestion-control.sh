#!/bin/bash
# Registers (or unregisters) the reno_2004 congestion control of this experiment, as root:
#   bash congestion-control.sh register     # build with clang, register with bpftool, allow it
#   bash congestion-control.sh unregister   # remove it and take it off the allowed list
# Needs clang, bpftool and libbpf-dev (Debian) and a kernel with BTF (/sys/kernel/btf/vmlinux).
# A network namespace may choose only an allowed congestion control
# (net.ipv4.tcp_allowed_congestion_control, set in the initial namespace), hence that step.
set -euo pipefail
NAME=reno_2004
ALLOWED=/proc/sys/net/ipv4/tcp_allowed_congestion_control
here=$(cd "$(dirname "$0")" && pwd)

registered() { grep -qw "$NAME" /proc/sys/net/ipv4/tcp_available_congestion_control; }

register() {
	registered && { echo "$NAME: already registered"; return; }
	local build
	build=$(mktemp -d)
	trap 'rm -rf "$build"' RETURN
	bpftool btf dump file /sys/kernel/btf/vmlinux format c > "$build/vmlinux.h"
	clang -O2 -g -target bpf -I"$build" -c "$here/$NAME.bpf.c" -o "$build/$NAME.bpf.o"
	bpftool struct_ops register "$build/$NAME.bpf.o"
	grep -qw "$NAME" "$ALLOWED" || echo "$(cat "$ALLOWED") $NAME" > "$ALLOWED"
	echo "$NAME: registered and allowed in every network namespace"
}

unregister() {
	local rest
	rest=$(tr ' ' '\n' < "$ALLOWED" | grep -vx "$NAME" | paste -sd' ' || true)
	echo "$rest" > "$ALLOWED"
	registered && bpftool struct_ops unregister name "$NAME"
	echo "$NAME: unregistered"
}

case "${1:-}" in
register) register ;;
unregister) unregister ;;
*) echo "usage: $0 register|unregister" >&2; exit 2 ;;
esac
