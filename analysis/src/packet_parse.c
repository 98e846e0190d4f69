#include "packet_parse.h"

#include <string.h>

#define ETHERTYPE_IPV4 0x0800
#define ETHERTYPE_IPV6 0x86dd
#define ETHERTYPE_VLAN 0x8100
#define ETHERTYPE_QINQ 0x88a8

#define PROTO_ICMP 1
#define PROTO_TCP 6
#define PROTO_UDP 17
#define PROTO_ICMP6 58

/* A bounded view of the frame: every read goes through these. */
struct span {
	const uint8_t *p;
	uint32_t len;
};

static uint16_t be16(const uint8_t *p) { return (uint16_t)(p[0] << 8 | p[1]); }
static uint32_t be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

bool sq_linktype_supported(int linktype)
{
	switch (linktype) {
	case SQ_DLT_NULL: case SQ_DLT_EN10MB: case SQ_DLT_RAW: case SQ_DLT_RAW_BSD:
	case SQ_DLT_RAW_LINKTYPE: case SQ_DLT_LINUX_SLL: case SQ_DLT_IPV4: case SQ_DLT_IPV6:
	case SQ_DLT_LINUX_SLL2:
		return true;
	default:
		return false;
	}
}

/* IP version from the first nibble, for link types that carry bare IP. */
static int raw_ip_version(struct span f)
{
	return f.len >= 1 ? f.p[0] >> 4 : 0;
}

static int ethertype_version(uint16_t ethertype)
{
	if (ethertype == ETHERTYPE_IPV4)
		return 4;
	if (ethertype == ETHERTYPE_IPV6)
		return 6;
	return 0;
}

static int ethernet_version(struct span f, uint32_t *off)
{
	uint32_t o = 12;
	if (f.len < o + 2)
		return 0;
	uint16_t type = be16(f.p + o);
	for (int tags = 0; tags < 2 && (type == ETHERTYPE_VLAN || type == ETHERTYPE_QINQ); tags++) {
		o += 4;
		if (f.len < o + 2)
			return 0;
		type = be16(f.p + o);
	}
	*off = o + 2;
	return ethertype_version(type);
}

/* BSD loopback: a 4-byte address family in the capturing host's byte order. */
static int null_version(struct span f)
{
	if (f.len < 4)
		return 0;
	uint32_t le = (uint32_t)f.p[0] | (uint32_t)f.p[1] << 8;
	uint32_t be = (uint32_t)f.p[3] | (uint32_t)f.p[2] << 8;
	uint32_t af = le ? le : be;
	if (af == 2)
		return 4;
	if (af == 10 || af == 24 || af == 28 || af == 30)
		return 6;
	return 0;
}

/* Finds the network header: returns the IP version (0 = not IP), sets *off. */
static int locate_network(int linktype, struct span f, uint32_t *off)
{
	*off = 0;
	switch (linktype) {
	case SQ_DLT_EN10MB:
		return ethernet_version(f, off);
	case SQ_DLT_LINUX_SLL:
		*off = 16;
		return f.len >= 16 ? ethertype_version(be16(f.p + 14)) : 0;
	case SQ_DLT_LINUX_SLL2:
		*off = 20;
		return f.len >= 20 ? ethertype_version(be16(f.p)) : 0;
	case SQ_DLT_NULL:
		*off = 4;
		return null_version(f);
	case SQ_DLT_RAW: case SQ_DLT_RAW_BSD: case SQ_DLT_RAW_LINKTYPE:
	case SQ_DLT_IPV4: case SQ_DLT_IPV6:
		return raw_ip_version(f);
	default:
		return 0;
	}
}

