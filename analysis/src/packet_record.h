/* One captured frame's headers as a fixed-size record (analysis/README.md,
 * "Packet records"). squall-capture-records writes a stream header followed by one
 * record per frame, in the host's byte order; analysis/read/pcap.py reads them with numpy,
 * so the layout here and the dtype there must change together (bump the version). */
#ifndef SQ_PACKET_RECORD_H
#define SQ_PACKET_RECORD_H

#include <stdint.h>

#define SQ_RECORD_MAGIC 0x52505153u   /* "SQPR" in little-endian byte order */
#define SQ_RECORD_VERSION 1
#define SQ_RECORD_SACK_MAX 4
#define SQ_RECORD_HEAD_LEN 24   /* the UDP generators' header is 20 bytes */

/* status bits */
#define SQ_REC_NOT_IP 0x01        /* not an IPv4/IPv6 frame (ARP, unknown link type...) */
#define SQ_REC_IP_MALFORMED 0x02  /* IP header inconsistent or cut by the snap length */
#define SQ_REC_L4_TRUNCATED 0x04  /* transport header cut by the snap length or malformed */
#define SQ_REC_FRAGMENT 0x08      /* a non-first IP fragment: no transport header */
#define SQ_REC_TCP_TS 0x10        /* TCP timestamp option present (ts_val, ts_ecr) */
#define SQ_REC_SACK_OK 0x20       /* TCP SACK-permitted option present */

struct sq_stream_header {
	uint32_t magic;
	uint32_t version;
	uint32_t record_size;
	uint32_t linktype;        /* as libpcap reports it (DLT_*) */
};

struct sq_packet_record {
	int64_t ts_us;            /* capture time, µs since the epoch */
	uint32_t frame_no;        /* 1-based frame number in the capture */
	uint32_t wire_len;        /* original frame length */
	uint32_t cap_len;         /* captured bytes */
	uint32_t ip_len;          /* IPv4 total length; IPv6 40 + payload length */
	uint32_t payload_len;     /* transport payload bytes (from the headers, not cap_len) */
	uint32_t ip_id;           /* IPv4 identification; IPv6 fragment id or 0 */
	uint32_t tcp_seq;
	uint32_t tcp_ack;
	uint32_t ts_val;          /* TCP timestamp option, valid with SQ_REC_TCP_TS */
	uint32_t ts_ecr;
	uint16_t sport;
	uint16_t dport;
	uint16_t window;          /* raw TCP window field (unscaled) */
	uint16_t mss;             /* MSS option, 0 if absent */
	uint8_t ip_version;       /* 4, 6, or 0 */
	uint8_t proto;            /* IP protocol of the transport header */
	uint8_t tcp_flags;        /* raw flags byte: FIN 1 SYN 2 RST 4 PSH 8 ACK 16 URG 32 ECE 64 CWR 128 */
	uint8_t tos;              /* IPv4 TOS / IPv6 traffic class (DSCP << 2 | ECN) */
	uint8_t ttl;              /* IPv4 TTL / IPv6 hop limit */
	uint8_t wscale;           /* window scale option, 0xff if absent */
	uint8_t n_sack;           /* SACK blocks in sack[] */
	uint8_t status;           /* SQ_REC_* bits */
	uint8_t icmp_type;
	uint8_t icmp_code;
	uint16_t head_len;        /* payload bytes copied into head[] */
	uint32_t reserved;
	uint8_t src[16];          /* IPv4: first 4 bytes, rest 0 */
	uint8_t dst[16];
	uint32_t sack[2 * SQ_RECORD_SACK_MAX];  /* left, right edge pairs */
	uint8_t head[SQ_RECORD_HEAD_LEN];       /* first payload bytes (UDP generators' header) */
};

_Static_assert(sizeof(struct sq_packet_record) == 160, "record layout is part of the format");

#endif
