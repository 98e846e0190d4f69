/* libFuzzer target: any bytes as an emulator log; the stream written must match the
 * footer's counts (records, then texts and comments with their lengths). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../src/log_parse.h"
#include "../src/log_record.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *out_buf = NULL;
	size_t out_len = 0;
	FILE *out = open_memstream(&out_buf, &out_len);
	if (!out)
		return 0;
	int status = sq_log_convert("fuzz.log", (const char *)data, size, out, "memory");
	fclose(out);
	if (status == 0) {
		struct sq_log_stream_footer f;
		if (out_len < sizeof(struct sq_log_stream_header) + sizeof f)
			__builtin_trap();
		memcpy(&f, out_buf + out_len - sizeof f, sizeof f);
		size_t records = sizeof(struct sq_log_stream_header) +
				 f.n_events * sizeof(struct sq_log_record);
		if (f.magic != SQ_LOG_MAGIC || records + sizeof f > out_len)
			__builtin_trap();
	}
	free(out_buf);
	return 0;
}
