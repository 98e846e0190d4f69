/* libFuzzer target: the first byte picks the link type, the rest is the frame. */
#include <stddef.h>
#include <stdint.h>

#include "../src/packet_parse.h"

static const int linktypes[] = {
	SQ_DLT_NULL, SQ_DLT_EN10MB, SQ_DLT_RAW, SQ_DLT_RAW_BSD, SQ_DLT_RAW_LINKTYPE,
	SQ_DLT_LINUX_SLL, SQ_DLT_IPV4, SQ_DLT_IPV6, SQ_DLT_LINUX_SLL2,
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1 || size > 65536)
		return 0;
	int linktype = linktypes[data[0] % (sizeof linktypes / sizeof linktypes[0])];
	struct sq_packet_record rec;
	sq_parse_frame(linktype, data + 1, (uint32_t)(size - 1), &rec);
	/* Fields derived from headers must stay within what the headers allow. */
	if (rec.n_sack > SQ_RECORD_SACK_MAX || rec.head_len > SQ_RECORD_HEAD_LEN)
		__builtin_trap();
	return 0;
}
