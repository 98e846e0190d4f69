/* The TCP timers of a Linux 2.4 host that today's kernel lets a program set, for the
 * `linux-2.4` TCP profile (scenarios/profiles/tcp.toml, docs/tcp-variants.md).
 *
 * A cgroup sock_ops program attached to the root of the cgroup v2 hierarchy by squall-hostbpf,
 * which also writes `config`: only sockets of the network namespace whose cookie it names are
 * changed, so other lanes and the machine's own connections keep the kernel's values.
 *   BPF_SOCK_OPS_TIMEOUT_INIT   the first timeout of a connection's SYN (connect()) and of a
 *                               listener's SYN-ACK, in jiffies; the backoff doubles from it.
 *                               Linux 2.4: TCP_TIMEOUT_INIT = 3*HZ (RFC 1122), today 1 s.
 *   *_ESTABLISHED_CB            TCP_BPF_DELACK_MAX, the cap of the delayed-ACK timer
 *                               (2.4: TCP_DELACK_MAX = HZ/5, 200 ms).
 * Data sent before the first RTT sample needs no hook: a connection whose handshake gave no
 * sample starts at 3 s already (RFC 6298 5.7). */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "host_config.h"

#define SOL_TCP 6

char _license[] SEC("license") = "GPL";

extern unsigned int CONFIG_HZ __kconfig;

const volatile struct host_config config = {};

SEC("sockops")
int host_2004(struct bpf_sock_ops *skops)
{
	__u32 op = skops->op;
	int value;

	if (bpf_get_netns_cookie(skops) != config.netns_cookie)
		return 1;
	if (op == BPF_SOCK_OPS_TIMEOUT_INIT) {
		/* 0 or less: the kernel's own; one store, the verifier wants ctx at a fixed offset */
		skops->reply = config.syn_rto_ms ? (int)(config.syn_rto_ms * CONFIG_HZ / 1000) : -1;
		return 1;
	}
	if ((op == BPF_SOCK_OPS_ACTIVE_ESTABLISHED_CB || op == BPF_SOCK_OPS_PASSIVE_ESTABLISHED_CB) &&
	    config.delack_max_ms) {
		value = (int)(config.delack_max_ms * 1000);          /* microseconds */
		bpf_setsockopt(skops, SOL_TCP, TCP_BPF_DELACK_MAX, &value, sizeof(value));
	}
	return 1;
}
