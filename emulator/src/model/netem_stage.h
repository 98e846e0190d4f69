/* A direction's netem stage: netem's per-packet models drawn from the direction's own
 * streams, one per purpose (LINK_MODEL.md "The netem stage", docs/netem.md).
 *
 * At the entry (after the MTU check, in arrival order): duplication, loss, corruption,
 * as netem's enqueue decides them. At the exit (in the order packets' successful
 * attempts are drawn): netem's delay line, with jitter and reordering. */
#ifndef SQ_NETEM_STAGE_H
#define SQ_NETEM_STAGE_H

#include <stdbool.h>
#include <stdint.h>

#include "link_config.h"
#include "netem_delay.h"
#include "netem_loss.h"
#include "netem_rand.h"

/* What the entry decided for one packet. */
struct sq_netem_entry {
	bool lost;             /* drop_loss */
	bool duplicate;        /* a copy enters right after it */
	bool corrupt;
	uint32_t corrupt_bit;  /* 8 * byte offset + bit (0 = least significant) */
};

struct sq_netem_stage {
	bool enabled;
	struct sq_netem_chance duplicate, corrupt;
	struct sq_netem_loss loss;
	struct sq_netem_crand dup_src, corrupt_src;
	struct sq_netem_delay delay;
};

/* The stream of a purpose of a direction (LINK_MODEL.md "Random numbers"). */
enum sq_netem_purpose {
	SQ_NETEM_LOSS_STREAM = 0,
	SQ_NETEM_DUPLICATE_STREAM,
	SQ_NETEM_CORRUPT_STREAM,
	SQ_NETEM_JITTER_STREAM,
	SQ_NETEM_REORDER_STREAM,
};
uint32_t sq_netem_stream(enum sq_dir dir, enum sq_netem_purpose purpose);

void sq_netem_stage_init(struct sq_netem_stage *s, const struct sq_netem_config *c, uint64_t seed,
			 uint32_t replication, uint32_t host, enum sq_dir dir);

/* The entry's decisions for a packet of ip_len bytes; a copy is never duplicated again. */
void sq_netem_entry(struct sq_netem_stage *s, uint32_t ip_len, bool is_copy,
		    struct sq_netem_entry *out);

/* The exit: netem's delay of the next packet leaving the link (0 without a stage). */
int64_t sq_netem_exit_delay(struct sq_netem_stage *s, bool *reordered);

#endif
