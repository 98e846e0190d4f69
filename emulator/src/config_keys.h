/* Internal to the configuration parser: how a section's keys are described. */
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

struct key_spec {
	const char *name;
	key_setter set;
	bool required;
};

#define SQ_MAX_SECTION_KEYS 16
#define SQ_CONFIG_MAX_LINE 4096   /* bytes per line, NUL included */

/* The process, [channel] and [down]/[up] keys (config_link_keys.c). */
extern const struct key_spec sq_process_keys[];
extern const struct key_spec sq_channel_keys[];
extern const struct key_spec sq_direction_keys[];

/* Strips white space at both ends, in place. */
char *sq_config_trim(char *s);

/* A whole file in a heap buffer (the caller frees it); NULL and a message on failure. */
char *sq_config_read_file(const char *path, size_t *len, char *err, size_t errlen);

/* Router sections (config_router.c). */
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
