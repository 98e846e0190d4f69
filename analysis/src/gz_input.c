#include "gz_input.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

int sq_is_gzip(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return -1;
	unsigned char magic[2];
	size_t n = fread(magic, 1, sizeof magic, f);
	fclose(f);
	return n == 2 && magic[0] == 0x1f && magic[1] == 0x8b;
}

static ssize_t cookie_read(void *cookie, char *buf, size_t size)
{
	unsigned int chunk = size > (1u << 30) ? 1u << 30 : (unsigned int)size;
	int n = gzread(cookie, buf, chunk);
	if (n < 0) {
		errno = EIO;
		return -1;
	}
	return n;
}

/* Only the question ftell asks (where are we?) is answered: the stream is not seekable. */
static int cookie_seek(void *cookie, off64_t *offset, int whence)
{
	if (whence != SEEK_CUR || *offset != 0) {
		errno = ESPIPE;
		return -1;
	}
	*offset = gztell(cookie);
	return *offset < 0 ? -1 : 0;
}

static int cookie_close(void *cookie)
{
	return gzclose_r(cookie) == Z_OK ? 0 : EOF;
}

FILE *sq_gz_fopen(const char *path)
{
	gzFile gz = gzopen(path, "rb");
	if (!gz)
		return NULL;
	gzbuffer(gz, 1 << 17);
	cookie_io_functions_t io = { .read = cookie_read, .seek = cookie_seek, .close = cookie_close };
	FILE *f = fopencookie(gz, "rb", io);
	if (!f)
		gzclose_r(gz);
	return f;
}

int sq_gz_read_all(const char *path, char **data, size_t *size)
{
	*data = NULL;
	*size = 0;
	gzFile gz = gzopen(path, "rb");
	if (!gz) {
		fprintf(stderr, "%s: cannot open: %s\n", path, strerror(errno ? errno : ENOMEM));
		return -1;
	}
	gzbuffer(gz, 1 << 17);
	size_t capacity = 0;
	for (;;) {
		if (capacity - *size < (1u << 20)) {
			capacity = capacity ? 2 * capacity : 4u << 20;
			char *grown = realloc(*data, capacity);
			if (!grown) {
				fprintf(stderr, "%s: out of memory after %zu decompressed bytes\n", path, *size);
				goto fail;
			}
			*data = grown;
		}
		int n = gzread(gz, *data + *size, (unsigned int)(capacity - *size));
		if (n < 0) {
			int zerr;
			const char *msg = gzerror(gz, &zerr);
			fprintf(stderr, "%s: cannot decompress after %zu bytes: %s\n", path, *size, msg);
			goto fail;
		}
		if (n == 0)
			break;
		*size += (size_t)n;
	}
	gzclose_r(gz);
	if (*size == 0) {
		free(*data);
		*data = NULL;
	}
	return 0;
fail:
	gzclose_r(gz);
	free(*data);
	*data = NULL;
	*size = 0;
	return -1;
}
