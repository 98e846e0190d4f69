#include "send_ahead.h"

#define PAGE 32   /* decided outs asked for at a time */

static const struct sq_decided_out *after(const struct sq_send_ahead *sa, uint32_t host, enum sq_dir dir)
{
	return sa->any[host][dir] ? &sa->last[host][dir] : NULL;
}

sq_time_us sq_send_ahead_next(const struct sq_send_ahead *sa, const struct sq_model *m,
			      uint32_t host, enum sq_dir dir)
{
	struct sq_decided_out first;
	if (sq_model_host_decided_outs(m, host, dir, after(sa, host, dir), SQ_TIME_NEVER, &first, 1) == 0)
		return SQ_TIME_NEVER;
	return first.t;
}

void sq_send_ahead_run(struct sq_send_ahead *sa, const struct sq_model *m, uint32_t host,
		       enum sq_dir dir, sq_time_us until, sq_send_ahead_fn send, void *ctx)
{
	struct sq_decided_out page[PAGE];
	size_t n;
	do {
		n = sq_model_host_decided_outs(m, host, dir, after(sa, host, dir), until, page, PAGE);
		for (size_t i = 0; i < n; i++)
			send(ctx, host, dir, &page[i]);
		if (n > 0) {
			sa->last[host][dir] = page[n - 1];
			sa->any[host][dir] = true;
			sa->sent[dir] += n;
		}
	} while (n == PAGE);
}
