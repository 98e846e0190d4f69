#include "timeline.h"

#include <inttypes.h>

#include "channel.h"
#include "link_model.h"

bool sq_print_timeline(const struct sq_emu_config *cfg, sq_time_us duration, FILE *out,
		       char *err, size_t errlen)
{
	struct sq_channel *ch = sq_channel_new(&cfg->link.channel, cfg->link.seed,
					       cfg->link.replication, err, errlen);
	if (!ch)
		return false;
	for (sq_time_us t = 0; t < duration && t != SQ_TIME_NEVER;) {
		struct sq_channel_segment seg = sq_channel_segment_at(ch, t);
		fprintf(out, "%" PRId64 " %s\n", seg.start, sq_state_name(seg.state));
		t = seg.end;
	}
	sq_channel_free(ch);
	return true;
}
