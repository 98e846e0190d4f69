/* Formatting of one event line of the emulator log (emulator/LOG_FORMAT.md):
 * 20 tab-separated columns, "-" for "not applicable"; a cell of several hosts adds a 21st,
 * the host. */
#ifndef SQ_LOG_LINE_H
#define SQ_LOG_LINE_H

#include <stdbool.h>
#include <stddef.h>

#include "link_model.h"
#include "packet_inspect.h"

#define SQ_LOG_LINE_MAX 512
/* The ten packet-identity columns, each with its leading tab, fit in this
 * (two IPv6 addresses of at most 45 characters and eight short fields). */
#define SQ_LOG_ID_TEXT_MAX 192

/* One row. Optional columns carry a has_ flag; id may be NULL (no packet). */
struct sq_log_record {
	sq_time_us t;
	const char *event;
	bool has_dir;
	enum sq_dir dir;
	uint64_t pkt_id;           /* 0: "-" */
	bool has_ip_len;
	uint32_t ip_len;
	bool has_state;
	enum sq_state state;
	bool has_attempt;
	uint32_t attempt;
	bool has_buffers;
	uint32_t sbuf, rbuf;
	const struct sq_pkt_identity *id;
	/* The identity columns already formatted by sq_log_identity_text() (used
	 * instead of id when not NULL): a packet has up to five events and the
	 * same identity in each, so the SP formats it once per packet. */
	const char *id_text;
	size_t id_text_len;
	const char *note;          /* NULL: "-" */
	bool host_column;          /* the log of a cell of several hosts: a 21st column */
	uint32_t host;             /* 1-based; 0: "-" (peer, start) */
};

/* The record of a link model event; id is the packet's identity (NULL if none). */
struct sq_log_record sq_log_record_of_event(const struct sq_event *ev, const struct sq_pkt_identity *id);

/* The note column of a netem event (a corrupt's bit, a duplicate's original packet id)
 * written into buf; other events keep `otherwise`. */
const char *sq_log_event_note(const struct sq_event *ev, char *buf, size_t len, const char *otherwise);

/* Writes the line with its trailing newline into out; returns its length
 * (truncated lines still end with a newline). */
size_t sq_log_format(const struct sq_log_record *r, char *out, size_t outlen);

/* The identity columns of id (NULL: all "-"), each preceded by a tab, into out
 * (NUL-terminated); returns their length. out should hold SQ_LOG_ID_TEXT_MAX. */
size_t sq_log_identity_text(const struct sq_pkt_identity *id, char *out, size_t outlen);

/* "SA", "FPA", "." for none. out must hold 9 bytes. */
void sq_tcp_flags_text(uint8_t flags, char *out);

#endif
