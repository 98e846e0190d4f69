/* The TUN -> SP half of the data path: packets read from the TUN into
 * buffers that leave room for the wire header in front, then sent as DATA
 * with one sendmmsg. Consecutive packets of equal size go out as one UDP GSO
 * send (UDP_SEGMENT): the kernel cuts it into one datagram per packet, exactly
 * as if each had been sent alone, for a fraction of the per-packet cost. If
 * the path refuses GSO the batch falls back to one datagram per packet. */
#ifndef NPA_TO_SP_BATCH_H
#define NPA_TO_SP_BATCH_H

#include <stdbool.h>

#include "sp_link.h"

#define NPA_BATCH 32

struct npa_to_sp_batch;

struct npa_to_sp_batch *npa_to_sp_batch_new(struct npa_sp_link *link, bool gso);
void npa_to_sp_batch_free(struct npa_to_sp_batch *b);

/* Reads up to NPA_BATCH packets into an empty batch. Returns how many (0: the
 * TUN had none), or -1 with errno set on a TUN error. */
int npa_to_sp_batch_fill(struct npa_to_sp_batch *b, int tun_fd);

/* Sends what is pending. Returns 0 when all went out, 1 when the socket is
 * full (call again when it is writable). */
int npa_to_sp_batch_flush(struct npa_to_sp_batch *b);

#endif
