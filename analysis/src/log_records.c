/* squall-log-records: reads an emulator event log (emulator/LOG_FORMAT.md, format 1) in
 * one pass and writes its event lines as fixed-size records (log_record.h) for
 * analysis/emulog.py, with the text columns interned and the comment lines verbatim.
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
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log_parse.h"

/* Maps the file read-only; *data is NULL for an empty file. Returns 0 or -1 (reported). */
static int map_file(const char *path, const char **data, size_t *size)
{
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
	*size = (size_t)st.st_size;
	*data = NULL;
	if (*size > 0) {
		void *m = mmap(NULL, *size, PROT_READ, MAP_PRIVATE, fd, 0);
		if (m == MAP_FAILED) {
			fprintf(stderr, "%s: cannot map the emulator log: %s\n", path, strerror(errno));
			close(fd);
			return -1;
		}
		madvise(m, *size, MADV_SEQUENTIAL);
		*data = m;
	}
	close(fd);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 2 || argc > 3) {
		fprintf(stderr, "usage: squall-log-records LOG [OUTPUT]\n");
		return 2;
	}
	const char *data;
	size_t size;
	if (map_file(argv[1], &data, &size) < 0)
		return 1;
	FILE *out = stdout;
	const char *out_name = "stdout";
	if (argc == 3) {
		out = fopen(argv[2], "wb");
		out_name = argv[2];
		if (!out) {
			fprintf(stderr, "%s: cannot open for writing: %s\n", argv[2], strerror(errno));
			if (data)
				munmap((void *)data, size);
			return 1;
		}
	}
	static char buffer[1 << 20];
	setvbuf(out, buffer, _IOFBF, sizeof buffer);
	int status = sq_log_convert(argv[1], data, size, out, out_name);
	if (out != stdout && fclose(out) != 0 && status == 0) {
		fprintf(stderr, "%s: write failed: %s\n", out_name, strerror(errno));
		status = 1;
	}
	if (data)
		munmap((void *)data, size);
	return status;
}
