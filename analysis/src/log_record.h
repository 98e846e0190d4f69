/* Output of squall-log-records (analysis/read/emulog.py reads it as numpy records).
 *
 * Stream (host byte order):
 *   struct sq_log_stream_header
 *   n_events x struct sq_log_record        one per event line, in file order
 *   n_strings x { u32 len, u32 pad, u64 first_line, len bytes }   id 1.. (0 is `-`)
 *   n_comments x { u64 line, u64 events_before, u32 len, u32 pad, len bytes }
 *   struct sq_log_stream_footer
 *
 * Every text column is interned: records hold string ids. Integer columns hold
 * SQ_LOG_NULL where the log has `-`. The reader is deliberately stricter than the
 * Python parser (read/emulog.py): anything unusual makes it exit with SQ_LOG_EXIT_UNUSUAL,
 * and the Python parser, which is the specification, reads the file instead. */
#ifndef SQUALL_LOG_RECORD_H
#define SQUALL_LOG_RECORD_H

#include <stdint.h>

#define SQ_LOG_MAGIC 0x524c5153u /* "SQLR" */
#define SQ_LOG_VERSION 1u
#define SQ_LOG_NULL INT64_MIN
#define SQ_LOG_COLUMNS 20
#define SQ_LOG_INT_COLUMNS 12
#define SQ_LOG_TEXT_COLUMNS 8
#define SQ_LOG_EXIT_UNUSUAL 3

struct sq_log_stream_header {
	uint32_t magic;
	uint32_t version;
	uint32_t record_size;
	uint32_t reserved;
};

/* Integer columns in this order: time_us pkt_id ip_len attempt sbuf rbuf sport dport
 * ip_id tcp_seq tcp_ack payload_len; text columns: event dir state proto src dst
 * tcp_flags note. */
struct sq_log_record {
	int64_t ints[SQ_LOG_INT_COLUMNS];
	uint32_t texts[SQ_LOG_TEXT_COLUMNS];
	uint64_t line;
};

struct sq_log_stream_footer {
	uint64_t n_events;
	uint64_t n_strings;
	uint64_t n_comments;
	uint32_t magic;
	uint32_t reserved;
};

#endif
