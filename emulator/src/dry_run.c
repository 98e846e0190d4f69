#include "dry_run.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

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

static bool arrive(struct sq_model *m, uint32_t host, enum sq_dir dir, sq_time_us t,
		   const struct sq_pkt_meta *meta, uint64_t done, char *err, size_t errlen)
{
	if (sq_model_arrive_host(m, host, dir, t, meta, NULL) != 0)
		return true;
	snprintf(err, errlen, "out of memory after %" PRIu64 " packets", done);
	return false;
}

/* Until the last packet has left (the channel alone would go on for ever); frees m. */
static bool drain(struct sq_model *m, bool ok)
{
	while (ok && sq_model_pending(m) > 0) {
		sq_time_us next = sq_model_next_deadline(m);
		if (next == SQ_TIME_NEVER)
			break;
		sq_model_advance(m, next);
	}
	sq_model_free(m);
	return ok;
}

bool sq_print_packets(const struct sq_emu_config *cfg, uint64_t count, FILE *out, char *err,
		      size_t errlen)
{
	uint32_t hosts = sq_cell_hosts(&cfg->link);
	struct printer pr = { .out = out, .cell = hosts > 1 };
	struct sq_model *m = sq_model_new(&cfg->link, print_event, &pr, err, errlen);
	if (!m)
		return false;
	bool ok = true;
	uint64_t done = 0;
	for (uint64_t i = 0; ok && i < count; i++) {
		for (int d = 0; ok && d < SQ_DIRS; d++) {
			for (uint32_t h = 0; ok && h < hosts; h++) {
				struct sq_pkt_meta meta = { .ip_len = sq_host_direction(&cfg->link, h, (enum sq_dir)d).mtu };
				ok = arrive(m, h, (enum sq_dir)d, (sq_time_us)i * SQ_DRY_RUN_SPACING_US, &meta,
					    done++, err, errlen);
			}
		}
	}
	return drain(m, ok);
}

/* A whole decimal number of field in [0, max] into *v. */
static bool number(const char *field, unsigned long long max, unsigned long long *v)
{
	char *end;
	*v = strtoull(field, &end, 10);
	return field[0] >= '0' && field[0] <= '9' && !*end && *v <= max;
}

/* One line "t_us dir ip_len [ecn [flow]]" of a packet file into *t, *dir, *meta; false with
 * the reason in err. Flow F is a UDP packet from port F (addresses 0, to port 0). */
static bool parse_packet_line(char *line, sq_time_us last, sq_time_us *t, enum sq_dir *dir,
			      struct sq_pkt_meta *meta, char *err, size_t errlen)
{
	char *save = NULL, *field[6];
	int n = 0;
	for (char *tok = strtok_r(line, " \t\r\n", &save); tok && n < 6; tok = strtok_r(NULL, " \t\r\n", &save))
		field[n++] = tok;
	unsigned long long us, len, ecn = 0, flow = 0;
	if (n < 3 || n > 5 || !number(field[0], INT64_MAX / 2, &us) || (sq_time_us)us < last) {
		snprintf(err, errlen, "expected \"t_us dir ip_len [ecn [flow]]\" with t_us >= %lld", (long long)last);
		return false;
	}
	if (n == 5 && !number(field[4], UINT16_MAX, &flow)) {
		snprintf(err, errlen, "expected a flow number 0-65535");
		return false;
	}
	bool dir_ok = strcmp(field[1], "down") == 0 || strcmp(field[1], "up") == 0;
	if (!dir_ok || !number(field[2], UINT32_MAX, &len) || len < 1 || (n >= 4 && !number(field[3], 3, &ecn))) {
		snprintf(err, errlen, "expected a direction down or up, ip_len >= 1 and an ECN field 0-3");
		return false;
	}
	*t = (sq_time_us)us;
	*dir = field[1][0] == 'd' ? SQ_DOWN : SQ_UP;
	*meta = (struct sq_pkt_meta){ .ip_len = (uint32_t)len, .ecn = (uint8_t)ecn };
	if (n == 5) {
		meta->proto = 17;
		meta->sport = (uint16_t)flow;
	}
	return true;
}

bool sq_print_packets_from(const struct sq_emu_config *cfg, FILE *in, const char *name, FILE *out,
			   char *err, size_t errlen)
{
	struct printer pr = { .out = out, .cell = sq_cell_hosts(&cfg->link) > 1 };
	struct sq_model *m = sq_model_new(&cfg->link, print_event, &pr, err, errlen);
	if (!m)
		return false;
	char line[256], why[160];
	sq_time_us last = 0;
	bool ok = true;
	for (uint64_t number = 1, done = 0; ok && fgets(line, sizeof line, in); number++) {
		if (line[0] == '#' || strspn(line, " \t\r\n") == strlen(line))
			continue;
		struct sq_pkt_meta meta;
		enum sq_dir dir;
		ok = parse_packet_line(line, last, &last, &dir, &meta, why, sizeof why);
		if (!ok)
			snprintf(err, errlen, "%s:%" PRIu64 ": %s", name, number, why);
		else
			ok = arrive(m, 0, dir, last, &meta, done++, err, errlen);
	}
	return drain(m, ok);
}
