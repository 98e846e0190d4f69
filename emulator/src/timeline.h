/* --print-timeline: the channel state timeline a configuration produces. */
#ifndef SQ_TIMELINE_H
#define SQ_TIMELINE_H

#include <stdbool.h>
#include <stdio.h>

#include "config.h"

/* Prints "start_us state" lines for every state period starting before
 * duration; in a cell of several hosts each host's periods in turn (host 1's first), each
 * line with the host as a third word; false and a message if the channel config is invalid. */
bool sq_print_timeline(const struct sq_emu_config *cfg, sq_time_us duration, FILE *out,
		       char *err, size_t errlen);

#endif
