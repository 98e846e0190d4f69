/* reno_2004: Reno whose window grows as a Linux 2.4 sender's did against the IIP baseline's
 * receiver, for the slow-start experiment (README.md beside it; validation/README.md).
 *
 * Linux 2.4 counted ACKs: +1 segment per ACK in slow start, +1 per window of ACKs after. The
 * baseline receiver ACKed every second segment (delayed ACKs, no quick ACKs), so the window
 * grew by one segment per two segments acknowledged: about 1.5x per round trip in slow start
 * and one segment per two round trips after. Today's Linux counts the segments an ACK covers
 * and its receivers ACK every segment early in a connection, so the window doubles. Here the
 * growth is one segment per two segments acknowledged, whatever the ACKs look like; loss
 * response (half the window) and undo are Reno's. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char _license[] SEC("license") = "GPL";

/* Segments acknowledged and not yet turned into window growth. */
struct pending_acks {
	__u32 segments;
};

static __always_inline struct tcp_sock *tcp_of(struct sock *sk)
{
	return (struct tcp_sock *)sk;
}

static __always_inline struct pending_acks *pending_of(struct sock *sk)
{
	return (struct pending_acks *)((struct inet_connection_sock *)sk)->icsk_ca_priv;
}

SEC("struct_ops")
void BPF_PROG(reno_2004_init, struct sock *sk)
{
	pending_of(sk)->segments = 0;
}

SEC("struct_ops")
__u32 BPF_PROG(reno_2004_ssthresh, struct sock *sk)
{
	__u32 half = tcp_of(sk)->snd_cwnd >> 1;
	return half < 2 ? 2 : half;
}

SEC("struct_ops")
__u32 BPF_PROG(reno_2004_undo_cwnd, struct sock *sk)
{
	struct tcp_sock *tp = tcp_of(sk);
	return tp->snd_cwnd > tp->prior_cwnd ? tp->snd_cwnd : tp->prior_cwnd;
}

SEC("struct_ops")
void BPF_PROG(reno_2004_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	struct tcp_sock *tp = tcp_of(sk);
	struct pending_acks *pending = pending_of(sk);
	__u32 cwnd = tp->snd_cwnd;
	int slow_start = cwnd <= tp->snd_ssthresh;

	/* the kernel's tcp_is_cwnd_limited(): grow only a window that is used */
	if (!tp->is_cwnd_limited && !(slow_start && cwnd < 2 * tp->max_packets_out))
		return;
	pending->segments += acked;
	if (slow_start) {
		cwnd += pending->segments / 2;
		pending->segments &= 1;
	} else if (pending->segments >= 2 * cwnd) {
		pending->segments -= 2 * cwnd;
		cwnd += 1;
	}
	tp->snd_cwnd = cwnd < tp->snd_cwnd_clamp ? cwnd : tp->snd_cwnd_clamp;
}

SEC(".struct_ops")
struct tcp_congestion_ops reno_2004 = {
	.init = (void *)reno_2004_init,
	.ssthresh = (void *)reno_2004_ssthresh,
	.cong_avoid = (void *)reno_2004_cong_avoid,
	.undo_cwnd = (void *)reno_2004_undo_cwnd,
	.name = "reno_2004",
};
