/* Whether the emulator can start with a configuration: what start-up and
 * `squall-emulator --check` both ask (emulator/CONFIG.md, "Checking a configuration"). */
#ifndef SQ_CONFIG_CHECK_H
#define SQ_CONFIG_CHECK_H

#include <stdbool.h>
#include <stddef.h>

#include "config.h"

/* The process keys the file or the command line must give are set, and the link model
 * accepts the link (sq_link_config_check, router stage included). Call it on a loaded
 * configuration with the command line's overrides applied; it creates nothing. On
 * failure false and one line "SOURCE: KEY: what is wrong" in err. */
bool sq_config_check(const struct sq_emu_config *cfg, char *err, size_t errlen);

#endif
