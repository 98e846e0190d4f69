/* Packet inspection: what the link model and the event log need to know of an
 * IP packet, derived safely from any bytes. */
#ifndef SQ_PACKET_INSPECT_H
#define SQ_PACKET_INSPECT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "link_model.h"

/* TCP flag bits as in the TCP header; the log prints them as "FSRPAUEC". */
enum {
	SQ_TCP_FIN = 0x01, SQ_TCP_SYN = 0x02, SQ_TCP_RST = 0x04, SQ_TCP_PSH = 0x08,
	SQ_TCP_ACK = 0x10, SQ_TCP_URG = 0x20, SQ_TCP_ECE = 0x40, SQ_TCP_CWR = 0x80,
};

/* The fields that identify a packet across the emulator log and host captures. */
struct sq_pkt_identity {
	uint8_t family;            /* 4 or 6 */
	uint8_t proto;             /* transport protocol (after IPv6 extension headers) */
	uint8_t src[16], dst[16];  /* IPv4 uses the first 4 bytes */
	bool has_ip_id;            /* IPv4 only */
	uint16_t ip_id;
	bool has_ports;            /* TCP/UDP header present (first fragment, not truncated) */
	uint16_t sport, dport;
	bool has_tcp;              /* TCP header complete: seq, ack, flags valid */
	uint32_t tcp_seq, tcp_ack;
	uint8_t tcp_flags;
	bool has_payload_len;      /* TCP or UDP */
	uint32_t payload_len;
};

/* Inspects the packet of len bytes. Returns false when it is not an IPv4 or
 * IPv6 packet whose total length equals len (the SP rejects it as bad_packet).
 * A packet whose transport header is missing or truncated is still accepted;
 * the identity then leaves those fields out. */
bool sq_pkt_inspect(const uint8_t *pkt, size_t len, struct sq_pkt_meta *meta,
		    struct sq_pkt_identity *id);

/* "tcp", "udp", "icmp", "icmp6", or the protocol number in decimal. */
void sq_proto_name(uint8_t proto, char *out, size_t outlen);

#endif
