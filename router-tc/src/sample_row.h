/* One line of the queue monitor's TSV output, and the file's header and trailer. */
#ifndef SQUALL_SAMPLE_ROW_H
#define SQUALL_SAMPLE_ROW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define SAMPLE_FORMAT_VERSION 1
#define SAMPLE_KIND_LEN 16

struct sample_row {
	int64_t time_us;
	bool is_class;
	uint32_t handle;
	uint32_t parent;
	char kind[SAMPLE_KIND_LEN];
	uint64_t backlog_bytes;
	uint64_t backlog_pkts;
	uint64_t drops;
	uint64_t overlimits;
	uint64_t requeues;
	bool has_marks;
	uint64_t marks;
};

struct sample_header {
	const char *device;
	int64_t interval_us;
	int64_t t0_realtime_us;
};

/* tc's notation: qdisc "1:", class "1:10", the root parent "root" (hexadecimal). */
void format_tc_handle(uint32_t handle, bool is_class, char *buf, size_t len);

/* The row as one tab-separated line with '\n'; returns the length as snprintf does. */
int sample_row_format(const struct sample_row *row, char *buf, size_t len);

int sample_header_write(FILE *out, const struct sample_header *header);
int sample_trailer_write(FILE *out, uint64_t samples, uint64_t missed_deadlines);

#endif
