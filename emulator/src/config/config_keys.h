/* Internal to the configuration parser: how a section's keys are described. The
 * tables themselves are in config_link_keys.h and config_router.h. */
#ifndef SQ_CONFIG_KEYS_H
#define SQ_CONFIG_KEYS_H

#include <stdbool.h>
#include <stddef.h>

#include "config.h"

/* Which direction, and which router class or filter, a section is about. */
struct where {
	enum sq_dir dir;
	size_t index;
};

/* A setter returns NULL on success or the text of what was expected. */
typedef const char *(*key_setter)(struct sq_emu_config *cfg, const struct where *w, const char *value);

/* A table of keys ends with a NULL name. */
struct key_spec {
	const char *name;
	key_setter set;
	bool required;
};

/* The most keys a section's table may hold (the parser's key_seen; test_config checks the
 * tables against it). */
#define SQ_MAX_SECTION_KEYS 48

#endif
