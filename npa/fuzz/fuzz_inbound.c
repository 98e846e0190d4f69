/* Fuzzes the NPA's inbound policy with arbitrary datagrams from the SP's
 * address: it must never read past the datagram or crash, and anything it
 * accepts must be a complete message whose DATA starts like an IP packet (after the
 * release time when it has one, which only an NPA on the shared clock accepts). */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdbool.h>
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
	struct npa_inbound_policy policy = { (const struct sockaddr *)&sp, sizeof(sp), token,
					     .shared_clock = size % 4 >= 2 };
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
		/* a release time only where the clock is shared, and an IP packet after it */
		bool release = h.type == SQ_MSG_DATA && (h.flags & SQ_WIRE_FLAG_CLOCK);
		if (release && !policy.shared_clock)
			abort();
		size_t skip = release ? SQ_WIRE_STAMP_LEN : 0;
		const uint8_t *ip = copy + SQ_WIRE_HEADER_LEN + skip;
		if (h.type == SQ_MSG_DATA && (h.length <= skip || ((ip[0] >> 4) != 4 && (ip[0] >> 4) != 6)))
			abort();
	}
	free(copy);
	return 0;
}
