#include "udp_payload.h"

static void put_be(uint8_t *p, uint64_t v, int bytes)
{
    for (int i = bytes - 1; i >= 0; i--) {
        p[i] = (uint8_t)(v & 0xff);
        v >>= 8;
    }
}

static uint64_t get_be(const uint8_t *p, int bytes)
{
    uint64_t v = 0;
    for (int i = 0; i < bytes; i++)
        v = (v << 8) | p[i];
    return v;
}

void udp_payload_write(uint8_t *buf, uint64_t seq, int64_t send_us)
{
    put_be(buf, UDP_PAYLOAD_MAGIC, 4);
    put_be(buf + 4, seq, 8);
    put_be(buf + 12, (uint64_t)send_us, 8);
}

bool udp_payload_read(const uint8_t *buf, size_t len, uint64_t *seq, int64_t *send_us)
{
    if (len < UDP_PAYLOAD_HEADER || get_be(buf, 4) != UDP_PAYLOAD_MAGIC)
        return false;
    *seq = get_be(buf + 4, 8);
    *send_us = (int64_t)get_be(buf + 12, 8);
    return *seq < UDP_SEQ_LIMIT;
}
