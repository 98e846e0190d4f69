#include "log_writer.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Beyond this much queued data the event loop waits for the disk after all:
 * memory stays bounded when the disk is slower than the log for long. */
#define MAX_QUEUED (64u << 20)

struct chunk {
	struct chunk *next;
	size_t len;
	char data[];
};

struct writer {
	int fd;
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t changed;              /* a chunk queued, one written, or closing */
	struct chunk *head, *tail;
	size_t queued;
	bool closing, failed;
};

static bool write_all(int fd, const char *data, size_t len)
{
	while (len > 0) {
		ssize_t n = write(fd, data, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return false;
		data += n;
		len -= (size_t)n;
	}
	return true;
}

/* Waits for the next chunk; NULL when closing and everything is written. */
static struct chunk *next_chunk(struct writer *w)
{
	pthread_mutex_lock(&w->lock);
	while (!w->head && !w->closing)
		pthread_cond_wait(&w->changed, &w->lock);
	struct chunk *c = w->head;
	pthread_mutex_unlock(&w->lock);
	return c;
}

static void chunk_written(struct writer *w, struct chunk *c, bool ok)
{
	pthread_mutex_lock(&w->lock);
	w->head = c->next;
	if (!w->head)
		w->tail = NULL;
	w->queued -= c->len;
	w->failed = w->failed || !ok;
	pthread_cond_broadcast(&w->changed);
	pthread_mutex_unlock(&w->lock);
	free(c);
}

static void *run_writer(void *arg)
{
	struct writer *w = arg;
	struct chunk *c;
	while ((c = next_chunk(w)))
		chunk_written(w, c, !w->failed && write_all(w->fd, c->data, c->len));
	return NULL;
}

static ssize_t queue_write(void *cookie, const char *data, size_t len)
{
	struct writer *w = cookie;
	struct chunk *c = malloc(sizeof(*c) + len);
	if (!c) {
		errno = ENOMEM;
		return -1;
	}
	c->next = NULL;
	c->len = len;
	memcpy(c->data, data, len);
	pthread_mutex_lock(&w->lock);
	while (w->queued > MAX_QUEUED && !w->failed)
		pthread_cond_wait(&w->changed, &w->lock);
	if (w->tail)
		w->tail->next = c;
	else
		w->head = c;
	w->tail = c;
	w->queued += len;
	pthread_cond_broadcast(&w->changed);
	pthread_mutex_unlock(&w->lock);
	return (ssize_t)len;
}

static void destroy(struct writer *w)
{
	pthread_cond_destroy(&w->changed);
	pthread_mutex_destroy(&w->lock);
	free(w);
}

static int close_writer(void *cookie)
{
	struct writer *w = cookie;
	pthread_mutex_lock(&w->lock);
	w->closing = true;
	pthread_cond_broadcast(&w->changed);
	pthread_mutex_unlock(&w->lock);
	pthread_join(w->thread, NULL);
	bool ok = !w->failed;
	ok = close(w->fd) == 0 && ok;
	destroy(w);
	return ok ? 0 : -1;
}

/* SCHED_OTHER whatever the process's policy: the event loop comes first. All
 * signals blocked: they are for the event loop's signalfd, never this thread. */
static int start_thread(struct writer *w)
{
	pthread_attr_t attr;
	struct sched_param normal = { .sched_priority = 0 };
	pthread_attr_init(&attr);
	pthread_attr_setinheritsched(&attr, PTHREAD_EXPLICIT_SCHED);
	pthread_attr_setschedpolicy(&attr, SCHED_OTHER);
	pthread_attr_setschedparam(&attr, &normal);
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	int rc = pthread_create(&w->thread, &attr, run_writer, w);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&attr);
	return rc;
}

FILE *sq_log_writer_open(const char *path, char *err, size_t errlen)
{
	struct writer *w = calloc(1, sizeof(*w));
	if (!w) {
		snprintf(err, errlen, "log %s: out of memory for its writer", path);
		return NULL;
	}
	pthread_mutex_init(&w->lock, NULL);
	pthread_cond_init(&w->changed, NULL);
	w->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
	if (w->fd < 0) {
		snprintf(err, errlen, "log %s: cannot create: %s", path, strerror(errno));
		destroy(w);
		return NULL;
	}
	int rc = start_thread(w);
	if (rc != 0) {
		snprintf(err, errlen, "log %s: cannot start its writer thread: %s", path, strerror(rc));
		close(w->fd);
		destroy(w);
		return NULL;
	}
	cookie_io_functions_t io = { .write = queue_write, .close = close_writer };
	FILE *f = fopencookie(w, "w", io);
	if (!f) {
		snprintf(err, errlen, "log %s: cannot open a stream on it: %s", path, strerror(errno));
		close_writer(w);
	}
	return f;
}
