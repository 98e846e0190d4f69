/* squall-control: sends one run-control command to squall-emulator's Unix socket and prints
 * its answer (emulator/PROTOCOL.md, "Run control"). The runner reaches the socket of an
 * emulator on a lab host with `ssh host squall-control SOCKET start`, so START and STOP
 * travel inside the SSH connection, never as datagrams on the network. */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "value_parse.h"
#include "squall_version.h"

static const char usage[] =
	"usage: squall-control [--timeout DURATION] SOCKET start|stop|state\n"
	"\n"
	"Sends START or STOP to the squall-emulator whose control socket is SOCKET (its\n"
	"--control or `control =`) and prints the answer: 'started T0_REALTIME_US',\n"
	"'stopped' once the emulator's log is complete, or 'state pending N last_us T now_us M'\n"
	"(packets inside the link, the last one in or out and now, in model µs; -1 before START\n"
	"or before the first packet). --timeout (default 10s) bounds the\n"
	"wait. Exit codes: 0 answered, 1 no answer or refused (message on stderr), 2 usage.\n";

static int64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Reads one line within the deadline; false with a message in err. */
static bool read_answer(int fd, int64_t deadline_ms, char *line, size_t cap, char *err, size_t errlen)
{
	size_t len = 0;
	while (len + 1 < cap) {
		int64_t left = deadline_ms - now_ms();
		struct pollfd p = { .fd = fd, .events = POLLIN };
		int r = left > 0 ? poll(&p, 1, (int)left) : 0;
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			snprintf(err, errlen, "no answer within the timeout");
			return false;
		}
		ssize_t n = read(fd, line + len, cap - 1 - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			snprintf(err, errlen, "the emulator closed the connection without an answer");
			return false;
		}
		len += (size_t)n;
		line[len] = '\0';
		char *nl = strchr(line, '\n');
		if (nl) {
			*nl = '\0';
			return true;
		}
	}
	snprintf(err, errlen, "the answer is longer than a line");
	return false;
}

/* Connects, retrying while the socket is not there yet (the emulator is starting); -1 with
 * errno set once the deadline has passed. */
static int connect_until(const struct sockaddr_un *addr, int64_t deadline_ms)
{
	for (;;) {
		int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd < 0)
			return -1;
		if (connect(fd, (const struct sockaddr *)addr, sizeof(*addr)) == 0)
			return fd;
		int e = errno;
		close(fd);
		if ((e != ENOENT && e != ECONNREFUSED) || now_ms() >= deadline_ms) {
			errno = e;
			return -1;
		}
		struct timespec pause = { .tv_nsec = 20 * 1000000 };
		nanosleep(&pause, NULL);
	}
}

int main(int argc, char **argv)
{
	if (sq_version_asked(argc, argv, "squall-control"))
		return 0;
	int64_t timeout_us = 10000000;
	int i = 1;
	if (i < argc && (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0)) {
		fputs(usage, stdout);
		return 0;
	}
	if (i + 1 < argc && strcmp(argv[i], "--timeout") == 0) {
		if (!sq_parse_duration(argv[i + 1], &timeout_us) || timeout_us <= 0) {
			fprintf(stderr, "squall-control: --timeout: expected a duration like 10s, got '%s'\n", argv[i + 1]);
			return 2;
		}
		i += 2;
	}
	if (argc - i != 2 || (strcmp(argv[i + 1], "start") != 0 && strcmp(argv[i + 1], "stop") != 0 &&
			      strcmp(argv[i + 1], "state") != 0)) {
		fputs(usage, stderr);
		return 2;
	}
	const char *path = argv[i], *command = argv[i + 1];
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	if (strlen(path) >= sizeof(addr.sun_path)) {
		fprintf(stderr, "squall-control: %s: longer than a Unix socket path may be\n", path);
		return 2;
	}
	strcpy(addr.sun_path, path);
	int64_t deadline_ms = now_ms() + timeout_us / 1000;
	int fd = connect_until(&addr, deadline_ms);
	if (fd < 0) {
		fprintf(stderr, "squall-control: cannot connect to the emulator's control socket %s: %s\n", path,
			strerror(errno));
		return 1;
	}
	char request[16], line[128], err[96];
	int len = snprintf(request, sizeof(request), "%s\n", command);
	if (send(fd, request, (size_t)len, MSG_NOSIGNAL) != len) {
		fprintf(stderr, "squall-control: %s: cannot send %s: %s\n", path, command, strerror(errno));
		close(fd);
		return 1;
	}
	bool answered = read_answer(fd, deadline_ms, line, sizeof(line), err, sizeof(err));
	close(fd);
	if (!answered) {
		fprintf(stderr, "squall-control: %s: %s: %s\n", path, command, err);
		return 1;
	}
	printf("%s\n", line);
	if (strncmp(line, "error", 5) == 0) {
		fprintf(stderr, "squall-control: %s: the emulator refused %s: %s\n", path, command, line);
		return 1;
	}
	return 0;
}
