#include "peers.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>

const char *sq_reject_name(enum sq_reject r)
{
	static const char *const names[SQ_REJECT_REASONS] = {
		"truncated", "bad_magic", "bad_version", "bad_type", "bad_role", "bad_length",
		"oversized", "bad_token", "unexpected_type", "unexpected_role", "unknown_source",
		"prestart", "bad_packet", "bad_payload", "role_taken", "udp_control",
	};
	return (unsigned)r < SQ_REJECT_REASONS ? names[r] : "unknown";
}

void sq_sockaddr_text(const struct sockaddr *a, char *out, size_t outlen)
{
	char host[INET6_ADDRSTRLEN];
	if (a->sa_family == AF_INET) {
		const struct sockaddr_in *x = (const void *)a;
		inet_ntop(AF_INET, &x->sin_addr, host, sizeof(host));
		snprintf(out, outlen, "%s:%u", host, ntohs(x->sin_port));
	} else if (a->sa_family == AF_INET6) {
		const struct sockaddr_in6 *x = (const void *)a;
		inet_ntop(AF_INET6, &x->sin6_addr, host, sizeof(host));
		snprintf(out, outlen, "[%s]:%u", host, ntohs(x->sin6_port));
	} else {
		snprintf(out, outlen, "?");
	}
}

static bool is_npa(uint8_t role)
{
	return role == SQ_ROLE_ROUTER || role == SQ_ROLE_MOBILE;
}

static bool role_fits(uint8_t type, uint8_t role)
{
	switch (type) {
	case SQ_MSG_HELLO:
	case SQ_MSG_DATA:
	case SQ_MSG_KEEPALIVE:
	case SQ_MSG_BYE:
		return is_npa(role);
	case SQ_MSG_START:
	case SQ_MSG_STOP:
		return role == SQ_ROLE_CONTROL;
	default:
		return false;
	}
}

static enum sq_reject wire_reject(enum sq_wire_error e)
{
	switch (e) {
	case SQ_WIRE_BAD_MAGIC: return SQ_REJ_BAD_MAGIC;
	case SQ_WIRE_BAD_VERSION: return SQ_REJ_BAD_VERSION;
	case SQ_WIRE_BAD_TYPE: return SQ_REJ_BAD_TYPE;
	case SQ_WIRE_BAD_ROLE: return SQ_REJ_BAD_ROLE;
	case SQ_WIRE_BAD_LENGTH: return SQ_REJ_BAD_LENGTH;
	default: return SQ_REJ_TRUNCATED;
	}
}

static bool from_registered(const struct sq_peers *peers, uint8_t slot, const struct sq_datagram *d)
{
	const struct sq_peer *p = &peers->peer[slot];
	return p->registered &&
	       sq_sockaddr_equal((const struct sockaddr *)&p->addr, p->addr_len, d->src, d->src_len);
}

static enum sq_action action_of(uint8_t type)
{
	switch (type) {
	case SQ_MSG_HELLO: return SQ_ACT_HELLO;
	case SQ_MSG_DATA: return SQ_ACT_DATA;
	case SQ_MSG_KEEPALIVE: return SQ_ACT_KEEPALIVE;
	default: return SQ_ACT_BYE;
	}
}

