/* libFuzzer target: any datagram through the wire decoder, the SP's
 * classification, packet inspection, log line formatting and the ECN rewrite.
 * Input: byte 0 = flags (bit 0 started, bit 1 from the router's address,
 * bit 2 from the mobile's, bit 3 a cell of 4 hosts whose log lines name the host), the rest
 * is the datagram. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include "ecn_mark.h"
#include "log_line.h"
#include "peers.h"

#define TOKEN 0x0123456789abcdefULL

static struct sockaddr_in address(uint16_t port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port) };
	a.sin_addr.s_addr = htonl(0xc6120001);
	return a;
}

static void format_packet(const struct sq_classified *c, bool cell)
{
	struct sq_event ev = { .t = 1, .type = SQ_EV_OUT, .pkt_id = 1, .ip_len = c->meta.ip_len,
			       .host = cell ? 3 : 0 };
	struct sq_log_record r = sq_log_record_of_event(&ev, &c->id);
	r.host_column = cell;
	char line[SQ_LOG_LINE_MAX];
	size_t n = sq_log_format(&r, line, sizeof(line));
	if (n == 0 || line[n - 1] != '\n')
		abort();
	/* The SP formats the identity once per packet and reuses the text: same line. */
	char id_text[SQ_LOG_ID_TEXT_MAX], again[SQ_LOG_LINE_MAX];
	r.id_text = id_text;
	r.id_text_len = sq_log_identity_text(&c->id, id_text, sizeof(id_text));
	if (sq_log_format(&r, again, sizeof(again)) != n || memcmp(line, again, n) != 0)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	uint8_t flags = data[0];
	/* An exactly sized copy so the sanitizer sees any overread. */
	size_t len = size - 1;
	uint8_t *buf = malloc(len ? len : 1);
	memcpy(buf, data + 1, len);

	struct sq_peers peers;
	memset(&peers, 0, sizeof(peers));
	bool cell = flags & 8;
	peers.hosts = cell ? 4 : 0;
	struct sockaddr_in router = address(40000), mobile = address(40001), other = address(40002);
	sq_peers_register(&peers, SQ_ROLE_ROUTER, (struct sockaddr *)&router, sizeof(router), 0);
	sq_peers_register(&peers, SQ_ROLE_MOBILE, (struct sockaddr *)&mobile, sizeof(mobile), 0);
	const struct sockaddr_in *from = flags & 2 ? &router : flags & 4 ? &mobile : &other;
	struct sq_datagram d = { .buf = buf, .len = len, .src = (const struct sockaddr *)from,
				 .src_len = sizeof(*from) };
	struct sq_classified c;
	sq_classify(&peers, TOKEN, flags & 1, &d, &c);
	if (c.action == SQ_ACT_DATA) {
		/* Accepted DATA must be a whole IP packet inside the datagram. */
		if (c.payload != buf + SQ_WIRE_HEADER_LEN || c.meta.ip_len != c.h.length ||
		    SQ_WIRE_HEADER_LEN + (size_t)c.h.length != len)
			abort();
		format_packet(&c, cell);
	}
	if (c.action == SQ_ACT_REJECT && (unsigned)c.reason >= SQ_REJECT_REASONS)
		abort();
	/* An accepted message is the router's or one of the cell's hosts'. */
	if (c.action != SQ_ACT_REJECT && (c.slot < SQ_ROLE_ROUTER || c.slot > sq_peers_last_slot(&peers)))
		abort();

	/* The whole input as an IP packet too. */
	struct sq_pkt_meta meta;
	if (sq_pkt_inspect(buf, len, &meta, &c.id)) {
		format_packet(&c, cell);
		sq_ecn_set_ce(buf, len);
		if (!sq_pkt_inspect(buf, len, &meta, &c.id))
			abort();   /* the ECN rewrite must keep the packet valid */
	}
	free(buf);
	return 0;
}
