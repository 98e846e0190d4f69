#include "sample_row.h"

#include <inttypes.h>

#define TC_H_ROOT_HANDLE 0xFFFFFFFFu

void format_tc_handle(uint32_t handle, bool is_class, char *buf, size_t len)
{
	uint32_t major = handle >> 16, minor = handle & 0xFFFFu;
	if (handle == TC_H_ROOT_HANDLE || handle == 0)
		snprintf(buf, len, "root");
	else if (!is_class && minor == 0)
		snprintf(buf, len, "%" PRIx32 ":", major);
	else
		snprintf(buf, len, "%" PRIx32 ":%" PRIx32, major, minor);
}

int sample_row_format(const struct sample_row *row, char *buf, size_t len)
{
	char handle[24], parent[24], marks[24];
	format_tc_handle(row->handle, row->is_class, handle, sizeof handle);
	/* A parent is always a class (or the root), even when its minor is 0. */
	format_tc_handle(row->parent, true, parent, sizeof parent);
	if (row->has_marks)
		snprintf(marks, sizeof marks, "%" PRIu64, row->marks);
	else
		snprintf(marks, sizeof marks, "-");
	return snprintf(buf, len,
			"%" PRId64 "\t%s\t%s\t%s\t%s\t%" PRIu64 "\t%" PRIu64 "\t%" PRIu64 "\t%" PRIu64 "\t%" PRIu64 "\t%s\n",
			row->time_us, row->is_class ? "class" : "qdisc", handle, parent, row->kind,
			row->backlog_bytes, row->backlog_pkts, row->drops, row->overlimits, row->requeues, marks);
}

int sample_header_write(FILE *out, const struct sample_header *header)
{
	return fprintf(out,
		       "# squall-queue-monitor samples\n"
		       "# format %d\n"
		       "# device %s\n"
		       "# interval_us %" PRId64 "\n"
		       "# t0_realtime_us %" PRId64 "\n"
		       "# columns time_us object handle parent kind backlog_bytes backlog_pkts drops overlimits requeues marks\n",
		       SAMPLE_FORMAT_VERSION, header->device, header->interval_us, header->t0_realtime_us) < 0 ? -1 : 0;
}

int sample_trailer_write(FILE *out, uint64_t samples, uint64_t missed_deadlines)
{
	return fprintf(out, "# end samples %" PRIu64 " missed %" PRIu64 "\n", samples, missed_deadlines) < 0 ? -1 : 0;
}
