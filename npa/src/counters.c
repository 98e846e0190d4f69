#include "counters.h"

#include <inttypes.h>

void npa_counters_print(FILE *out, const char *prefix, const struct npa_counters *c)
{
	uint64_t total = 0;
	for (int r = 1; r < NPA_REJECT_REASONS; r++)
		total += c->rejected[r];
	fprintf(out, "%s tun_rx=%" PRIu64 " tun_rx_bytes=%" PRIu64 " sp_tx=%" PRIu64
		" sp_tx_bytes=%" PRIu64 " sp_tx_errors=%" PRIu64 " sp_rx=%" PRIu64
		" sp_rx_bytes=%" PRIu64 " tun_tx=%" PRIu64 " tun_tx_bytes=%" PRIu64
		" tun_tx_errors=%" PRIu64 " keepalives_sent=%" PRIu64
		" keepalives_received=%" PRIu64 " wakeups=%" PRIu64 " rejected=%" PRIu64,
		prefix, c->tun_rx_packets, c->tun_rx_bytes, c->sp_tx_packets, c->sp_tx_bytes,
		c->sp_tx_errors, c->sp_rx_packets, c->sp_rx_bytes, c->tun_tx_packets,
		c->tun_tx_bytes, c->tun_tx_errors, c->keepalives_sent, c->keepalives_received,
		c->wakeups, total);
	for (int r = 1; r < NPA_REJECT_REASONS; r++)
		fprintf(out, " rejected_%s=%" PRIu64, npa_reject_name((enum npa_reject)r),
			c->rejected[r]);
	fputc('\n', out);
}
