#include "event_log.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "config_write.h"
#include "log_writer.h"

/* Each full buffer is copied into the writer thread's ring (log_writer.h):
 * 8 KB keeps each copy around a microsecond on the event loop's path. */
#define LOG_BUFFER (8u << 10)

bool sq_event_log_open(struct sq_event_log *log, const char *path, char *err, size_t errlen)
{
	memset(log, 0, sizeof(*log));
	log->f = sq_log_writer_open(path, &log->writer, err, errlen);
	if (!log->f)
		return false;
	log->buffer = malloc(LOG_BUFFER);
	if (log->buffer)
		setvbuf(log->f, log->buffer, _IOFBF, LOG_BUFFER);
	return true;
}

void sq_event_log_prestart(struct sq_event_log *log, int64_t mono_ns, const char *note)
{
	if (log->pre_len == log->pre_cap) {
		size_t cap = log->pre_cap ? log->pre_cap * 2 : 16;
		struct sq_prestart_event *bigger = realloc(log->pre, cap * sizeof(*bigger));
		if (!bigger) {
			log->write_failed = true;
			return;
		}
		log->pre = bigger;
		log->pre_cap = cap;
	}
	struct sq_prestart_event *e = &log->pre[log->pre_len++];
	e->mono_ns = mono_ns;
	snprintf(e->note, sizeof(e->note), "%s", note);
}

/* Floor division, so an event 1 ns before t = 0 is at -1 µs. */
static int64_t floor_us(int64_t ns)
{
	return ns >= 0 ? ns / 1000 : -((-ns + 999) / 1000);
}

void sq_event_log_header(struct sq_event_log *log, const struct sq_emu_config *cfg, bool started,
			 int64_t origin_ns, int64_t origin_realtime_us)
{
	FILE *f = log->f;
	fputs("# squall-emulator event log\n# format 1\n", f);
	fprintf(f, "# seed %" PRIu64 "\n# replication %" PRIu32 "\n", cfg->link.seed, cfg->link.replication);
	fprintf(f, "# started %s\n# start_realtime_us %" PRId64 "\n", started ? "yes" : "no", origin_realtime_us);
	sq_config_write(cfg, f, "# config ");
	log->cell = cfg->link.cell.hosts > 1;
	fputs("# columns time_us event dir pkt_id ip_len state attempt sbuf rbuf proto src sport "
	      "dst dport ip_id tcp_seq tcp_ack tcp_flags payload_len note", f);
	fputs(log->cell ? " host\n" : "\n", f);
	log->header_written = true;
	for (size_t i = 0; i < log->pre_len; i++) {
		struct sq_log_record r = {
			.t = floor_us(log->pre[i].mono_ns - origin_ns),
			.event = "peer",
			.note = log->pre[i].note,
		};
		sq_event_log_write(log, &r);
	}
	free(log->pre);
	log->pre = NULL;
	log->pre_len = log->pre_cap = 0;
}

void sq_event_log_write(struct sq_event_log *log, const struct sq_log_record *r)
{
	char line[SQ_LOG_LINE_MAX];
	struct sq_log_record row = *r;
	row.host_column = log->cell;
	size_t n = sq_log_format(&row, line, sizeof(line));
	if (fwrite_unlocked(line, 1, n, log->f) != n)
		log->write_failed = true;
}

/* label: "counters down", "host_counters 2 up" */
static void print_counters(FILE *out, const char *prefix, const char *label, const uint64_t *c)
{
	fprintf(out, "%s%s", prefix, label);
	/* state is counted on a line of its own; the netem stage's events only when there were any */
	for (int e = 0; e < SQ_EV_TYPES; e++)
		if (e != SQ_EV_STATE && (e < SQ_EV_DROP_LOSS || c[e] > 0))
			fprintf(out, " %s %" PRIu64, sq_event_name((enum sq_event_type)e), c[e]);
	fputc('\n', out);
}

