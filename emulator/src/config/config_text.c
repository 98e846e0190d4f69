/* Whole files and trimmed lines for the configuration and trace parsers. */
#include "config_text.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

char *sq_config_trim(char *s)
{
	while (isspace((unsigned char)*s))
		s++;
	char *e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = '\0';
	return s;
}

/* All bytes up to the end of f (at most 64 MB) in a heap buffer, not NUL-terminated. */
char *sq_config_read_stream(FILE *f, const char *name, size_t *len, char *err, size_t errlen)
{
	size_t cap = 4096, n = 0;
	char *buf = malloc(cap);
	while (buf) {
		n += fread(buf + n, 1, cap - n, f);
		if (n < cap)
			break;
		char *bigger = cap < (64u << 20) ? realloc(buf, cap * 2) : NULL;
		if (!bigger) {
			free(buf);
			buf = NULL;
			break;
		}
		buf = bigger;
		cap *= 2;
	}
	if (!buf || ferror(f)) {
		snprintf(err, errlen, "%s: cannot read (too large or I/O error)", name);
		free(buf);
		return NULL;
	}
	*len = n;
	return buf;
}

/* Only a regular file is read: opening a FIFO nobody writes to would block, and a device may never
 * end. O_NONBLOCK makes the open itself return at once; the check follows on the descriptor. */
char *sq_config_read_file(const char *path, size_t *len, char *err, size_t errlen)
{
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		snprintf(err, errlen, "%s: cannot open: %s", path, strerror(errno));
		return NULL;
	}
	struct stat st;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "%s: cannot read: not a regular file (a pipe, a device or a socket); "
			 "expected a file", path);
		close(fd);
		return NULL;
	}
	FILE *f = fdopen(fd, "rb");
	if (!f) {
		snprintf(err, errlen, "%s: cannot open: %s", path, strerror(errno));
		close(fd);
		return NULL;
	}
	char *buf = sq_config_read_stream(f, path, len, err, errlen);
	fclose(f);
	return buf;
}
