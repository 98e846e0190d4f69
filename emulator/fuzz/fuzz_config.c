/* libFuzzer target: the configuration file parser, the trace parser and the
 * canonical writer. A config that parses must write whole "# config KEY = VALUE"
 * lines: the log header carries them and readers split it line by line. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"

static struct sq_emu_config *cfg;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!cfg)
		cfg = malloc(sizeof(*cfg));
	char *buf = malloc(size ? size : 1);
	memcpy(buf, data, size);
	char err[1024];
	sq_config_init(cfg);
	if (sq_config_parse(cfg, "fuzz.conf", buf, size, err, sizeof(err))) {
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
	} else if (strncmp(err, "fuzz.conf", 9) != 0) {
		abort();   /* every message names the file */
	}
	sq_config_release(cfg);
	sq_config_init(cfg);
	if (!sq_config_parse_trace(cfg, "fuzz.trace", buf, size, err, sizeof(err)) &&
	    strncmp(err, "fuzz.trace", 10) != 0)
		abort();
	sq_config_release(cfg);
	free(buf);
	return 0;
}
