/* The SP's view of its peers and the classification of every received datagram
 * (emulator/PROTOCOL.md): pure functions, no I/O, so the fuzzer can drive them. */
#ifndef SQ_PEERS_H
#define SQ_PEERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "link_config.h"
#include "packet_inspect.h"
#include "host_port.h"
#include "wire.h"

/* Why a datagram was dropped; names in sq_reject_name() are the log's. */
enum sq_reject {
	SQ_REJ_TRUNCATED, SQ_REJ_BAD_MAGIC, SQ_REJ_BAD_VERSION, SQ_REJ_BAD_TYPE, SQ_REJ_BAD_ROLE,
	SQ_REJ_BAD_LENGTH, SQ_REJ_OVERSIZED, SQ_REJ_BAD_TOKEN, SQ_REJ_UNEXPECTED_TYPE,
	SQ_REJ_UNEXPECTED_ROLE, SQ_REJ_UNKNOWN_SOURCE, SQ_REJ_PRESTART, SQ_REJ_BAD_PACKET,
	SQ_REJ_BAD_PAYLOAD,
	SQ_REJ_ROLE_TAKEN,      /* HELLO for a role a live NPA holds, from another address */
	SQ_REJ_UDP_CONTROL,     /* START or STOP as a datagram: run control is the control socket's */
	SQ_REJECT_REASONS
};

enum sq_action {
	SQ_ACT_REJECT, SQ_ACT_HELLO, SQ_ACT_DATA, SQ_ACT_KEEPALIVE, SQ_ACT_BYE,
};

/* A peer's slot in sq_peers: the router NPA's is SQ_ROLE_ROUTER (1); the mobile NPA of a
 * cell's host K (1-based; the header's host, 0 meaning 1) has SQ_ROLE_MOBILE + K - 1, so
 * host 1's is SQ_ROLE_MOBILE (2), as before cells. */
#define SQ_PEER_SLOTS (SQ_ROLE_MOBILE + SQ_CELL_MAX_HOSTS)

static inline uint8_t sq_peer_slot(uint8_t role, uint16_t host)
{
	return role == SQ_ROLE_MOBILE ? (uint8_t)(SQ_ROLE_MOBILE + (host ? host - 1 : 0)) : role;
}

struct sq_peer {
	bool registered;
	struct sockaddr_storage addr;
	socklen_t addr_len;
	int64_t last_rx_ns;    /* CLOCK_MONOTONIC of the last accepted message */
	int64_t last_tx_ns;    /* of the last message sent to it */
	uint32_t tx_seq;
	bool shared_clock;     /* agreed at HELLO: its DATA carries TUN read times (wire.h) */
};

struct sq_peers {
	struct sq_peer peer[SQ_PEER_SLOTS];
	uint32_t hosts;        /* the cell's mobile hosts (0: one) */
};

struct sq_datagram {
	const uint8_t *buf;
	size_t len;
	bool oversized;                 /* the kernel truncated it (MSG_TRUNC) */
	const struct sockaddr *src;
	socklen_t src_len;
};

struct sq_classified {
	enum sq_action action;
	enum sq_reject reason;          /* when action == SQ_ACT_REJECT */
	uint8_t slot;                   /* the sender's slot (sq_peer_slot) once its role fits */
	struct sq_wire_header h;
	const uint8_t *payload;         /* DATA: the IP packet, h.length bytes (a stamp taken off) */
	bool stamped;                   /* DATA with SQ_WIRE_FLAG_CLOCK from a peer that agreed */
	int64_t stamp_ns;               /* then: the NPA's CLOCK_MONOTONIC when it read the packet */
	struct sq_pkt_meta meta;        /* SQ_ACT_DATA */
	struct sq_pkt_identity id;      /* SQ_ACT_DATA */
};

/* Decides what to do with one datagram. */
void sq_classify(const struct sq_peers *peers, uint64_t token, bool started,
		 const struct sq_datagram *d, struct sq_classified *out);

/* "198.18.0.1:40000" or "[2001:db8::1]:40000" */
void sq_sockaddr_text(const struct sockaddr *a, char *out, size_t outlen);

/* Registers the peer of slot at addr; returns true if this is a new registration or a new
 * address (worth a `peer` event), false for a repeated HELLO. */
bool sq_peers_register(struct sq_peers *p, uint8_t slot, const struct sockaddr *addr,
		       socklen_t len, int64_t now_ns);
void sq_peers_unregister(struct sq_peers *p, uint8_t slot);
/* The last slot in use: the router's and the cell's hosts' are SQ_ROLE_ROUTER .. this. */
uint8_t sq_peers_last_slot(const struct sq_peers *p);
/* "router", "mobile" (host 1), "mobile2", ... */
void sq_peer_name(uint8_t slot, char *out, size_t outlen);

const char *sq_reject_name(enum sq_reject r);

#endif
