/* What the configuration tests share: the canonical text of a configuration, and the
 * lines of one section taken back out of it (to write the canonical form as a file). */
#ifndef TEST_CONFIG_SUPPORT_H
#define TEST_CONFIG_SUPPORT_H

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config_write.h"

static inline char *canonical_text(const struct sq_emu_config *cfg)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	sq_config_write(cfg, f, "");
	fclose(f);
	return text;
}

/* Appends the canonical lines whose key starts with prefix, without it ("" : the process
 * keys, which have no section). */
static inline void append_keys(char *out, const char *canonical, const char *prefix)
{
	char *copy = strdup(canonical);
	for (char *line = strtok(copy, "\n"); line; line = strtok(NULL, "\n")) {
		const char *dot = strchr(line, '.'), *eq = strchr(line, '=');
		bool sectioned = dot && dot < eq;
		if (*prefix ? strncmp(line, prefix, strlen(prefix)) == 0 : !sectioned)
			strcat(strcat(out, line + strlen(prefix)), "\n");
	}
	free(copy);
}

#endif
