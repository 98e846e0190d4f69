#include "dry_run.h"

#include <inttypes.h>

#include "cell_config.h"
#include "link_model.h"
#include "log_line.h"

struct printer {
	FILE *out;
	bool cell;   /* more than one host: a host column */
};

static void print_event(void *ctx, const struct sq_event *ev)
{
	const struct printer *pr = ctx;
	FILE *out = pr->out;
	char note[24];
	/* an outage's begin or end as the log writes it */
	const char *otherwise = ev->type == SQ_EV_OUTAGE ? sq_log_record_of_event(ev, NULL).note : NULL;
	const char *n = sq_log_event_note(ev, note, sizeof note, otherwise);
	fprintf(out, "%" PRId64 "\t%s\t%s\t%" PRIu64 "\t%" PRIu32 "\t%" PRIu32 "\t%s", ev->t,
		ev->type == SQ_EV_STATE ? "-" : sq_dir_name(ev->dir), sq_event_name(ev->type), ev->pkt_id,
		ev->ip_len, ev->attempt, n ? n : "-");
	if (pr->cell)
		fprintf(out, "\t%" PRIu32 "\n", ev->host + 1);
	else
		fputc('\n', out);
}

bool sq_print_packets(const struct sq_emu_config *cfg, uint64_t count, FILE *out, char *err,
		      size_t errlen)
{
	uint32_t hosts = sq_cell_hosts(&cfg->link);
	struct printer pr = { .out = out, .cell = hosts > 1 };
	struct sq_model *m = sq_model_new(&cfg->link, print_event, &pr, err, errlen);
	if (!m)
		return false;
	for (uint64_t i = 0; i < count; i++) {
		for (int d = 0; d < SQ_DIRS; d++) {
			for (uint32_t h = 0; h < hosts; h++) {
				struct sq_pkt_meta meta = { .ip_len = sq_host_direction(&cfg->link, h, (enum sq_dir)d).mtu };
				if (sq_model_arrive_host(m, h, (enum sq_dir)d, (sq_time_us)i * SQ_DRY_RUN_SPACING_US,
							 &meta, NULL) == 0) {
					snprintf(err, errlen, "out of memory after %" PRIu64 " packets", i);
					sq_model_free(m);
					return false;
				}
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
