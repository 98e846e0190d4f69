#include "log_line.h"

#include <arpa/inet.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/socket.h>

static bool event_has_attempt(enum sq_event_type t)
{
	return t == SQ_EV_TX || t == SQ_EV_HIT || t == SQ_EV_DROP_ERR || t == SQ_EV_RECV || t == SQ_EV_OUT;
}

struct sq_log_record sq_log_record_of_event(const struct sq_event *ev, const struct sq_pkt_identity *id)
{
	bool is_state = ev->type == SQ_EV_STATE;
	bool has_packet = ev->pkt_id != 0 && !is_state;
	struct sq_log_record r = {
		.t = ev->t,
		.event = sq_event_name(ev->type),
		.has_dir = !is_state,
		.dir = ev->dir,
		.pkt_id = has_packet ? ev->pkt_id : 0,
		.has_ip_len = has_packet,
		.ip_len = ev->ip_len,
		.has_state = true,
		.state = ev->state,
		.has_attempt = has_packet && event_has_attempt(ev->type),
		.attempt = ev->attempt,
		.has_buffers = !is_state,
		.sbuf = ev->sbuf,
		.rbuf = ev->rbuf,
		.id = has_packet ? id : NULL,
		.note = is_state ? sq_state_name(ev->state == SQ_GOOD ? SQ_BAD : SQ_GOOD) : NULL,
	};
	return r;
}

void sq_tcp_flags_text(uint8_t flags, char *out)
{
	static const char letters[] = "FSRPAUEC";
	size_t n = 0;
	for (int i = 0; i < 8; i++)
		if (flags & (1u << i))
			out[n++] = letters[i];
	if (n == 0)
		out[n++] = '.';
	out[n] = '\0';
}

/* A small appender that never overflows and remembers truncation. */
struct line {
	char *buf;
	size_t cap, len;
};

static void put(struct line *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void put(struct line *l, const char *fmt, ...)
{
	if (l->len >= l->cap)
		return;
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(l->buf + l->len, l->cap - l->len, fmt, ap);
	va_end(ap);
	if (n > 0)
		l->len += (size_t)n < l->cap - l->len ? (size_t)n : l->cap - l->len - 1;
}

static void put_u64(struct line *l, bool has, uint64_t v)
{
	if (has)
		put(l, "\t%" PRIu64, v);
	else
		put(l, "\t-");
}

static void put_addr(struct line *l, const struct sq_pkt_identity *id, const uint8_t *addr)
{
	char text[INET6_ADDRSTRLEN];
	if (!inet_ntop(id->family == 6 ? AF_INET6 : AF_INET, addr, text, sizeof(text)))
		put(l, "\t?");
	else
		put(l, "\t%s", text);
}

static void put_identity(struct line *l, const struct sq_pkt_identity *id)
{
	if (!id) {
		put(l, "\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-");
		return;
	}
	char proto[8], flags[9];
	sq_proto_name(id->proto, proto, sizeof(proto));
	put(l, "\t%s", proto);
	put_addr(l, id, id->src);
	put_u64(l, id->has_ports, id->sport);
	put_addr(l, id, id->dst);
	put_u64(l, id->has_ports, id->dport);
	put_u64(l, id->has_ip_id, id->ip_id);
	put_u64(l, id->has_tcp, id->tcp_seq);
	put_u64(l, id->has_tcp, id->tcp_ack);
	if (id->has_tcp) {
		sq_tcp_flags_text(id->tcp_flags, flags);
		put(l, "\t%s", flags);
	} else {
		put(l, "\t-");
	}
	put_u64(l, id->has_payload_len, id->payload_len);
}

size_t sq_log_format(const struct sq_log_record *r, char *out, size_t outlen)
{
	if (outlen < 2) {
		if (outlen)
			out[0] = '\0';
		return 0;
	}
	/* Reserve one byte so the newline always fits. */
	struct line l = { out, outlen - 1, 0 };
	put(&l, "%" PRId64 "\t%s", r->t, r->event);
	put(&l, "\t%s", r->has_dir ? sq_dir_name(r->dir) : "-");
	put_u64(&l, r->pkt_id != 0, r->pkt_id);
	put_u64(&l, r->has_ip_len, r->ip_len);
	put(&l, "\t%s", r->has_state ? sq_state_name(r->state) : "-");
	put_u64(&l, r->has_attempt, r->attempt);
	put_u64(&l, r->has_buffers, r->sbuf);
	put_u64(&l, r->has_buffers, r->rbuf);
	put_identity(&l, r->id);
	put(&l, "\t%s", r->note ? r->note : "-");
	out[l.len++] = '\n';
	out[l.len] = '\0';
	return l.len;
}
