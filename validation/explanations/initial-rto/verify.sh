#!/bin/bash
# Checks initial_rto.bpf.c on its own, as root, in two network namespaces of its own joined by
# a veth (nothing of squall's), to an address of lane 116 (198.18.116.0/24) and to one outside
# the lanes (10.250.0.0/24):
#   SYN      a connects to an address nobody holds (.3: a static neighbour entry sends its
#            frames to b, which discards them): a's SYN and its retransmissions;
#   SYN-ACK  a raw SYN from an address nobody holds (.3) to b's listener at .2: b's SYN-ACKs go
#            to a static neighbour nobody answers, and b retransmits them on its timer.
# Prints, per case, the times of the first packet and of its retransmissions, from tcpdump's
# capture. Run once with the program attached (bash initial-rto.sh attach), once without:
#   bash verify.sh
# Expected: lane address 0, 3, 9 s attached, 0, 1, 3 s without; outside address 0, 1, 3 s both.
# (This machine has no nft/iptables and no tc gact, so the drops are addresses nobody holds.)
set -euo pipefail
a=irto-verify-a
b=irto-verify-b
work=$(mktemp -d)
listener=
cleanup() {
	[ -n "$listener" ] && kill "$listener" 2>/dev/null || true
	ip netns del "$a" 2>/dev/null || true
	ip netns del "$b" 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT
ip netns add "$a"
ip netns add "$b"
ip link add veth-a netns "$a" type veth peer name veth-b netns "$b"
for ns in "$a" "$b"; do
	ip -n "$ns" link set lo up
	ip netns exec "$ns" sysctl -qw net.ipv4.tcp_syn_linear_timeouts=0 2>/dev/null || true
done
ip -n "$a" addr add 198.18.116.1/24 dev veth-a
ip -n "$a" addr add 10.250.0.1/24 dev veth-a
ip -n "$b" addr add 198.18.116.2/24 dev veth-b
ip -n "$b" addr add 10.250.0.2/24 dev veth-b
ip -n "$a" link set veth-a up
ip -n "$b" link set veth-b up
# .3 of each network: a's frames to it go to b, which is not .3 and discards them; b's go to a
# MAC nobody has.
mac_b=$(ip -n "$b" -br link show veth-b | awk '{ print $3 }')
for net in 198.18.116 10.250.0; do
	ip -n "$a" neigh add "$net.3" lladdr "$mac_b" dev veth-a nud permanent
	ip -n "$b" neigh add "$net.3" lladdr 02:00:00:00:00:03 dev veth-b nud permanent
done
# b's listener on 5556 (never accepts: only the handshake matters).
ip netns exec "$b" python3 -c '
import socket, time
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("0.0.0.0", 5556)); s.listen(8); time.sleep(120)' &
listener=$!
sleep 0.5

times() {   # capture file, tcpdump filter: seconds of each matching packet after the first
	tcpdump -nn -tt -r "$1" "$2" 2>/dev/null |
		awk 'NR == 1 { t0 = $1 } { printf "%.3f ", $1 - t0 } END { print "" }'
}

syn_case() {   # label, network: a's connect() to .3 of it
	local label=$1 net=$2 pcap=$work/$1.pcap
	ip netns exec "$a" tcpdump -q -i veth-a -w "$pcap" "tcp port 5555 and host $net.3" 2>/dev/null &
	local dump=$!
	sleep 1
	ip netns exec "$a" python3 -c '
import socket, sys
s = socket.socket(); s.settimeout(10)
try:
    s.connect((sys.argv[1], 5555))
except OSError:
    pass' "$net.3"
	sleep 0.5
	kill -INT $dump; wait $dump 2>/dev/null || true
	echo "$label ($net.1 -> $net.3): SYN at $(times "$pcap" 'tcp[tcpflags] == tcp-syn')s"
}

synack_case() {   # label, network: a raw SYN from .3 to b's listener at .2
	local label=$1 net=$2 pcap=$work/$1.pcap
	ip netns exec "$b" tcpdump -q -i veth-b -w "$pcap" "tcp port 5556 and host $net.3" 2>/dev/null &
	local dump=$!
	sleep 1
	ip netns exec "$a" python3 -c '
import socket, struct, sys
src, dst = socket.inet_aton(sys.argv[1]), socket.inet_aton(sys.argv[2])
def checksum(data):
    total = sum(struct.unpack("!%dH" % (len(data) // 2), data))
    while total >> 16:
        total = (total & 0xffff) + (total >> 16)
    return ~total & 0xffff
tcp = struct.pack("!HHIIBBHHH", 40000, 5556, 1000, 0, 5 << 4, 0x02, 64240, 0, 0)
sum_ = checksum(src + dst + struct.pack("!BBH", 0, 6, len(tcp)) + tcp)
tcp = tcp[:16] + struct.pack("!H", sum_) + tcp[18:]
ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(tcp), 0, 0, 64, 6, 0, src, dst)
s = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_RAW)
s.sendto(ip + tcp, (sys.argv[2], 0))' "$net.3" "$net.2"
	sleep 10
	kill -INT $dump; wait $dump 2>/dev/null || true
	echo "$label ($net.2 -> $net.3): SYN-ACK at $(times "$pcap" 'tcp[tcpflags] == tcp-syn|tcp-ack')s"
}

syn_case syn-lane 198.18.116
syn_case syn-outside 10.250.0
synack_case synack-lane 198.18.116
synack_case synack-outside 10.250.0
