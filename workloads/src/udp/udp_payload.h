/* The CBR datagram payload (workloads/README.md): magic, sequence number and send time,
 * big-endian, the rest zero. */
#ifndef UDP_PAYLOAD_H
#define UDP_PAYLOAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define UDP_PAYLOAD_MAGIC 0x53515544u /* "SQUD" */
#define UDP_PAYLOAD_HEADER 20
#define UDP_PAYLOAD_MAX 65507
/* Sequence numbers at or above this are treated as invalid (bounds the receiver's bitmap). */
#define UDP_SEQ_LIMIT (1ull << 30)

/* Writes the header into buf (len >= UDP_PAYLOAD_HEADER); the caller zeroes the rest once. */
void udp_payload_write(uint8_t *buf, uint64_t seq, int64_t send_us);
/* False when the datagram is too short, has another magic or an out-of-range seq. */
bool udp_payload_read(const uint8_t *buf, size_t len, uint64_t *seq, int64_t *send_us);

#endif
