/* Builders of IPv4/IPv6 test packets shared by the emulator's unit tests. */
#ifndef SQ_TEST_PACKETS_H
#define SQ_TEST_PACKETS_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

static inline void tp_put16(uint8_t *p, uint16_t v) { p[0] = (uint8_t)(v >> 8); p[1] = (uint8_t)v; }
static inline void tp_put32(uint8_t *p, uint32_t v) { tp_put16(p, (uint16_t)(v >> 16)); tp_put16(p + 2, (uint16_t)v); }

/* IPv4 198.18.0.1 -> 198.18.1.2, id 0x1234, tos, with a transport of tlen bytes
 * already in buf + 20; returns the total length. */
static inline size_t tp_ipv4(uint8_t *buf, uint8_t proto, uint8_t tos, size_t tlen)
{
	size_t len = 20 + tlen;
	memset(buf, 0, 20);
	buf[0] = 0x45;
	buf[1] = tos;
	tp_put16(buf + 2, (uint16_t)len);
	tp_put16(buf + 4, 0x1234);
	buf[8] = 64;
	buf[9] = proto;
	const uint8_t src[4] = { 198, 18, 0, 1 }, dst[4] = { 198, 18, 1, 2 };
	memcpy(buf + 12, src, 4);
	memcpy(buf + 16, dst, 4);
	return len;
}

/* TCP 5000 -> 80, seq 1000, ack 2000, flags, 20 + optlen header bytes, then payload. */
static inline size_t tp_tcp(uint8_t *t, uint8_t flags, size_t optlen, size_t payload)
{
	size_t hl = 20 + optlen;
	memset(t, 0, hl + payload);
	tp_put16(t, 5000);
	tp_put16(t + 2, 80);
	tp_put32(t + 4, 1000);
	tp_put32(t + 8, 2000);
	t[12] = (uint8_t)((hl / 4) << 4);
	t[13] = flags;
	return hl + payload;
}

static inline size_t tp_udp(uint8_t *t, size_t payload)
{
	memset(t, 0, 8 + payload);
	tp_put16(t, 4000);
	tp_put16(t + 2, 5000);
	tp_put16(t + 4, (uint16_t)(8 + payload));
	return 8 + payload;
}

/* IPv6 2001:db8::1 -> 2001:db8::2 with traffic class tclass; the payload
 * (extension headers and transport, plen bytes) is already in buf + 40. */
static inline size_t tp_ipv6(uint8_t *buf, uint8_t next, uint8_t tclass, size_t plen)
{
	memset(buf, 0, 40);
	buf[0] = (uint8_t)(0x60 | tclass >> 4);
	buf[1] = (uint8_t)(tclass << 4);
	tp_put16(buf + 4, (uint16_t)plen);
	buf[6] = next;
	buf[7] = 64;
	buf[8] = 0x20; buf[9] = 0x01; buf[10] = 0x0d; buf[11] = 0xb8; buf[23] = 1;
	buf[24] = 0x20; buf[25] = 0x01; buf[26] = 0x0d; buf[27] = 0xb8; buf[39] = 2;
	return 40 + plen;
}

#endif