void sq_log_totals_print(FILE *out, const struct sq_log_totals *t, const char *prefix)
{
	fprintf(out, "%send time_us %" PRId64 " reason %s%s%s\n", prefix, t->end_us, t->end_reason,
		t->end_by ? " " : "", t->end_by ? t->end_by : "");
	print_counters(out, prefix, "counters down", t->counters[SQ_DOWN]);
	print_counters(out, prefix, "counters up", t->counters[SQ_UP]);
	for (uint32_t h = 0; t->hosts > 1 && h < t->hosts && h < SQ_CELL_MAX_HOSTS; h++) {
		for (int d = 0; d < SQ_DIRS; d++) {
			char label[48];
			snprintf(label, sizeof label, "host_counters %" PRIu32 " %s", h + 1, sq_dir_name((enum sq_dir)d));
			print_counters(out, prefix, label, t->host_counters[h][d]);
		}
	}
	fprintf(out, "%sstate_changes %" PRIu64 "\n", prefix,
		t->counters[SQ_DOWN][SQ_EV_STATE] + t->counters[SQ_UP][SQ_EV_STATE]);
	for (int d = 0; d < SQ_DIRS; d++) {
		const struct sq_router_totals *r = &t->router[d];
		for (size_t c = 0; c < r->n; c++) {
			const struct sq_router_class_stats *st = &r->stats[c];
			fprintf(out, "%srouter %s %s arrivals %" PRIu64 " enqueued %" PRIu64 " drops %" PRIu64
				" tail_drops %" PRIu64 " red_drops %" PRIu64 " dequeue_drops %" PRIu64 " marks %" PRIu64
				" backlog_pkts %" PRIu64 " backlog_bytes %" PRIu64 "\n", prefix,
				sq_dir_name((enum sq_dir)d), r->name[c], st->arrivals, st->enqueued, st->drops,
				st->tail_drops, st->red_drops, st->dequeue_drops, st->marks,
				st->backlog_pkts, st->backlog_bytes);
		}
	}
	fprintf(out, "%spending %" PRIu64 "\n", prefix, t->pending);
	fprintf(out, "%sundeliverable down %" PRIu64 " up %" PRIu64 " send_errors %" PRIu64 "\n", prefix,
		t->undeliverable[SQ_DOWN], t->undeliverable[SQ_UP], t->send_errors);
	fprintf(out, "%srejected", prefix);
	for (int r = 0; r < SQ_REJECT_REASONS; r++)
		fprintf(out, " %s %" PRIu64, sq_reject_name((enum sq_reject)r), t->rejected[r]);
	fputc('\n', out);
	fprintf(out, "%scontrol start %" PRIu64 " stop %" PRIu64 " refused %" PRIu64 " bad_command %" PRIu64 "\n",
		prefix, t->control.start, t->control.stop, t->control.refused, t->control.bad_command);
	const struct sq_lateness *l = t->lateness;
	fprintf(out, "%slateness_us n %" PRIu64 " p50 %" PRIu64 " p99 %" PRIu64 " max %" PRIu64
		" early %" PRIu64 "\n", prefix, l->count, sq_lateness_quantile_us(l, 0.50),
		sq_lateness_quantile_us(l, 0.99), sq_lateness_max_us(l), l->early);
	const struct sq_log_writer_stats *w = &t->writer;
	fprintf(out, "%slog_writer ring_bytes %" PRIu64 " max_fill_bytes %" PRIu64 " waits %" PRIu64
		" wait_us %" PRIu64 "\n", prefix, w->ring_bytes, w->max_fill_bytes, w->waits, w->wait_us);
	fprintf(out, "%sstandby cpu %d takeovers %" PRIu64 " locked_us %" PRIu64 " receiving_us %" PRIu64
		" sending_us %" PRIu64 "\n", prefix, t->standby_cpu, t->standby_takeovers, t->lock_use.held_ns / 1000,
		t->lock_use.receive_ns / 1000, t->lock_use.send_ns / 1000);
	fprintf(out, "%sarrival received %" PRIu64 " stamped %" PRIu64 " raised %" PRIu64 " lowered %" PRIu64 "\n",
		prefix, t->arrivals[SQ_ARRIVAL_RECEIVED], t->arrivals[SQ_ARRIVAL_STAMPED], t->arrivals[SQ_ARRIVAL_RAISED],
		t->arrivals[SQ_ARRIVAL_LOWERED]);
	fprintf(out, "%ssent_ahead down %" PRIu64 " up %" PRIu64 "\n", prefix, t->sent_ahead[SQ_DOWN],
		t->sent_ahead[SQ_UP]);
}

void sq_event_log_trailer(struct sq_event_log *log, const struct sq_log_totals *t)
{
	sq_log_totals_print(log->f, t, "# ");
}

bool sq_event_log_close(struct sq_event_log *log, char *err, size_t errlen)
{
	bool ok = !log->write_failed;
	if (log->f) {
		ok = !ferror(log->f) && ok;
		ok = fclose(log->f) == 0 && ok;
	}
	free(log->buffer);
	free(log->pre);
	memset(log, 0, sizeof(*log));
	if (!ok)
		snprintf(err, errlen, "log: writing failed (disk full?): the log is incomplete");
	return ok;
}
