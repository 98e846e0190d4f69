/* The initial retransmission timeout of Linux 2.4 (3 s, RFC 1122/2988) instead of today's 1 s
 * (RFC 6298), for the isolating experiment of validation/explanations/initial-rto/
 * (validation/README.md).
 *
 * A cgroup sock_ops program: the kernel asks it, through BPF_SOCK_OPS_TIMEOUT_INIT, for the
 * timeout of a connection's first SYN (connect()) and of a listener's first SYN-ACK (the request
 * socket), in jiffies; the backoff doubles from there. Data before the first RTT sample needs
 * no hook: a connection whose handshake gave no sample falls back to 3 s already (RFC 6298 5.7,
 * tcp_init_metrics). Only sockets whose local or remote IPv4 address lies in the fixed LAN
 * (198.18.N.0/24) or on the wireless link (198.19.N.0/24) of a lane N in [LANE_FIRST,
 * LANE_LAST] are changed (testbed/addresses.py), so other lanes on the same machine keep
 * today's timeout. Attached to the cgroup v2 root by initial-rto.sh. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

#ifndef LANE_FIRST
#define LANE_FIRST 114
#endif
#ifndef LANE_LAST
#define LANE_LAST 116
#endif
#ifndef TIMEOUT_MS
#define TIMEOUT_MS 3000
#endif
#define AF_INET 2

char _license[] SEC("license") = "GPL";

extern unsigned int CONFIG_HZ __kconfig;

/* An address (network byte order) of one of the experiment's lanes. */
static __always_inline int in_lanes(__u32 address)
{
	__u32 host = bpf_ntohl(address);
	__u32 a = host >> 24, b = (host >> 16) & 0xff, lane = (host >> 8) & 0xff;

	return a == 198 && (b == 18 || b == 19) && lane >= LANE_FIRST && lane <= LANE_LAST;
}

SEC("sockops")
int initial_rto(struct bpf_sock_ops *skops)
{
	int timeout = -1;                     /* the kernel's default */

	if (skops->op != BPF_SOCK_OPS_TIMEOUT_INIT)
		return 1;
	if (skops->family == AF_INET &&
	    (in_lanes(skops->local_ip4) || in_lanes(skops->remote_ip4)))
		timeout = TIMEOUT_MS * CONFIG_HZ / 1000;
	skops->reply = timeout;               /* one store: the verifier wants ctx at a fixed offset */
	return 1;
}
