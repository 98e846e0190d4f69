#include "action_heap.h"

#include <stdlib.h>

void sq_heap_init(struct sq_action_heap *h)
{
	h->a = NULL;
	h->len = h->cap = 0;
}

void sq_heap_release(struct sq_action_heap *h)
{
	free(h->a);
	sq_heap_init(h);
}

static bool before(const struct sq_action *x, const struct sq_action *y)
{
	if (x->t != y->t)
		return x->t < y->t;
	if (x->phase != y->phase)
		return x->phase < y->phase;
	if (x->dir != y->dir)
		return x->dir < y->dir;
	if (x->host != y->host)
		return x->host < y->host;
	return x->seq < y->seq;
}

static void swap(struct sq_action *x, struct sq_action *y)
{
	struct sq_action tmp = *x;
	*x = *y;
	*y = tmp;
}

bool sq_heap_reserve(struct sq_action_heap *h, size_t n)
{
	if (n <= h->cap)
		return true;
	size_t cap = h->cap ? h->cap : 64;
	while (cap < n)
		cap *= 2;
	struct sq_action *a = realloc(h->a, cap * sizeof *a);
	if (!a)
		return false;
	h->a = a;
	h->cap = cap;
	return true;
}

bool sq_heap_push(struct sq_action_heap *h, struct sq_action act)
{
	if (!sq_heap_reserve(h, h->len + 1))
		return false;
	size_t i = h->len++;
	h->a[i] = act;
	while (i > 0 && before(&h->a[i], &h->a[(i - 1) / 2])) {
		swap(&h->a[i], &h->a[(i - 1) / 2]);
		i = (i - 1) / 2;
	}
	return true;
}

struct sq_action sq_heap_pop(struct sq_action_heap *h)
{
	struct sq_action top = h->a[0];
	h->a[0] = h->a[--h->len];
	size_t i = 0;
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i;
		if (l < h->len && before(&h->a[l], &h->a[m]))
			m = l;
		if (r < h->len && before(&h->a[r], &h->a[m]))
			m = r;
		if (m == i)
			break;
		swap(&h->a[i], &h->a[m]);
		i = m;
	}
	return top;
}
