#include "control_socket.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

/* A few at once: the runner needs one; more would only serve someone holding them open. */
#define MAX_CONNS 4
#define LINE_MAX_LEN 32
#define LISTENER 0u          /* epoll data of the listening socket; a connection is slot + 1 */

struct conn {
	int fd;                  /* -1: free */
	size_t len;
	char line[LINE_MAX_LEN];
	struct sq_control_peer peer;
	uint64_t opened;         /* accept order: with no free slot the oldest idle one goes */
};

struct sq_control {
	int listen_fd, epoll_fd;
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	struct conn conns[MAX_CONNS];
	uint64_t accepted;
	struct sq_control_counts counts;
};

void sq_control_peer_text(const struct sq_control_peer *p, char *out, size_t outlen)
{
	snprintf(out, outlen, "pid %ld (%s, uid %lu)", (long)p->pid, p->comm, (unsigned long)p->uid);
}

void sq_control_peer_of(pid_t pid, uid_t uid, struct sq_control_peer *p)
{
	*p = (struct sq_control_peer){ .pid = pid, .uid = uid };
	snprintf(p->comm, sizeof(p->comm), "?");
	char path[64];
	snprintf(path, sizeof(path), "/proc/%ld/comm", (long)pid);
	FILE *f = fopen(path, "re");
	if (!f)
		return;
	char comm[sizeof(p->comm)];
	if (fgets(comm, (int)sizeof(comm), f)) {
		/* One word for the trailer's name/value pairs. */
		for (char *c = comm; *c; c++)
			if (*c == '\n')
				*c = '\0';
			else if (*c == ' ' || *c == '\t')
				*c = '_';
		if (comm[0])
			memcpy(p->comm, comm, sizeof(comm));
	}
	fclose(f);
}

static void close_conn(struct sq_control *c, struct conn *k)
{
	if (k->fd < 0)
		return;
	epoll_ctl(c->epoll_fd, EPOLL_CTL_DEL, k->fd, NULL);
	close(k->fd);
	k->fd = -1;
	k->len = 0;
}

/* A short answer on a fresh connection never fills its buffer: no wait. */
static void answer(int fd, const char *line)
{
	ssize_t ignored = send(fd, line, strlen(line), MSG_NOSIGNAL | MSG_DONTWAIT);
	(void)ignored;
}

struct sq_control *sq_control_open(const char *path, char *err, size_t errlen)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	if (strlen(path) >= sizeof(addr.sun_path)) {
		snprintf(err, errlen, "control %s: the path is longer than a Unix socket allows (%zu bytes)",
			 path, sizeof(addr.sun_path) - 1);
		return NULL;
	}
	struct sq_control *c = calloc(1, sizeof(*c));
	if (!c) {
		snprintf(err, errlen, "control: out of memory");
		return NULL;
	}
	strcpy(c->path, path);
	strcpy(addr.sun_path, path);
	for (int i = 0; i < MAX_CONNS; i++)
		c->conns[i].fd = -1;
	c->listen_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	c->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
	if (c->listen_fd < 0 || c->epoll_fd < 0) {
		snprintf(err, errlen, "control %s: %s", path, strerror(errno));
		goto fail;
	}
	/* Created 0600 from the start: there is no moment at which others could connect. */
	mode_t old = umask(0177);
	int bound = bind(c->listen_fd, (struct sockaddr *)&addr, sizeof(addr));
	int bind_errno = errno;
	umask(old);
	if (bound < 0) {
		snprintf(err, errlen, "control %s: cannot create the socket: %s%s", path, strerror(bind_errno),
			 bind_errno == EADDRINUSE ? " (another emulator's, or a leftover: remove it)" : "");
		goto fail;
	}
	struct epoll_event ev = { .events = EPOLLIN, .data.u32 = LISTENER };
	if (chmod(path, 0600) < 0 || listen(c->listen_fd, MAX_CONNS) < 0 ||
	    epoll_ctl(c->epoll_fd, EPOLL_CTL_ADD, c->listen_fd, &ev) < 0) {
		snprintf(err, errlen, "control %s: %s", path, strerror(errno));
		unlink(path);
		goto fail;
	}
	return c;
fail:
	if (c->listen_fd >= 0)
		close(c->listen_fd);
	if (c->epoll_fd >= 0)
		close(c->epoll_fd);
	free(c);
	return NULL;
}

int sq_control_fd(const struct sq_control *c)
{
	return c->epoll_fd;
}

