/* The netem keys of [down] and [up] and the error-draw keys of [channel]
 * (emulator/CONFIG.md "netem", docs/netem.md): parsing and canonical output. */
#ifndef SQ_CONFIG_NETEM_H
#define SQ_CONFIG_NETEM_H

#include <stdio.h>

#include "config_keys.h"

const char *sq_set_netem_loss(struct sq_emu_config *cfg, const struct where *w, const char *v);
const char *sq_set_netem_delay(struct sq_emu_config *cfg, const struct where *w, const char *v);
const char *sq_set_netem_distribution(struct sq_emu_config *cfg, const struct where *w, const char *v);
const char *sq_set_netem_reorder(struct sq_emu_config *cfg, const struct where *w, const char *v);
const char *sq_set_netem_gap(struct sq_emu_config *cfg, const struct where *w, const char *v);
const char *sq_set_netem_duplicate(struct sq_emu_config *cfg, const struct where *w, const char *v);
const char *sq_set_netem_corrupt(struct sq_emu_config *cfg, const struct where *w, const char *v);
const char *sq_set_error_draws(struct sq_emu_config *cfg, const struct where *w, const char *v);
const char *sq_set_error_grid(struct sq_emu_config *cfg, const struct where *w, const char *v);

/* The netem keys of a direction whose stage is on (nothing otherwise). */
void sq_netem_write(FILE *out, const char *prefix, const char *name, const struct sq_netem_config *c);
/* The error-draw keys when draws are by time (nothing in the Seawind mode). */
void sq_error_draws_write(FILE *out, const char *prefix, const struct sq_channel_config *c);

#endif
