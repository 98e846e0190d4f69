/* Fuzzes the NPA's inbound policy with arbitrary datagrams from the SP's
 * address: it must never read past the datagram or crash, and anything it
 * accepts must be a complete message whose DATA starts like an IP packet. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#include "../src/inbound.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sockaddr_in sp = { .sin_family = AF_INET, .sin_port = htons(5300) };
	sp.sin_addr.s_addr = htonl(0x7f000001);
	uint64_t token = 0;
	if (size >= 16)
		memcpy(&token, data + 8, 8);  /* often equal to the datagram's token */
	if (size % 2)
		token ^= 1;
	struct npa_inbound_policy policy = { (const struct sockaddr *)&sp, sizeof(sp), token };
	uint8_t *copy = malloc(size ? size : 1);
	if (copy == NULL)
		return 0;
	memcpy(copy, data, size);
	struct sq_wire_header h;
	enum npa_reject r = npa_inbound_check(&policy, copy, size, (const struct sockaddr *)&sp,
					      sizeof(sp), &h);
	if (r == NPA_ACCEPT) {
		if (size != SQ_WIRE_HEADER_LEN + (size_t)h.length)
			abort();
		if (h.type == SQ_MSG_DATA && (h.length == 0
		    || ((copy[SQ_WIRE_HEADER_LEN] >> 4) != 4 && (copy[SQ_WIRE_HEADER_LEN] >> 4) != 6)))
			abort();
	}
	free(copy);
	return 0;
}
