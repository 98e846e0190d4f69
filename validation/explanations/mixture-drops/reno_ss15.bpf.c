// SPDX-License-Identifier: GPL-2.0
/* Reno whose slow start grows the congestion window by one segment per two segments
 * acknowledged: 1.5 x per round trip, the growth of a 2004 Linux sender (cwnd + 1 per ACK)
 * behind a receiver that ACKs every second segment. Congestion avoidance, ssthresh and undo
 * are the kernel's Reno (kfuncs). Used only by validation/explanations/mixture-drops. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char _license[] SEC("license") = "GPL";

extern __u32 tcp_slow_start(struct tcp_sock *tp, __u32 acked) __ksym;
extern void tcp_reno_cong_avoid(struct sock *sk, __u32 ack, __u32 acked) __ksym;
extern __u32 tcp_reno_ssthresh(struct sock *sk) __ksym;
extern __u32 tcp_reno_undo_cwnd(struct sock *sk) __ksym;

struct half {
	__u32 carry;       /* segments acknowledged in slow start not yet counted */
};

static inline struct half *ca_of(struct sock *sk)
{
	return (struct half *)((struct inet_connection_sock *)sk)->icsk_ca_priv;
}

SEC("struct_ops")
void BPF_PROG(ss15_init, struct sock *sk)
{
	ca_of(sk)->carry = 0;
}

SEC("struct_ops")
void BPF_PROG(ss15_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	struct tcp_sock *tp = (struct tcp_sock *)sk;
	struct half *ca = ca_of(sk);
	__u32 inc;

	if (tp->snd_cwnd >= tp->snd_ssthresh) {
		tcp_reno_cong_avoid(sk, ack, acked);
		return;
	}
	/* the kernel's tcp_is_cwnd_limited() in slow start */
	if (tp->snd_cwnd >= 2 * tp->max_packets_out)
		return;
	ca->carry += acked;
	inc = ca->carry / 2;
	ca->carry -= 2 * inc;
	if (inc)
		tcp_slow_start(tp, inc);
}

SEC("struct_ops")
__u32 BPF_PROG(ss15_ssthresh, struct sock *sk)
{
	return tcp_reno_ssthresh(sk);
}

SEC("struct_ops")
__u32 BPF_PROG(ss15_undo_cwnd, struct sock *sk)
{
	return tcp_reno_undo_cwnd(sk);
}

SEC(".struct_ops")
struct tcp_congestion_ops reno_ss15 = {
	.init = (void *)ss15_init,
	.cong_avoid = (void *)ss15_cong_avoid,
	.ssthresh = (void *)ss15_ssthresh,
	.undo_cwnd = (void *)ss15_undo_cwnd,
	.flags = 0x1,      /* TCP_CONG_NON_RESTRICTED: a network namespace may make it its default */
	.name = "reno_ss15",
};
