/* squall-log-records: reads an emulator event log (emulator/LOG_FORMAT.md, format 1) in
 * one pass and writes its event lines as fixed-size records (log_record.h) for
 * analysis/read/emulog.py, with the text columns interned and the comment lines verbatim.
 *
 *   squall-log-records LOG [OUTPUT]      OUTPUT defaults to stdout
 *
 * Exit 0 on success; 1 when the file cannot be read or the output written (message on
 * stderr); SQ_LOG_EXIT_UNUSUAL (3) when a line is not in the plain form this reader
 * accepts (a control character or non-ASCII byte in an event line, a column count other
 * than 20, an integer column that is not a plain decimal int64, `-` as time): the
 * Python parser then reads the file and says what is wrong, or accepts it. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gz_input.h"
#include "log_parse.h"
#include "records_args.h"

/* The log's bytes: a plain file mapped read-only, a gzip-compressed one (emulator.log.gz)
 * decompressed into memory; *data is NULL for an empty file. Returns 0 or -1 (reported). */
struct log_bytes {
	const char *data;
	size_t size;
	int mapped;
};

static int map_file(const char *path, struct log_bytes *b)
{
	b->data = NULL;
	b->size = 0;
	b->mapped = 0;
	int compressed = sq_is_gzip(path);
	if (compressed < 0) {
		fprintf(stderr, "%s: cannot open the emulator log: %s\n", path, strerror(errno));
		return -1;
	}
	if (compressed) {
		char *data;
		if (sq_gz_read_all(path, &data, &b->size) < 0)
			return -1;
		b->data = data;
		return 0;
	}
	int fd = open(path, O_RDONLY);
	if (fd < 0) {
		fprintf(stderr, "%s: cannot open the emulator log: %s\n", path, strerror(errno));
		return -1;
	}
	struct stat st;
	if (fstat(fd, &st) < 0) {
		fprintf(stderr, "%s: cannot stat the emulator log: %s\n", path, strerror(errno));
		close(fd);
		return -1;
	}
	b->size = (size_t)st.st_size;
	if (b->size > 0) {
		void *m = mmap(NULL, b->size, PROT_READ, MAP_PRIVATE, fd, 0);
		if (m == MAP_FAILED) {
			fprintf(stderr, "%s: cannot map the emulator log: %s\n", path, strerror(errno));
			close(fd);
			return -1;
		}
		madvise(m, b->size, MADV_SEQUENTIAL);
		b->data = m;
		b->mapped = 1;
	}
	close(fd);
	return 0;
}

static void release(struct log_bytes *b)
{
	if (b->mapped)
		munmap((void *)b->data, b->size);
	else
		free((void *)b->data);
}

static const char usage_text[] =
	"usage: squall-log-records LOG [OUTPUT]\n"
	"Writes one fixed-size record per event line of an emulator log (LOG_FORMAT.md) to OUTPUT\n"
	"or stdout: what the analysis reads (analysis/README.md).\n";

int main(int argc, char **argv)
{
	int answered = sq_records_args(argc, argv, "squall-log-records", usage_text);
	if (answered >= 0)
		return answered;
	struct log_bytes bytes;
	if (map_file(argv[1], &bytes) < 0)
		return 1;
	FILE *out = stdout;
	const char *out_name = "stdout";
	if (argc == 3) {
		out = fopen(argv[2], "wb");
		out_name = argv[2];
		if (!out) {
			fprintf(stderr, "%s: cannot open for writing: %s\n", argv[2], strerror(errno));
			release(&bytes);
			return 1;
		}
	}
	static char buffer[1 << 20];
	setvbuf(out, buffer, _IOFBF, sizeof buffer);
	int status = sq_log_convert(argv[1], bytes.data, bytes.size, out, out_name);
	if (out != stdout && fclose(out) != 0 && status == 0) {
		fprintf(stderr, "%s: write failed: %s\n", out_name, strerror(errno));
		status = 1;
	}
	release(&bytes);
	return status;
}