/* Returns the reason to reject, or SQ_REJECT_REASONS to accept. */
static enum sq_reject check(const struct sq_peers *peers, uint64_t token, bool started,
			    const struct sq_datagram *d, struct sq_classified *out)
{
	if (d->oversized)
		return SQ_REJ_OVERSIZED;
	enum sq_wire_error e = sq_wire_decode(d->buf, d->len, &out->h);
	if (e != SQ_WIRE_OK)
		return wire_reject(e);
	const struct sq_wire_header *h = &out->h;
	out->payload = d->buf + SQ_WIRE_HEADER_LEN;
	if (h->token != token)
		return SQ_REJ_BAD_TOKEN;
	if (h->type == SQ_MSG_WELCOME || h->type == SQ_MSG_STARTED)
		return SQ_REJ_UNEXPECTED_TYPE;
	if (!role_fits(h->type, h->role))
		return SQ_REJ_UNEXPECTED_ROLE;
	/* Run control is the control socket's alone: no datagram starts or ends a run, token or not. */
	if (h->type == SQ_MSG_START || h->type == SQ_MSG_STOP)
		return SQ_REJ_UDP_CONTROL;
	/* A mobile NPA names its host of the cell; nobody else names one. */
	uint32_t hosts = peers->hosts > 1 ? peers->hosts : 1;
	if (h->role == SQ_ROLE_MOBILE ? h->host > hosts : h->host != 0)
		return SQ_REJ_UNEXPECTED_ROLE;
	uint8_t slot = out->slot = sq_peer_slot(h->role, h->host);
	/* A HELLO may carry the clock offer (flagged); the other control messages nothing. */
	bool offers_clock = h->type == SQ_MSG_HELLO && (h->flags & SQ_WIRE_FLAG_CLOCK);
	if (h->type != SQ_MSG_DATA && h->length != (offers_clock ? SQ_WIRE_CLOCK_OFFER_LEN : 0))
		return SQ_REJ_BAD_PAYLOAD;
	/* A registered NPA is alive (a silent one is unregistered at peer_timeout): a HELLO from
	 * elsewhere would hijack its role. An NPA that restarts says BYE first, or waits. */
	if (h->type == SQ_MSG_HELLO && peers->peer[slot].registered && !from_registered(peers, slot, d))
		return SQ_REJ_ROLE_TAKEN;
	bool needs_registration = h->type == SQ_MSG_DATA || h->type == SQ_MSG_KEEPALIVE || h->type == SQ_MSG_BYE;
	if (needs_registration && !from_registered(peers, slot, d))
		return SQ_REJ_UNKNOWN_SOURCE;
	if (h->type != SQ_MSG_DATA)
		return SQ_REJECT_REASONS;
	if (!started)
		return SQ_REJ_PRESTART;
	/* A stamp only from an NPA that agreed to one clock at HELLO, and only before a packet. */
	if (h->flags & SQ_WIRE_FLAG_CLOCK) {
		if (!peers->peer[slot].shared_clock || h->length < SQ_WIRE_STAMP_LEN)
			return SQ_REJ_BAD_PAYLOAD;
		out->stamped = true;
		out->stamp_ns = sq_wire_get_time(out->payload);
		out->payload += SQ_WIRE_STAMP_LEN;
		out->h.length -= SQ_WIRE_STAMP_LEN;
	}
	if (!sq_pkt_inspect(out->payload, h->length, &out->meta, &out->id))
		return SQ_REJ_BAD_PACKET;
	return SQ_REJECT_REASONS;
}

void sq_classify(const struct sq_peers *peers, uint64_t token, bool started,
		 const struct sq_datagram *d, struct sq_classified *out)
{
	memset(out, 0, sizeof(*out));
	enum sq_reject r = check(peers, token, started, d, out);
	if (r != SQ_REJECT_REASONS) {
		out->action = SQ_ACT_REJECT;
		out->reason = r;
		return;
	}
	out->action = action_of(out->h.type);
}

bool sq_peers_register(struct sq_peers *p, uint8_t slot, const struct sockaddr *addr,
		       socklen_t len, int64_t now_ns)
{
	struct sq_peer *peer = &p->peer[slot];
	bool same = peer->registered &&
		    sq_sockaddr_equal((const struct sockaddr *)&peer->addr, peer->addr_len, addr, len);
	if (!same) {
		memset(peer, 0, sizeof(*peer));
		memcpy(&peer->addr, addr, len < sizeof(peer->addr) ? len : sizeof(peer->addr));
		peer->addr_len = len;
		peer->registered = true;
		peer->last_tx_ns = now_ns;
	}
	peer->last_rx_ns = now_ns;
	return !same;
}

void sq_peers_unregister(struct sq_peers *p, uint8_t slot)
{
	memset(&p->peer[slot], 0, sizeof(p->peer[slot]));
}

uint8_t sq_peers_last_slot(const struct sq_peers *p)
{
	return (uint8_t)(SQ_ROLE_MOBILE + (p->hosts > 1 ? p->hosts : 1) - 1);
}

void sq_peer_name(uint8_t slot, char *out, size_t outlen)
{
	if (slot > SQ_ROLE_MOBILE)
		snprintf(out, outlen, "mobile%u", slot - SQ_ROLE_MOBILE + 1);
	else
		snprintf(out, outlen, "%s", sq_role_name(slot));
}
