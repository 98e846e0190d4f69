#include "inbound.h"

#include "host_port.h"

#include <netinet/in.h>
#include <string.h>

static int sp_sends(uint8_t type)
{
	return type == SQ_MSG_WELCOME || type == SQ_MSG_DATA || type == SQ_MSG_KEEPALIVE
		|| type == SQ_MSG_BYE;
}

static int looks_like_ip(const uint8_t *payload, size_t len)
{
	return len > 0 && ((payload[0] >> 4) == 4 || (payload[0] >> 4) == 6);
}

enum npa_reject npa_inbound_check(const struct npa_inbound_policy *policy,
				  const uint8_t *buf, size_t len,
				  const struct sockaddr *src, socklen_t src_len,
				  struct sq_wire_header *h)
{
	if (!sq_sockaddr_equal(policy->sp_addr, policy->sp_addr_len, src, src_len))
		return NPA_REJECT_WRONG_SOURCE;
	enum sq_wire_error e = sq_wire_decode(buf, len, h);
	if (e != SQ_WIRE_OK)
		return (enum npa_reject)e;
	if (h->token != policy->token)
		return NPA_REJECT_WRONG_TOKEN;
	if (h->role != SQ_ROLE_SP)
		return NPA_REJECT_WRONG_SENDER;
	if (!sp_sends(h->type))
		return NPA_REJECT_UNEXPECTED;
	if (h->type != SQ_MSG_DATA)
		return NPA_ACCEPT;
	size_t skip = 0;
	if (h->flags & SQ_WIRE_FLAG_CLOCK) {
		if (!policy->shared_clock)
			return NPA_REJECT_NO_CLOCK;
		skip = SQ_WIRE_STAMP_LEN;   /* the release time */
	}
	if (h->length < skip || !looks_like_ip(buf + SQ_WIRE_HEADER_LEN + skip, h->length - skip))
		return NPA_REJECT_NOT_IP;
	return NPA_ACCEPT;
}

const char *npa_reject_name(enum npa_reject r)
{
	switch (r) {
	case NPA_ACCEPT: return "accepted";
	case NPA_REJECT_WRONG_SOURCE: return "wrong_source";
	case NPA_REJECT_WRONG_TOKEN: return "wrong_token";
	case NPA_REJECT_WRONG_SENDER: return "wrong_sender_role";
	case NPA_REJECT_UNEXPECTED: return "unexpected_type";
	case NPA_REJECT_NOT_IP: return "not_ip";
	case NPA_REJECT_NO_CLOCK: return "no_clock";
	default: return sq_wire_error_name((enum sq_wire_error)r);
	}
}
