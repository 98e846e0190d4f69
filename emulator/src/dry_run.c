#include "dry_run.h"

#include <inttypes.h>

#include "link_model.h"
#include "log_line.h"

static void print_event(void *ctx, const struct sq_event *ev)
{
	FILE *out = ctx;
	char note[24];
	/* an outage's begin or end as the log writes it */
	const char *otherwise = ev->type == SQ_EV_OUTAGE ? sq_log_record_of_event(ev, NULL).note : NULL;
	const char *n = sq_log_event_note(ev, note, sizeof note, otherwise);
	fprintf(out, "%" PRId64 "\t%s\t%s\t%" PRIu64 "\t%" PRIu32 "\t%" PRIu32 "\t%s\n", ev->t,
		ev->type == SQ_EV_STATE ? "-" : sq_dir_name(ev->dir), sq_event_name(ev->type), ev->pkt_id,
		ev->ip_len, ev->attempt, n ? n : "-");
}

bool sq_print_packets(const struct sq_emu_config *cfg, uint64_t count, const uint8_t *ecn, size_t n_ecn,
		      FILE *out, char *err, size_t errlen)
{
	struct sq_model *m = sq_model_new(&cfg->link, print_event, out, err, errlen);
	if (!m)
		return false;
	for (uint64_t i = 0; i < count; i++) {
		for (int d = 0; d < SQ_DIRS; d++) {
			struct sq_pkt_meta meta = { .ip_len = cfg->link.dir[d].mtu, .ecn = ecn[i % n_ecn] };
			if (sq_model_arrive(m, (enum sq_dir)d, (sq_time_us)i * SQ_DRY_RUN_SPACING_US, &meta, NULL) == 0) {
				snprintf(err, errlen, "out of memory after %" PRIu64 " packets", i);
				sq_model_free(m);
				return false;
			}
		}
	}
	/* until the last packet has left; the channel alone would go on for ever */
	while (sq_model_pending(m) > 0) {
		sq_time_us next = sq_model_next_deadline(m);
		if (next == SQ_TIME_NEVER)
			break;
		sq_model_advance(m, next);
	}
	sq_model_free(m);
	return true;
}
