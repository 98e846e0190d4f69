/* The canonical form of a configuration: every key with its effective value, in the
 * units us, bit and B (the event log's header). */
#ifndef SQ_CONFIG_WRITE_H
#define SQ_CONFIG_WRITE_H

#include <stdio.h>

#include "config.h"

/* Writes one "PREFIXkey = value" line per key (the log header uses PREFIX "# config "). */
void sq_config_write(const struct sq_emu_config *cfg, FILE *out, const char *prefix);

#endif
