/* The SP <-> NPA wire protocol (emulator/PROTOCOL.md): a fixed 24-byte header in
 * network byte order, followed by an IP packet for DATA messages.
 *
 *   0  magic    u32  "SQWL" (0x5351574c)
 *   4  version  u8   SQ_WIRE_VERSION
 *   5  type     u8   enum sq_msg_type
 *   6  role     u8   enum sq_role of the sender
 *   7  flags    u8   SQ_WIRE_FLAG_CLOCK or 0
 *   8  token    u64  the run token
 *  16  seq      u32  per-sender message counter
 *  20  length   u16  bytes after the header
 *  22  host     u16  a mobile NPA's host of a cell (0: host 1, what every NPA
 *                    sent before cells); 0 from every other sender
 */
#ifndef SQ_WIRE_H
#define SQ_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SQ_WIRE_MAGIC 0x5351574cu
#define SQ_WIRE_VERSION 1
#define SQ_WIRE_HEADER_LEN 24
#define SQ_WIRE_MAX_PAYLOAD 65535
#define SQ_WIRE_MAX_DATAGRAM (SQ_WIRE_HEADER_LEN + SQ_WIRE_MAX_PAYLOAD)

/* The shared-clock extension (emulator/PROTOCOL.md, "Shared clock"): in a HELLO, the NPA offers
 * to stamp its DATA with its CLOCK_MONOTONIC (payload: the clock offer); in the WELCOME, the SP
 * accepts; in DATA, the payload starts with a SQ_WIRE_STAMP_LEN-byte time (ns): from the NPA,
 * when it read the packet from its TUN; from the SP, when the NPA is to write it to its TUN
 * (its release time, the emulator's release_ahead). Only between ends that agreed. */
#define SQ_WIRE_FLAG_CLOCK 0x01
#define SQ_WIRE_STAMP_LEN 8
#define SQ_WIRE_BOOT_ID_LEN 36          /* /proc/sys/kernel/random/boot_id without the newline */
#define SQ_WIRE_CLOCK_OFFER_LEN (SQ_WIRE_STAMP_LEN + SQ_WIRE_BOOT_ID_LEN)
/* A HELLO sent longer ago than this (by the SP's clock), or later than now, is no proof of
 * one clock: a time namespace or another machine's clock would be off by more. */
#define SQ_WIRE_CLOCK_OFFER_MAX_AGE_NS (5LL * 1000 * 1000 * 1000)

enum sq_msg_type {
	SQ_MSG_HELLO = 1,      /* npa -> sp: register role with token */
	SQ_MSG_WELCOME = 2,    /* sp -> npa: registered; payload: u16 link MTU */
	SQ_MSG_DATA = 3,       /* either way: one IP packet */
	SQ_MSG_KEEPALIVE = 4,  /* either way: liveness */
	SQ_MSG_BYE = 5,        /* either way: orderly leave */
	SQ_MSG_START = 6,      /* control -> sp: set t = 0 and start the channel timeline */
	SQ_MSG_STARTED = 7,    /* sp -> control: payload: u64 CLOCK_REALTIME us of t = 0 */
	SQ_MSG_STOP = 8,       /* control -> sp: end the run, flush the log, exit */
};

enum sq_role {
	SQ_ROLE_SP = 0,
	SQ_ROLE_ROUTER = 1,    /* NPA on the router side: its DATA goes down */
	SQ_ROLE_MOBILE = 2,    /* NPA on the mobile side: its DATA goes up */
	SQ_ROLE_CONTROL = 3,   /* the runner */
};

struct sq_wire_header {
	uint8_t version;
	uint8_t type;
	uint8_t role;
	uint8_t flags;
	uint64_t token;
	uint32_t seq;
	uint16_t length;
	uint16_t host;         /* mobile role: its host in a cell, 1..16 (0: host 1) */
};

enum sq_wire_error {
	SQ_WIRE_OK = 0,
	SQ_WIRE_TRUNCATED,     /* shorter than the header, or than header + length */
	SQ_WIRE_BAD_MAGIC,
	SQ_WIRE_BAD_VERSION,
	SQ_WIRE_BAD_TYPE,
	SQ_WIRE_BAD_ROLE,
	SQ_WIRE_BAD_LENGTH,    /* length field disagrees with the datagram size */
	SQ_WIRE_ERRORS
};

/* Writes the header into buf (at least SQ_WIRE_HEADER_LEN bytes). */
void sq_wire_encode(uint8_t *buf, const struct sq_wire_header *h);

/* Checks and decodes a received datagram of len bytes. On SQ_WIRE_OK, *h is
 * filled and the payload is buf + SQ_WIRE_HEADER_LEN, h->length bytes. The
 * token is not checked here: that is the receiver's policy. */
enum sq_wire_error sq_wire_decode(const uint8_t *buf, size_t len, struct sq_wire_header *h);

/* A CLOCK_MONOTONIC time in ns as the 8 bytes of a stamp (u64, network byte order). */
void sq_wire_put_time(uint8_t *p, int64_t ns);
int64_t sq_wire_get_time(const uint8_t *p);

/* The HELLO's clock offer: the sender's CLOCK_MONOTONIC now (ns), then its boot id. */
void sq_wire_clock_offer_encode(uint8_t *p, int64_t now_ns, const char boot_id[SQ_WIRE_BOOT_ID_LEN]);

/* True if the offer (len bytes) shows the receiver's clock: the same boot id (the same
 * kernel) and a send time between SQ_WIRE_CLOCK_OFFER_MAX_AGE_NS ago and now_ns. */
bool sq_wire_clock_offer_matches(const uint8_t *p, size_t len, int64_t now_ns,
				 const char boot_id[SQ_WIRE_BOOT_ID_LEN]);

const char *sq_wire_error_name(enum sq_wire_error e);
const char *sq_msg_type_name(uint8_t type);
const char *sq_role_name(uint8_t role);

#endif
