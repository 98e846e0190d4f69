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
	const struct sq_lateness *l = &c->release_late;
	fprintf(out, " release_held=%" PRIu64 " release_full=%" PRIu64 " release_flushed=%" PRIu64
		" release_late_n=%" PRIu64 " release_late_p50_us=%" PRIu64 " release_late_p99_us=%" PRIu64
		" release_late_max_us=%" PRIu64, c->release_held, c->release_full, c->release_flushed,
		l->count, sq_lateness_quantile_us(l, 0.5), sq_lateness_quantile_us(l, 0.99),
		sq_lateness_max_us(l));
	fputc('\n', out);
}
