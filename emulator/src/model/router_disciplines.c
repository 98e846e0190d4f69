/* The table of queue disciplines, built from router_table.def. */
#include "router_discipline.h"

#include <stdio.h>
#include <string.h>

#define SQ_DISCIPLINE(ENUM, name) extern const struct sq_router_discipline sq_##name##_ops;
#include "router_table.def"
#undef SQ_DISCIPLINE

static const struct sq_router_discipline *const table[SQ_QDISCS] = {
#define SQ_DISCIPLINE(ENUM, name) [SQ_QDISC_##ENUM] = &sq_##name##_ops,
#include "router_table.def"
#undef SQ_DISCIPLINE
};

const struct sq_router_discipline *sq_router_discipline(enum sq_qdisc d)
{
	return (unsigned)d < SQ_QDISCS ? table[d] : NULL;
}

bool sq_router_discipline_named(const char *name, enum sq_qdisc *out)
{
	for (unsigned d = 0; d < SQ_QDISCS; d++) {
		if (strcmp(table[d]->name, name) == 0) {
			*out = (enum sq_qdisc)d;
			return true;
		}
	}
	return false;
}

size_t sq_router_discipline_names(char *out, size_t n, const char *quote, const char *last,
				  int in_bytes)
{
	size_t count = 0, len = 0;
	out[0] = '\0';
	for (unsigned d = 0; d < SQ_QDISCS; d++)
		count += in_bytes < 0 || table[d]->limit_in_bytes == (in_bytes == 1);
	for (unsigned d = 0, i = 0; d < SQ_QDISCS && len < n; d++) {
		if (in_bytes >= 0 && table[d]->limit_in_bytes != (in_bytes == 1))
			continue;
		const char *sep = i == 0 ? "" : i + 1 == count ? last : ", ";
		int k = snprintf(out + len, n - len, "%s%s%s%s", sep, quote, table[d]->name, quote);
		if (k < 0)
			break;
		len += (size_t)k;
		i++;
	}
	return count;
}
