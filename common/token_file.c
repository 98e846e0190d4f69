#include "token_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int hex_value(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

bool sq_token_parse(const char *text, size_t len, uint64_t *token)
{
	if (len >= 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) {
		text += 2;
		len -= 2;
	}
	if (len != 16)
		return false;
	uint64_t v = 0;
	for (size_t i = 0; i < len; i++) {
		int d = hex_value(text[i]);
		if (d < 0)
			return false;
		v = v << 4 | (uint64_t)d;
	}
	*token = v;
	return true;
}

/* At most this much is read: a token with "0x" and a CRLF fits many times over. */
#define TOKEN_FILE_MAX 64

bool sq_token_file_read(const char *path, uint64_t *token, char *err, size_t errlen)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0) {
		snprintf(err, errlen, "cannot open the token file %s: %s", path, strerror(errno));
		return false;
	}
	struct stat st;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && (st.st_mode & 077)) {
		snprintf(err, errlen, "the token file %s can be read or written by other users "
			 "(mode %04o): it must be 0600 or stricter", path, (unsigned)(st.st_mode & 07777));
		close(fd);
		return false;
	}
	char buf[TOKEN_FILE_MAX + 1];
	size_t n = 0;
	for (;;) {
		ssize_t got = read(fd, buf + n, sizeof(buf) - n);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			snprintf(err, errlen, "cannot read the token file %s: %s", path, strerror(errno));
			close(fd);
			return false;
		}
		if (got == 0 || (n += (size_t)got) == sizeof(buf))
			break;
	}
	close(fd);
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\r'))
		n--;
	if (n > TOKEN_FILE_MAX || !sq_token_parse(buf, n, token)) {
		snprintf(err, errlen, "the token file %s does not hold a run token: expected exactly "
			 "16 hexadecimal digits and at most a newline", path);
		return false;
	}
	return true;
}
