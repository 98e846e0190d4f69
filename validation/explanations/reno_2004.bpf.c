/* Reno whose window grows as a Linux 2.4 sender's did behind the IIP baseline's receiver, for
 * the isolating experiments of validation/explanations/ (validation/README.md).
 *
 * Linux 2.4 added one segment per ACK, and the baseline receiver ACKed every second segment
 * (delayed ACKs, no quick ACKs): the window grew by one segment per two acknowledged, about
 * 1.5x per round trip in slow start. Today's Linux adds every segment an ACK covers, so the
 * window doubles whatever the receiver does. Two builds (congestion-control.sh):
 *   reno_2004  the 2004 growth in slow start and in congestion avoidance (one segment per two
 *              windows acknowledged);                       slow-start/
 *   reno_ss15  the 2004 growth in slow start only, -DSLOW_START_ONLY;   mixture-drops/
 * Loss response and undo are the kernel's Reno (its kfuncs). */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char _license[] SEC("license") = "GPL";

extern __u32 tcp_slow_start(struct tcp_sock *tp, __u32 acked) __ksym;
extern void tcp_cong_avoid_ai(struct tcp_sock *tp, __u32 w, __u32 acked) __ksym;
extern void tcp_reno_cong_avoid(struct sock *sk, __u32 ack, __u32 acked) __ksym;
extern __u32 tcp_reno_ssthresh(struct sock *sk) __ksym;
extern __u32 tcp_reno_undo_cwnd(struct sock *sk) __ksym;

/* Segments acknowledged in slow start and not yet turned into growth. */
struct pending_acks {
	__u32 segments;
};

static __always_inline struct pending_acks *pending_of(struct sock *sk)
{
	return (struct pending_acks *)((struct inet_connection_sock *)sk)->icsk_ca_priv;
}

SEC("struct_ops")
void BPF_PROG(r2004_init, struct sock *sk)
{
	pending_of(sk)->segments = 0;
}

SEC("struct_ops")
void BPF_PROG(r2004_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	struct tcp_sock *tp = (struct tcp_sock *)sk;
	struct pending_acks *pending = pending_of(sk);

	if (tp->snd_cwnd >= tp->snd_ssthresh) {
#ifdef SLOW_START_ONLY
		tcp_reno_cong_avoid(sk, ack, acked);
#else
		if (tp->is_cwnd_limited)       /* the kernel's tcp_is_cwnd_limited() */
			tcp_cong_avoid_ai(tp, 2 * tp->snd_cwnd, acked);
#endif
		return;
	}
	if (tp->snd_cwnd >= 2 * tp->max_packets_out)   /* tcp_is_cwnd_limited() in slow start */
		return;
	pending->segments += acked;
	__u32 grow = pending->segments / 2;
	pending->segments -= 2 * grow;
	if (grow)
		tcp_slow_start(tp, grow);
}

SEC("struct_ops")
__u32 BPF_PROG(r2004_ssthresh, struct sock *sk)
{
	return tcp_reno_ssthresh(sk);
}

SEC("struct_ops")
__u32 BPF_PROG(r2004_undo_cwnd, struct sock *sk)
{
	return tcp_reno_undo_cwnd(sk);
}

#ifdef SLOW_START_ONLY
#define CA_NAME reno_ss15
#else
#define CA_NAME reno_2004
#endif
#define TEXT(x) #x
#define NAME_TEXT(x) TEXT(x)

/* The map is named as the congestion control, so bpftool unregisters it by that name. */
SEC(".struct_ops")
struct tcp_congestion_ops CA_NAME = {
	.init = (void *)r2004_init,
	.cong_avoid = (void *)r2004_cong_avoid,
	.ssthresh = (void *)r2004_ssthresh,
	.undo_cwnd = (void *)r2004_undo_cwnd,
	.flags = 0x1,      /* TCP_CONG_NON_RESTRICTED: a network namespace may choose it */
	.name = NAME_TEXT(CA_NAME),
};
