#include "timeline.h"

#include <inttypes.h>

#include "cell_config.h"
#include "channel.h"
#include "link_model.h"

/* Host `host`'s periods; `cell` adds its number (1-based) to each line. */
static bool print_host(const struct sq_emu_config *cfg, uint32_t host, bool cell, sq_time_us duration,
		       FILE *out, char *err, size_t errlen)
{
	struct sq_channel *ch = sq_channel_new_host(sq_host_channel(&cfg->link, host), cfg->link.seed,
						    cfg->link.replication, host, err, errlen);
	if (!ch)
		return false;
	for (sq_time_us t = 0; t < duration && t != SQ_TIME_NEVER;) {
		struct sq_channel_segment seg = sq_channel_segment_at(ch, t);
		fprintf(out, "%" PRId64 " %s", seg.start, sq_state_name(seg.state));
		if (cell)
			fprintf(out, " %" PRIu32, host + 1);
		fputc('\n', out);
		t = seg.end;
	}
	sq_channel_free(ch);
	return true;
}

bool sq_print_timeline(const struct sq_emu_config *cfg, sq_time_us duration, FILE *out,
		       char *err, size_t errlen)
{
	uint32_t hosts = sq_cell_hosts(&cfg->link);
	for (uint32_t h = 0; h < hosts; h++)
		if (!print_host(cfg, h, hosts > 1, duration, out, err, errlen))
			return false;
	return true;
}