static void parse_tcp_options(const uint8_t *o, uint32_t len, struct sq_packet_record *rec)
{
	uint32_t i = 0;
	while (i < len) {
		uint8_t kind = o[i];
		if (kind == 0)
			return;
		if (kind == 1) {
			i++;
			continue;
		}
		if (i + 1 >= len || o[i + 1] < 2 || i + o[i + 1] > len)
			return;   /* malformed option list: keep what was read so far */
		uint8_t olen = o[i + 1];
		const uint8_t *v = o + i + 2;
		if (kind == 2 && olen == 4)
			rec->mss = be16(v);
		else if (kind == 3 && olen == 3)
			rec->wscale = v[0];
		else if (kind == 4 && olen == 2)
			rec->status |= SQ_REC_SACK_OK;
		else if (kind == 8 && olen == 10) {
			rec->status |= SQ_REC_TCP_TS;
			rec->ts_val = be32(v);
			rec->ts_ecr = be32(v + 4);
		} else if (kind == 5 && olen >= 10 && (olen - 2) % 8 == 0) {
			uint32_t n = (uint32_t)(olen - 2) / 8;
			for (uint32_t b = 0; b < n && b < SQ_RECORD_SACK_MAX; b++) {
				rec->sack[2 * b] = be32(v + 8 * b);
				rec->sack[2 * b + 1] = be32(v + 8 * b + 4);
			}
			rec->n_sack = (uint8_t)(n < SQ_RECORD_SACK_MAX ? n : SQ_RECORD_SACK_MAX);
		}
		i += olen;
	}
}

static void copy_head(struct span t, uint32_t hdr_len, uint32_t payload_len,
		      struct sq_packet_record *rec)
{
	if (t.len <= hdr_len)
		return;
	uint32_t n = t.len - hdr_len;
	if (n > payload_len)
		n = payload_len;   /* Ethernet padding is not payload */
	if (n > SQ_RECORD_HEAD_LEN)
		n = SQ_RECORD_HEAD_LEN;
	memcpy(rec->head, t.p + hdr_len, n);
	rec->head_len = (uint16_t)n;
}

/* t: the transport header onward (captured part); l4_len: its length per the IP header. */
static void parse_tcp(struct span t, uint32_t l4_len, struct sq_packet_record *rec)
{
	if (t.len < 20) {
		rec->status |= SQ_REC_L4_TRUNCATED;
		return;
	}
	rec->sport = be16(t.p);
	rec->dport = be16(t.p + 2);
	rec->tcp_seq = be32(t.p + 4);
	rec->tcp_ack = be32(t.p + 8);
	rec->tcp_flags = t.p[13];
	rec->window = be16(t.p + 14);
	uint32_t doff = (uint32_t)(t.p[12] >> 4) * 4;
	if (doff < 20 || doff > l4_len) {
		rec->status |= SQ_REC_L4_TRUNCATED;
		return;
	}
	rec->payload_len = l4_len - doff;
	if (t.len < doff) {
		rec->status |= SQ_REC_L4_TRUNCATED;
		return;
	}
	parse_tcp_options(t.p + 20, doff - 20, rec);
	copy_head(t, doff, rec->payload_len, rec);
}

static void parse_udp(struct span t, uint32_t l4_len, struct sq_packet_record *rec)
{
	if (t.len < 8 || l4_len < 8) {
		rec->status |= SQ_REC_L4_TRUNCATED;
		return;
	}
	rec->sport = be16(t.p);
	rec->dport = be16(t.p + 2);
	uint32_t ulen = be16(t.p + 4);
	/* The UDP length field wins when consistent; IP says how much is really there. */
	rec->payload_len = (ulen >= 8 && ulen <= l4_len ? ulen : l4_len) - 8;
	copy_head(t, 8, rec->payload_len, rec);
}

static void parse_icmp(struct span t, uint32_t l4_len, struct sq_packet_record *rec)
{
	if (t.len < 4 || l4_len < 4) {
		rec->status |= SQ_REC_L4_TRUNCATED;
		return;
	}
	rec->icmp_type = t.p[0];
	rec->icmp_code = t.p[1];
	rec->payload_len = l4_len >= 8 ? l4_len - 8 : 0;
	/* an error's quoted datagram: an IPv4 header of 20 bytes and its ports fit in head[] */
	copy_head(t, 8, rec->payload_len, rec);
}

static void parse_transport(struct span t, uint32_t l4_len, struct sq_packet_record *rec)
{
	switch (rec->proto) {
	case PROTO_TCP:
		parse_tcp(t, l4_len, rec);
		break;
	case PROTO_UDP:
		parse_udp(t, l4_len, rec);
		break;
	case PROTO_ICMP: case PROTO_ICMP6:
		parse_icmp(t, l4_len, rec);
		break;
	default:
		rec->payload_len = l4_len;
		break;
	}
}

static struct span tail(struct span s, uint32_t off)
{
	return off <= s.len ? (struct span){ s.p + off, s.len - off } : (struct span){ s.p, 0 };
}

