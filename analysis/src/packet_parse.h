/* Header extraction from one captured frame: link layer, IPv4/IPv6, TCP/UDP/ICMP.
 * Pure: no I/O, no allocation, never reads past caplen. */
#ifndef SQ_PACKET_PARSE_H
#define SQ_PACKET_PARSE_H

#include <stdbool.h>
#include <stdint.h>

#include "packet_record.h"

/* libpcap's DLT_* values this parser understands (the numbers are fixed by libpcap). */
#define SQ_DLT_NULL 0
#define SQ_DLT_EN10MB 1
#define SQ_DLT_RAW 12             /* Linux value of DLT_RAW; tcpdump on a TUN */
#define SQ_DLT_RAW_BSD 14
#define SQ_DLT_RAW_LINKTYPE 101   /* LINKTYPE_RAW as stored in files */
#define SQ_DLT_LINUX_SLL 113
#define SQ_DLT_IPV4 228
#define SQ_DLT_IPV6 229
#define SQ_DLT_LINUX_SLL2 276

bool sq_linktype_supported(int linktype);

/* Fills every header field of rec from frame[0..caplen) (ts_us, frame_no, wire_len
 * are the caller's). Frames that are not IP get SQ_REC_NOT_IP. */
void sq_parse_frame(int linktype, const uint8_t *frame, uint32_t caplen,
		    struct sq_packet_record *rec);

#endif
