/* Channel trace files: one "good|bad DURATION" per line (emulator/CONFIG.md, [channel]). */
#ifndef SQ_CONFIG_TRACE_H
#define SQ_CONFIG_TRACE_H

#include <stdbool.h>
#include <stddef.h>

#include "config.h"

/* Parses a trace held in memory into cfg (which then owns the steps); name is used in
 * messages ("NAME:LINE: what was expected"). */
bool sq_config_parse_trace(struct sq_emu_config *cfg, const char *name, const char *buf,
			   size_t len, char *err, size_t errlen);
/* Reads and parses the file at cfg->trace_path. */
bool sq_config_load_trace(struct sq_emu_config *cfg, char *err, size_t errlen);

#endif
