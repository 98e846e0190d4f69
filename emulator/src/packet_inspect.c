#include "packet_inspect.h"

#include <stdio.h>
#include <string.h>

enum {
	PROTO_HOPOPTS = 0, PROTO_ICMP = 1, PROTO_TCP = 6, PROTO_UDP = 17, PROTO_ROUTING = 43,
	PROTO_FRAGMENT = 44, PROTO_AH = 51, PROTO_ICMP6 = 58, PROTO_DSTOPTS = 60,
};

static uint16_t get16(const uint8_t *p) { return (uint16_t)(p[0] << 8 | p[1]); }
static uint32_t get32(const uint8_t *p) { return (uint32_t)get16(p) << 16 | get16(p + 2); }

/* Reads TCP/UDP fields from the transport segment t of tlen bytes. */
static void inspect_transport(const uint8_t *t, size_t tlen, struct sq_pkt_identity *id,
			      struct sq_pkt_meta *meta)
{
	if (id->proto != PROTO_TCP && id->proto != PROTO_UDP)
		return;
	if (tlen >= 4) {
		id->has_ports = true;
		id->sport = meta->sport = get16(t);
		id->dport = meta->dport = get16(t + 2);
	}
	if (id->proto == PROTO_UDP && tlen >= 8) {
		id->has_payload_len = true;
		id->payload_len = (uint32_t)(tlen - 8);
	}
	if (id->proto == PROTO_TCP && tlen >= 20) {
		size_t doff = (size_t)(t[12] >> 4) * 4;
		id->has_tcp = true;
		id->tcp_seq = get32(t + 4);
		id->tcp_ack = get32(t + 8);
		id->tcp_flags = t[13];
		if (doff >= 20 && doff <= tlen) {
			id->has_payload_len = true;
			id->payload_len = (uint32_t)(tlen - doff);
		}
	}
}

static bool inspect_ipv4(const uint8_t *p, size_t len, struct sq_pkt_meta *meta,
			 struct sq_pkt_identity *id)
{
	size_t ihl = (size_t)(p[0] & 0x0f) * 4;
	if (len < 20 || ihl < 20 || ihl > len || get16(p + 2) != len)
		return false;
	id->family = 4;
	meta->dscp = p[1] >> 2;
	meta->ecn = p[1] & 3;
	id->has_ip_id = true;
	id->ip_id = get16(p + 4);
	id->proto = meta->proto = p[9];
	memcpy(id->src, p + 12, 4);
	memcpy(id->dst, p + 16, 4);
	memcpy(meta->src, p + 12, 4);
	memcpy(meta->dst, p + 16, 4);
	bool first_fragment = (get16(p + 6) & 0x1fff) == 0;
	if (first_fragment)
		inspect_transport(p + ihl, len - ihl, id, meta);
	return true;
}

/* Skips IPv6 extension headers; returns the offset of the transport header, or
 * 0 if there is none to read (non-first fragment, truncated chain). */
static size_t skip_ipv6_extensions(const uint8_t *p, size_t len, uint8_t *next)
{
	size_t off = 40;
	for (;;) {
		size_t hlen;
		switch (*next) {
		case PROTO_HOPOPTS:
		case PROTO_ROUTING:
		case PROTO_DSTOPTS:
			if (off + 2 > len)
				return 0;
			hlen = ((size_t)p[off + 1] + 1) * 8;
			break;
		case PROTO_FRAGMENT:
			if (off + 8 > len)
				return 0;
			if ((get16(p + off + 2) & 0xfff8) != 0) {
				*next = p[off];   /* a later fragment: the protocol, but no header */
				return 0;
			}
			hlen = 8;
			break;
		case PROTO_AH:
			if (off + 2 > len)
				return 0;
			hlen = ((size_t)p[off + 1] + 2) * 4;
			break;
		default:
			return off;
		}
		if (off + hlen > len)
			return 0;
		*next = p[off];
		off += hlen;
	}
}

static bool inspect_ipv6(const uint8_t *p, size_t len, struct sq_pkt_meta *meta,
			 struct sq_pkt_identity *id)
{
	if (len < 40 || (size_t)get16(p + 4) + 40 != len)
		return false;
	id->family = 6;
	uint8_t tclass = (uint8_t)((p[0] & 0x0f) << 4 | p[1] >> 4);
	meta->dscp = tclass >> 2;
	meta->ecn = tclass & 3;
	memcpy(id->src, p + 8, 16);
	memcpy(id->dst, p + 24, 16);
	memcpy(meta->src, p + 8, 16);
	memcpy(meta->dst, p + 24, 16);
	uint8_t next = p[6];
	size_t off = skip_ipv6_extensions(p, len, &next);
	id->proto = meta->proto = next;
	if (off)
		inspect_transport(p + off, len - off, id, meta);
	return true;
}

bool sq_pkt_inspect(const uint8_t *pkt, size_t len, struct sq_pkt_meta *meta,
		    struct sq_pkt_identity *id)
{
	memset(meta, 0, sizeof(*meta));
	memset(id, 0, sizeof(*id));
	if (len < 1 || len > 65535)
		return false;
	meta->ip_len = (uint32_t)len;
	switch (pkt[0] >> 4) {
	case 4:
		return inspect_ipv4(pkt, len, meta, id);
	case 6:
		return inspect_ipv6(pkt, len, meta, id);
	default:
		return false;
	}
}

void sq_proto_name(uint8_t proto, char *out, size_t outlen)
{
	switch (proto) {
	case PROTO_TCP: snprintf(out, outlen, "tcp"); break;
	case PROTO_UDP: snprintf(out, outlen, "udp"); break;
	case PROTO_ICMP: snprintf(out, outlen, "icmp"); break;
	case PROTO_ICMP6: snprintf(out, outlen, "icmp6"); break;
	default: snprintf(out, outlen, "%u", proto); break;
	}
}
