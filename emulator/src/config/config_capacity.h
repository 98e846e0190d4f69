/* Recorded capacity traces: `bandwidth = mahimahi(FILE)` (emulator/CONFIG.md), in
 * mahimahi's format: one delivery opportunity per line, its time in whole milliseconds. */
#ifndef SQ_CONFIG_CAPACITY_H
#define SQ_CONFIG_CAPACITY_H

#include <stdbool.h>
#include <stddef.h>

#include "config.h"

/* Parses a trace held in memory into direction dir of cfg (which then owns it); name is
 * used in messages ("NAME:LINE: what was expected"). */
bool sq_config_parse_capacity(struct sq_emu_config *cfg, enum sq_dir dir, const char *name,
			      const char *buf, size_t len, char *err, size_t errlen);
/* Reads and parses the file of every direction whose bandwidth names one. */
bool sq_config_load_capacity(struct sq_emu_config *cfg, char *err, size_t errlen);

#endif
