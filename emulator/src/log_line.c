#include "log_line.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <sys/socket.h>

#include "text_append.h"

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
		.note = is_state ? sq_state_name(ev->state == SQ_GOOD ? SQ_BAD : SQ_GOOD)
			: ev->type == SQ_EV_OUTAGE ? (ev->outage ? "begin" : "end") : NULL,
		.host = ev->host + 1,
	};
	return r;
}

const char *sq_log_event_note(const struct sq_event *ev, char *buf, size_t len, const char *otherwise)
{
	if (ev->type == SQ_EV_CORRUPT)
		snprintf(buf, len, "bit=%u", ev->corrupt_bit);
	else if (ev->type == SQ_EV_DUPLICATE)
		snprintf(buf, len, "of=%llu", (unsigned long long)ev->copy_of);
	else
		return otherwise;
	return buf;
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

static void put_tab_u64(struct sq_text *l, bool has, uint64_t v)
{
	sq_text_put_char(l, '\t');
	if (has)
		sq_text_put_u64(l, v);
	else
		sq_text_put_char(l, '-');
}

static void put_tab_str(struct sq_text *l, const char *s)
{
	sq_text_put_char(l, '\t');
	sq_text_put_str(l, s);
}

static void put_addr(struct sq_text *l, const struct sq_pkt_identity *id, const uint8_t *addr)
{
	sq_text_put_char(l, '\t');
	if (id->family != 6) {
		sq_text_put_ipv4(l, addr);
		return;
	}
	char text[INET6_ADDRSTRLEN];
	sq_text_put_str(l, inet_ntop(AF_INET6, addr, text, sizeof(text)) ? text : "?");
}

static void put_identity(struct sq_text *l, const struct sq_pkt_identity *id)
{
	if (!id) {
		sq_text_put_str(l, "\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-");
		return;
	}
	char proto[8], flags[9];
	sq_proto_name(id->proto, proto, sizeof(proto));
	put_tab_str(l, proto);
	put_addr(l, id, id->src);
	put_tab_u64(l, id->has_ports, id->sport);
	put_addr(l, id, id->dst);
	put_tab_u64(l, id->has_ports, id->dport);
	put_tab_u64(l, id->has_ip_id, id->ip_id);
	put_tab_u64(l, id->has_tcp, id->tcp_seq);
	put_tab_u64(l, id->has_tcp, id->tcp_ack);
	if (id->has_tcp)
		sq_tcp_flags_text(id->tcp_flags, flags);
	put_tab_str(l, id->has_tcp ? flags : "-");
	put_tab_u64(l, id->has_payload_len, id->payload_len);
}

size_t sq_log_identity_text(const struct sq_pkt_identity *id, char *out, size_t outlen)
{
	if (outlen == 0)
		return 0;
	struct sq_text l = { out, outlen, 0 };
	put_identity(&l, id);
	out[l.len] = '\0';
	return l.len;
}

size_t sq_log_format(const struct sq_log_record *r, char *out, size_t outlen)
{
	if (outlen < 2) {
		if (outlen)
			out[0] = '\0';
		return 0;
	}
	/* Reserve one byte so the newline always fits. */
	struct sq_text l = { out, outlen - 1, 0 };
	sq_text_put_i64(&l, r->t);
	put_tab_str(&l, r->event);
	put_tab_str(&l, r->has_dir ? sq_dir_name(r->dir) : "-");
	put_tab_u64(&l, r->pkt_id != 0, r->pkt_id);
	put_tab_u64(&l, r->has_ip_len, r->ip_len);
	put_tab_str(&l, r->has_state ? sq_state_name(r->state) : "-");
	put_tab_u64(&l, r->has_attempt, r->attempt);
	put_tab_u64(&l, r->has_buffers, r->sbuf);
	put_tab_u64(&l, r->has_buffers, r->rbuf);
	if (r->id_text)
		sq_text_put(&l, r->id_text, r->id_text_len);
	else
		put_identity(&l, r->id);
	put_tab_str(&l, r->note ? r->note : "-");
	if (r->host_column)
		put_tab_u64(&l, r->host != 0, r->host);
	out[l.len++] = '\n';
	out[l.len] = '\0';
	return l.len;
}
