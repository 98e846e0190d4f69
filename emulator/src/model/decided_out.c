/* The bounded, sorted list that sq_model_decided_outs fills. Entries of an in-order
 * direction come in out order (each insert is an append); out of order they come in
 * transmission order, which is nearly out order, so the insertion walks back a few places. */
#include "decided_out.h"

bool sq_decided_before(const struct sq_decided_out *a, const struct sq_decided_out *b)
{
	if (a->t != b->t)
		return a->t < b->t;
	return a->order < b->order;
}

void sq_decided_insert(struct sq_decided_out *list, size_t *n, size_t cap,
		       const struct sq_decided_out *e)
{
	size_t i = *n;
	if (i == cap) {
		if (cap == 0 || !sq_decided_before(e, &list[cap - 1]))
			return;
		i--;   /* the last entry makes room */
	} else {
		(*n)++;
	}
	while (i > 0 && sq_decided_before(e, &list[i - 1])) {
		list[i] = list[i - 1];
		i--;
	}
	list[i] = *e;
}
