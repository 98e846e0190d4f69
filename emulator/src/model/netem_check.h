/* Checks of a direction's netem stage configuration, naming the configuration file's
 * keys (emulator/CONFIG.md "netem"). */
#ifndef SQ_NETEM_CHECK_H
#define SQ_NETEM_CHECK_H

#include <stdbool.h>
#include <stddef.h>

#include "netem_config.h"

bool sq_netem_check(const struct sq_netem_config *c, const char *dn, char *err, size_t errlen);

#endif
