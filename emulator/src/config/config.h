/* The emulator's configuration: the link configuration plus the process keys,
 * parsed from the file format of emulator/CONFIG.md (config_file.h).
 *
 * A struct sq_emu_config points into itself (link.dir[].rate): initialise it with
 * sq_config_init() in its final place and never copy it. */
#ifndef SQ_CONFIG_H
#define SQ_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "link_config.h"

#define SQ_MAX_RATE_STEPS 1024
#define SQ_MAX_TRACE_STEPS 100000
#define SQ_MAX_OPPORTUNITIES 5000000   /* lines of a mahimahi capacity trace */
#define SQ_CONFIG_PATH_MAX 4096
#define SQ_DEFAULT_PORT 5300
/* A Unix socket's path: sun_path holds 108 bytes with the NUL. */
#define SQ_CONTROL_PATH_MAX 108
/* `token = <redacted>`: the file names no token (it is given with --token-file), and the
 * log header writes this instead of the token. */
#define SQ_TOKEN_REDACTED "<redacted>"
/* An exponential given only a min gets this max: the longest state length the
 * link model accepts (about 11.6 days). */
#define SQ_DIST_NO_MAX 1000000000000LL

enum sq_autostart { SQ_AUTOSTART_NONE, SQ_AUTOSTART_PEERS };

/* What a direction's router sections say by name; resolved to indices when the
 * whole file has been read (classes may come after the filters naming them). */
struct sq_router_names {
	bool present;                                   /* [DIR.router] appeared */
	char default_class[SQ_ROUTER_NAME_MAX];
	unsigned default_line;
	char filter_class[SQ_ROUTER_MAX_FILTERS][SQ_ROUTER_NAME_MAX];
	unsigned filter_class_line[SQ_ROUTER_MAX_FILTERS];
	bool limit_is_bytes[SQ_ROUTER_MAX_CLASSES];     /* "6000B" rather than "20" */
	bool share_set[SQ_ROUTER_MAX_CLASSES];
};

/* One key of a [host.K.channel], [host.K.down] or [host.K.up] section, applied on top of the
 * link's own values once the whole file is read (config_cell.c). */
#define SQ_MAX_HOST_OVERRIDES 512
#define SQ_HOST_VALUE_MAX 128
#define SQ_HOST_SECTION_MARK 255
struct sq_host_override {
	uint8_t host;                    /* 1-based, as the file names it */
	int8_t section;                  /* SQ_DOWN, SQ_UP, or -1: the channel */
	uint8_t key;                     /* index into its section's key table, or
					  * SQ_HOST_SECTION_MARK: where the section starts */
	unsigned line;
	char value[SQ_HOST_VALUE_MAX];
};

/* A host's address in the wireless cell ([cell] addresses): its downlink packets' destination. */
struct sq_cell_address {
	uint8_t family;                  /* 4 or 6, as struct sq_pkt_identity */
	uint8_t addr[16];
};

struct sq_emu_config {
	struct sq_link_config link;
	struct sq_rate_step rate[SQ_DIRS][SQ_MAX_RATE_STEPS];
	struct sq_trace_step *trace;          /* owned; loaded by sq_config_load_trace */
	char trace_path[SQ_CONFIG_PATH_MAX];  /* "" if no trace; resolved against the file's dir */
	uint32_t *capacity[SQ_DIRS];          /* owned; loaded by sq_config_load_capacity */
	char capacity_path[SQ_DIRS][SQ_CONFIG_PATH_MAX];   /* "" unless bandwidth = mahimahi(FILE) */

	char listen_text[128];
	struct sockaddr_storage listen;
	socklen_t listen_len;
	uint64_t token;
	char log_path[SQ_CONFIG_PATH_MAX];
	char control_path[SQ_CONTROL_PATH_MAX];  /* "" if none: the Unix socket of START/STOP */
	sq_time_us keepalive;
	sq_time_us peer_timeout;
	sq_time_us release_ahead;             /* 0: off; else how far ahead decided outs go to an
					       * NPA on this clock (README.md "Release at the NPA") */
	enum sq_autostart autostart;

	bool token_set, log_set, seed_set;
	char source[SQ_CONFIG_PATH_MAX];      /* file name used in messages */
	struct sq_router_names router_names[SQ_DIRS];
	struct sq_host_config hosts[SQ_CELL_MAX_HOSTS];   /* link.cell.host when overrides exist */
	struct sq_host_override host_overrides[SQ_MAX_HOST_OVERRIDES];
	size_t n_host_overrides;
	struct sq_cell_address cell_addresses[SQ_CELL_MAX_HOSTS];   /* [cell] addresses, host 1 first */
	size_t n_cell_addresses;                                   /* 0: none given */
	char cell_addresses_text[SQ_CELL_MAX_HOSTS * 48];          /* as given, for the canonical form */
	unsigned line;                        /* line being parsed (for later messages) */
};

#endif
