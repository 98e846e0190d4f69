/* What the link model needs to know of a packet (the process parses the IP header);
 * given to sq_model_arrive (link_model.h) and read by the router stage (router.h). */
#ifndef SQ_PKT_META_H
#define SQ_PKT_META_H

#include <stdint.h>

struct sq_pkt_meta {
	uint32_t ip_len;
	uint8_t dscp;      /* for the router stage */
	uint8_t ecn;       /* the IP ECN field, 0..3 */
	uint8_t proto;
	uint16_t sport, dport;
	uint8_t src[16], dst[16];   /* the IP addresses (IPv4: the first 4 bytes, the rest 0):
				     * with proto and the ports the flow's 5-tuple (FQ-CoDel) */
};

#endif
