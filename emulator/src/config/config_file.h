/* The configuration file parser (format: emulator/CONFIG.md): a struct sq_emu_config
 * from a file or a memory buffer, and the command line's overrides of process keys. */
#ifndef SQ_CONFIG_FILE_H
#define SQ_CONFIG_FILE_H

#include <stdbool.h>
#include <stddef.h>

#include "config.h"

#define SQ_CONFIG_STDIN_NAME "<stdin>"

/* Defaults of every optional key. */
void sq_config_init(struct sq_emu_config *cfg);
/* Releases what the config owns (the trace). */
void sq_config_release(struct sq_emu_config *cfg);

/* Parses a whole file held in memory; name is used in messages and to resolve
 * a relative trace path. Checks the link keys (required, ranges) but not the
 * process keys that flags may still give (see sq_config_finish). On failure
 * returns false with "NAME:LINE: KEY: ..." in err. */
bool sq_config_parse(struct sq_emu_config *cfg, const char *name, const char *buf, size_t len,
		     char *err, size_t errlen);

/* Reads and parses the file at path, "-" for standard input (named SQ_CONFIG_STDIN_NAME in
 * messages; a relative trace path is then relative to the working directory), then the
 * trace file, if any. */
bool sq_config_load(struct sq_emu_config *cfg, const char *path, char *err, size_t errlen);

/* Sets one process key (listen, token, log, seed, replication, ...) from the
 * command line; origin names it in messages ("--seed"). */
bool sq_config_override(struct sq_emu_config *cfg, const char *key, const char *value,
			const char *origin, char *err, size_t errlen);

/* Checks that the keys required from file or command line (token, log, seed) are set. */
bool sq_config_finish(const struct sq_emu_config *cfg, char *err, size_t errlen);

#endif
