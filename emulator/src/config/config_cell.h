/* The cell's keys (emulator/CONFIG.md "[cell]"): [cell] hosts, scheduler, pf_window, and a
 * host's own values in [host.K.channel], [host.K.down], [host.K.up]. */
#ifndef SQ_CONFIG_CELL_H
#define SQ_CONFIG_CELL_H

#include <stddef.h>

#include "config_keys.h"

extern const struct key_spec sq_cell_keys[];

/* "host.K.channel" / "host.K.down" / "host.K.up": false if name is not such a section (then
 * nothing is set); else *host (1-based) and *section (SQ_DOWN, SQ_UP or -1 for the channel),
 * and *problem what is wrong with it (NULL if nothing). */
bool sq_cell_host_section(const struct sq_emu_config *cfg, const char *name, int *host,
			  int *section, const char **problem);
/* Records that section (host, section) starts at line (so that a second one is refused). */
void sq_cell_mark_section(struct sq_emu_config *cfg, int host, int section, unsigned line);
/* Records key = value of a host section for sq_cell_finish; NULL or what is wrong. */
const char *sq_cell_record(struct sq_emu_config *cfg, int host, int section, const char *key,
			   const char *value, unsigned line);
/* Applies the hosts' values on top of the link's (the whole file read); false with
 * "FILE:LINE: host.K.SECTION.KEY: ..." in err. */
bool sq_cell_finish(struct sq_emu_config *cfg, char *err, size_t errlen);
/* Gives every host the link's channel trace once it is loaded (hosts cannot override it). */
void sq_cell_share_trace(struct sq_emu_config *cfg);

#endif
