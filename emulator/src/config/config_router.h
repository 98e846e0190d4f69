/* The router-stage sections of the configuration file (emulator/CONFIG.md, "Router stage"):
 * [DIR.router], [DIR.router.class.NAME], [DIR.router.filter.NAME]. */
#ifndef SQ_CONFIG_ROUTER_H
#define SQ_CONFIG_ROUTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "config.h"
#include "config_keys.h"

extern const struct key_spec sq_router_keys[];
extern const struct key_spec sq_router_class_keys[];
extern const struct key_spec sq_router_filter_keys[];

/* Opens [DIR.router.class.NAME] / [DIR.router.filter.NAME]: NULL and the index in
 * *index, or what is wrong ("appears twice", too many, bad name). */
const char *sq_router_add_class(struct sq_emu_config *cfg, enum sq_dir dir, const char *name, size_t *index);
const char *sq_router_add_filter(struct sq_emu_config *cfg, enum sq_dir dir, const char *name, size_t *index);

/* Checks a class or filter section when it ends; NULL or "KEY: what is missing". */
const char *sq_router_close_class(const struct sq_emu_config *cfg, const struct where *w);
const char *sq_router_close_filter(const struct sq_emu_config *cfg, const struct where *w);

/* At the end of the file: resolves class names, checks the scheduler's needs.
 * Writes "KEY: ..." into msg and the line it concerns into *line (0: none). */
bool sq_router_finish(struct sq_emu_config *cfg, enum sq_dir dir, char *msg, size_t msglen,
		      unsigned *line);

/* Canonical "PREFIXdown.router..." lines. */
void sq_router_write(FILE *out, const char *prefix, const char *dir_name,
		     const struct sq_router_config *r);

#endif
