/* libFuzzer target: the configuration file parser, the whole check (--check), the trace
 * parser and the canonical writer. A config that parses must write whole "# config KEY =
 * VALUE" lines: the log header carries them and readers split it line by line. Every
 * message names the file and is one line (--check prints it as it is). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config_check.h"
#include "config_file.h"
#include "config_trace.h"
#include "config_write.h"

static struct sq_emu_config *cfg;

static void check_message(const char *err, const char *name)
{
	if (strncmp(err, name, strlen(name)) != 0 || strchr(err, '\n'))
		abort();
}

static void check_canonical_form(void)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	sq_config_write(cfg, f, "# config ");
	fclose(f);
	if (len == 0 || text[len - 1] != '\n')
		abort();
	for (char *line = text; line < text + len; line = strchr(line, '\n') + 1) {
		char *eq = strstr(line, " = ");
		if (strncmp(line, "# config ", 9) != 0 || !eq || eq > strchr(line, '\n'))
			abort();
	}
	free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!cfg)
		cfg = malloc(sizeof(*cfg));
	char *buf = malloc(size ? size : 1);
	memcpy(buf, data, size);
	char err[1024];
	sq_config_init(cfg);
	if (sq_config_parse(cfg, "fuzz.conf", buf, size, err, sizeof(err))) {
		check_canonical_form();
		if (!sq_config_check(cfg, err, sizeof(err)))
			check_message(err, "fuzz.conf");
	} else {
		check_message(err, "fuzz.conf");
	}
	sq_config_release(cfg);
	sq_config_init(cfg);
	if (!sq_config_parse_trace(cfg, "fuzz.trace", buf, size, err, sizeof(err)))
		check_message(err, "fuzz.trace");
	sq_config_release(cfg);
	free(buf);
	return 0;
}
