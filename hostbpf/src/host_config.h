/* What squall-hostbpf (hostbpf.c) writes into host_2004.bpf.c before loading it: the
 * program's only read-only global, so the object's .rodata is exactly this struct. */
#ifndef SQUALL_HOST_CONFIG_H
#define SQUALL_HOST_CONFIG_H

#include <linux/types.h>

struct host_config {
	__u64 netns_cookie;     /* the network namespace whose TCP sockets are changed */
	__u32 syn_rto_ms;       /* initial RTO of a SYN and a SYN-ACK; 0: the kernel's (1 s) */
	__u32 delack_max_ms;    /* the longest delayed-ACK timeout; 0: the kernel's (200 ms) */
};

#endif