const struct sq_control_counts *sq_control_counts(const struct sq_control *c)
{
	return &c->counts;
}

static struct conn *free_slot(struct sq_control *c)
{
	struct conn *oldest = NULL;
	for (int i = 0; i < MAX_CONNS; i++) {
		if (c->conns[i].fd < 0)
			return &c->conns[i];
		if (!oldest || c->conns[i].opened < oldest->opened)
			oldest = &c->conns[i];
	}
	/* All taken by peers that say nothing: the oldest makes room (it is counted). */
	c->counts.refused++;
	answer(oldest->fd, "error too many connections\n");
	close_conn(c, oldest);
	return oldest;
}

/* Only the emulator's own user or root may command it (the file's mode says the same;
 * this holds even if the mode was changed). */
static void accept_all(struct sq_control *c)
{
	for (;;) {
		int fd = accept4(c->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0)
			return;
		struct ucred cred;
		socklen_t len = sizeof(cred);
		if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0 ||
		    (cred.uid != 0 && cred.uid != geteuid())) {
			c->counts.refused++;
			answer(fd, "error not allowed\n");
			close(fd);
			continue;
		}
		struct conn *k = free_slot(c);
		*k = (struct conn){ .fd = fd, .opened = ++c->accepted };
		sq_control_peer_of(cred.pid, cred.uid, &k->peer);
		struct epoll_event ev = { .events = EPOLLIN, .data.u32 = (uint32_t)(k - c->conns) + 1 };
		if (epoll_ctl(c->epoll_fd, EPOLL_CTL_ADD, fd, &ev) < 0) {
			close(fd);
			k->fd = -1;
		}
	}
}

static void bad_command(struct sq_control *c, struct conn *k)
{
	c->counts.bad_command++;
	answer(k->fd, "error unknown command (expected start, stop or state)\n");
	close_conn(c, k);
}

/* Reads what the connection has; true with a command in req. */
static bool read_conn(struct sq_control *c, struct conn *k, struct sq_control_request *req)
{
	ssize_t n = recv(k->fd, k->line + k->len, sizeof(k->line) - k->len, MSG_DONTWAIT);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return false;
	if (n <= 0) {                       /* gone before a whole line */
		if (k->len)
			c->counts.bad_command++;
		close_conn(c, k);
		return false;
	}
	k->len += (size_t)n;
	char *nl = memchr(k->line, '\n', k->len);
	if (!nl) {
		if (k->len == sizeof(k->line))
			bad_command(c, k);
		return false;
	}
	*nl = '\0';
	if (nl > k->line && nl[-1] == '\r')
		nl[-1] = '\0';
	if (strcmp(k->line, "start") == 0) {
		req->command = SQ_CONTROL_START;
		c->counts.start++;
	} else if (strcmp(k->line, "stop") == 0) {
		req->command = SQ_CONTROL_STOP;
		c->counts.stop++;
	} else if (strcmp(k->line, "state") == 0) {
		req->command = SQ_CONTROL_STATE;
	} else {
		bad_command(c, k);
		return false;
	}
	req->conn = (int)(k - c->conns);
	req->peer = k->peer;
	/* One command per connection: nothing more is read from it. */
	epoll_ctl(c->epoll_fd, EPOLL_CTL_DEL, k->fd, NULL);
	return true;
}

bool sq_control_next(struct sq_control *c, struct sq_control_request *req)
{
	struct epoll_event evs[MAX_CONNS + 1];
	for (;;) {
		int n = epoll_wait(c->epoll_fd, evs, MAX_CONNS + 1, 0);
		if (n <= 0)
			return false;
		for (int i = 0; i < n; i++) {
			uint32_t which = evs[i].data.u32;
			if (which == LISTENER) {
				accept_all(c);
				continue;
			}
			struct conn *k = &c->conns[which - 1];
			if (k->fd >= 0 && read_conn(c, k, req))
				return true;   /* the other ready ones are reported again next time */
		}
	}
}

void sq_control_reply(struct sq_control *c, int conn, const char *line)
{
	if (conn < 0 || conn >= MAX_CONNS || c->conns[conn].fd < 0)
		return;
	answer(c->conns[conn].fd, line);
	close_conn(c, &c->conns[conn]);
}

void sq_control_close(struct sq_control *c)
{
	if (!c)
		return;
	for (int i = 0; i < MAX_CONNS; i++)
		close_conn(c, &c->conns[i]);
	close(c->listen_fd);
	close(c->epoll_fd);
	unlink(c->path);
	free(c);
}
