#include "wire.h"

#include <string.h>

static void put16(uint8_t *p, uint16_t v) { p[0] = v >> 8; p[1] = v; }
static void put32(uint8_t *p, uint32_t v) { put16(p, v >> 16); put16(p + 2, v); }
static void put64(uint8_t *p, uint64_t v) { put32(p, v >> 32); put32(p + 4, v); }
static uint16_t get16(const uint8_t *p) { return (uint16_t)(p[0] << 8 | p[1]); }
static uint32_t get32(const uint8_t *p) { return (uint32_t)get16(p) << 16 | get16(p + 2); }
static uint64_t get64(const uint8_t *p) { return (uint64_t)get32(p) << 32 | get32(p + 4); }

void sq_wire_encode(uint8_t *buf, const struct sq_wire_header *h)
{
	put32(buf, SQ_WIRE_MAGIC);
	buf[4] = h->version;
	buf[5] = h->type;
	buf[6] = h->role;
	buf[7] = h->flags;
	put64(buf + 8, h->token);
	put32(buf + 16, h->seq);
	put16(buf + 20, h->length);
	put16(buf + 22, h->host);
}

enum sq_wire_error sq_wire_decode(const uint8_t *buf, size_t len, struct sq_wire_header *h)
{
	if (len < SQ_WIRE_HEADER_LEN)
		return SQ_WIRE_TRUNCATED;
	if (get32(buf) != SQ_WIRE_MAGIC)
		return SQ_WIRE_BAD_MAGIC;
	if (buf[4] != SQ_WIRE_VERSION)
		return SQ_WIRE_BAD_VERSION;
	if (buf[5] < SQ_MSG_HELLO || buf[5] > SQ_MSG_STOP)
		return SQ_WIRE_BAD_TYPE;
	if (buf[6] > SQ_ROLE_CONTROL)
		return SQ_WIRE_BAD_ROLE;
	memset(h, 0, sizeof(*h));
	h->version = buf[4];
	h->type = buf[5];
	h->role = buf[6];
	h->flags = buf[7];
	h->token = get64(buf + 8);
	h->seq = get32(buf + 16);
	h->length = get16(buf + 20);
	h->host = get16(buf + 22);
	if (len < SQ_WIRE_HEADER_LEN + (size_t)h->length)
		return SQ_WIRE_TRUNCATED;
	if (len > SQ_WIRE_HEADER_LEN + (size_t)h->length)
		return SQ_WIRE_BAD_LENGTH;
	return SQ_WIRE_OK;
}

void sq_wire_put_time(uint8_t *p, int64_t ns)
{
	put64(p, (uint64_t)ns);
}

int64_t sq_wire_get_time(const uint8_t *p)
{
	return (int64_t)get64(p);
}

void sq_wire_clock_offer_encode(uint8_t *p, int64_t now_ns, const char boot_id[SQ_WIRE_BOOT_ID_LEN])
{
	sq_wire_put_time(p, now_ns);
	memcpy(p + SQ_WIRE_STAMP_LEN, boot_id, SQ_WIRE_BOOT_ID_LEN);
}

bool sq_wire_clock_offer_matches(const uint8_t *p, size_t len, int64_t now_ns,
				 const char boot_id[SQ_WIRE_BOOT_ID_LEN])
{
	if (len != SQ_WIRE_CLOCK_OFFER_LEN || memcmp(p + SQ_WIRE_STAMP_LEN, boot_id, SQ_WIRE_BOOT_ID_LEN) != 0)
		return false;
	int64_t sent = sq_wire_get_time(p);
	return sent <= now_ns && now_ns - sent <= SQ_WIRE_CLOCK_OFFER_MAX_AGE_NS;
}

const char *sq_wire_error_name(enum sq_wire_error e)
{
	static const char *const names[SQ_WIRE_ERRORS] = {
		"ok", "truncated", "bad_magic", "bad_version", "bad_type", "bad_role", "bad_length",
	};
	return (unsigned)e < SQ_WIRE_ERRORS ? names[e] : "unknown";
}

const char *sq_msg_type_name(uint8_t type)
{
	static const char *const names[] = {
		"?", "hello", "welcome", "data", "keepalive", "bye", "start", "started", "stop",
	};
	return type < sizeof(names) / sizeof(names[0]) ? names[type] : "?";
}

const char *sq_role_name(uint8_t role)
{
	static const char *const names[] = { "sp", "router", "mobile", "control" };
	return role < sizeof(names) / sizeof(names[0]) ? names[role] : "?";
}