static void parse_ipv4(struct span ip, struct sq_packet_record *rec)
{
	rec->ip_version = 4;
	if (ip.len < 20 || (ip.p[0] >> 4) != 4) {
		rec->status |= SQ_REC_IP_MALFORMED;
		return;
	}
	uint32_t ihl = (uint32_t)(ip.p[0] & 0x0f) * 4;
	rec->tos = ip.p[1];
	rec->ip_len = be16(ip.p + 2);
	rec->ip_id = be16(ip.p + 4);
	rec->ttl = ip.p[8];
	rec->proto = ip.p[9];
	memcpy(rec->src, ip.p + 12, 4);
	memcpy(rec->dst, ip.p + 16, 4);
	if (ihl < 20 || rec->ip_len < ihl || ip.len < ihl) {
		rec->status |= SQ_REC_IP_MALFORMED;
		return;
	}
	if ((be16(ip.p + 6) & 0x1fff) != 0) {
		rec->status |= SQ_REC_FRAGMENT;
		return;
	}
	parse_transport(tail(ip, ihl), rec->ip_len - ihl, rec);
}

static bool ipv6_extension(uint8_t next)
{
	return next == 0 || next == 43 || next == 60 || next == 51;
}

static void parse_ipv6(struct span ip, struct sq_packet_record *rec)
{
	rec->ip_version = 6;
	if (ip.len < 40 || (ip.p[0] >> 4) != 6) {
		rec->status |= SQ_REC_IP_MALFORMED;
		return;
	}
	rec->tos = (uint8_t)((be16(ip.p) >> 4) & 0xff);
	uint32_t plen = be16(ip.p + 4);
	rec->ip_len = 40 + plen;
	uint8_t next = ip.p[6];
	rec->ttl = ip.p[7];
	memcpy(rec->src, ip.p + 8, 16);
	memcpy(rec->dst, ip.p + 24, 16);
	uint32_t off = 40;
	for (int hops = 0; hops < 8; hops++) {
		if (next == 44) {   /* fragment header */
			if (ip.len < off + 8 || off + 8 > rec->ip_len)
				goto malformed;
			rec->ip_id = be32(ip.p + off + 4);
			if ((be16(ip.p + off + 2) & 0xfff8) != 0) {
				rec->proto = ip.p[off];
				rec->status |= SQ_REC_FRAGMENT;
				return;
			}
			next = ip.p[off];
			off += 8;
		} else if (ipv6_extension(next)) {
			if (ip.len < off + 2)
				goto malformed;
			uint32_t len = next == 51 ? ((uint32_t)ip.p[off + 1] + 2) * 4
						  : ((uint32_t)ip.p[off + 1] + 1) * 8;
			next = ip.p[off];
			off += len;
			if (off > rec->ip_len)
				goto malformed;
		} else {
			break;
		}
	}
	rec->proto = next;
	parse_transport(tail(ip, off), rec->ip_len - off, rec);
	return;
malformed:
	rec->status |= SQ_REC_IP_MALFORMED;
}

void sq_parse_frame(int linktype, const uint8_t *frame, uint32_t caplen,
		    struct sq_packet_record *rec)
{
	memset(rec->src, 0, sizeof rec->src);
	memset(rec->dst, 0, sizeof rec->dst);
	memset(rec->sack, 0, sizeof rec->sack);
	memset(rec->head, 0, sizeof rec->head);
	rec->ip_len = rec->payload_len = rec->ip_id = 0;
	rec->tcp_seq = rec->tcp_ack = rec->ts_val = rec->ts_ecr = 0;
	rec->sport = rec->dport = rec->window = rec->mss = 0;
	rec->ip_version = rec->proto = rec->tcp_flags = rec->tos = rec->ttl = 0;
	rec->wscale = 0xff;
	rec->n_sack = rec->status = rec->icmp_type = rec->icmp_code = 0;
	rec->head_len = 0;
	rec->reserved = 0;

	struct span f = { frame, caplen };
	uint32_t off = 0;
	int version = locate_network(linktype, f, &off);
	struct span ip = tail(f, off);
	if (version == 4)
		parse_ipv4(ip, rec);
	else if (version == 6)
		parse_ipv6(ip, rec);
	else
		rec->status |= SQ_REC_NOT_IP;
}
