#include "log_writer.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "clock_ns.h"
#include "helper_thread.h"

/* The thread looks at the ring this often when nothing wakes it: at the
 * log rates seen (~5 MB/s at 10 000 packets/s, ~60 MB/s at full relay speed)
 * a poll period fills well under 1 MB of the ring. */
#define POLL_NS (10 * 1000 * 1000)
/* The largest single write(2): the ring frees up progressively, and each
 * system call spends less time in the kernel in one piece. */
#define MAX_WRITE (256u << 10)
/* A waiting event loop re-checks at least this often. */
#define FULL_WAIT_NS (200 * 1000)

struct sq_log_writer {
	int fd;
	pthread_t thread;
	char *ring;
	size_t cap;                          /* a power of two */
	/* Bytes ever put in (event loop) and ever written out (thread). */
	_Atomic uint64_t head, tail;
	/* Futex words: `kick` makes the thread look now (closing, ring full);
	 * `progress` counts the thread's writes, for a loop waiting on a full ring. */
	_Atomic uint32_t kick, progress;
	_Atomic bool closing, failed, loop_waiting;
	/* Event loop only. */
	uint64_t max_fill, waits, wait_ns;
};

static long futex(_Atomic uint32_t *word, int op, uint32_t val, const struct timespec *timeout)
{
	return syscall(SYS_futex, (uint32_t *)word, op | FUTEX_PRIVATE_FLAG, val, timeout, NULL, 0);
}

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

/* Writes what is in the ring (at most MAX_WRITE at a time); false if it was empty. */
static bool drain_some(struct sq_log_writer *w)
{
	uint64_t tail = atomic_load_explicit(&w->tail, memory_order_relaxed);
	uint64_t head = atomic_load_explicit(&w->head, memory_order_acquire);
	if (head == tail)
		return false;
	size_t at = (size_t)(tail & (w->cap - 1));
	size_t n = (size_t)(head - tail);
	if (n > w->cap - at)
		n = w->cap - at;               /* up to the end of the ring; the rest next time */
	if (n > MAX_WRITE)
		n = MAX_WRITE;
	/* After a failure the data is dropped, so the loop never waits for a dead disk:
	 * the close reports the log incomplete. */
	if (!atomic_load_explicit(&w->failed, memory_order_relaxed) && !write_all(w->fd, w->ring + at, n))
		atomic_store_explicit(&w->failed, true, memory_order_relaxed);
	/* Sequentially consistent with the loop's loop_waiting store and tail load:
	 * one of the two sides sees the other's store. */
	atomic_store(&w->tail, tail + n);
	if (atomic_load(&w->loop_waiting)) {
		atomic_fetch_add_explicit(&w->progress, 1, memory_order_release);
		futex(&w->progress, FUTEX_WAKE, 1, NULL);
	}
	return true;
}

static void *run_writer(void *arg)
{
	struct sq_log_writer *w = arg;
	const struct timespec poll = { .tv_sec = 0, .tv_nsec = POLL_NS };
	for (;;) {
		uint32_t kick = atomic_load_explicit(&w->kick, memory_order_acquire);
		if (drain_some(w))
			continue;
		if (atomic_load_explicit(&w->closing, memory_order_acquire) &&
		    atomic_load_explicit(&w->head, memory_order_acquire) ==
			    atomic_load_explicit(&w->tail, memory_order_relaxed))
			return NULL;
		futex(&w->kick, FUTEX_WAIT, kick, &poll);
	}
}

static void kick_writer(struct sq_log_writer *w)
{
	atomic_fetch_add_explicit(&w->kick, 1, memory_order_release);
	futex(&w->kick, FUTEX_WAKE, 1, NULL);
}

/* The ring has room for len bytes: waits (counted) only when the disk has fallen behind. */
static void wait_for_room(struct sq_log_writer *w, uint64_t head, size_t len)
{
	uint64_t tail = atomic_load_explicit(&w->tail, memory_order_acquire);
	if (w->cap - (head - tail) >= len)
		return;
	int64_t start = mono_ns();
	w->waits++;
	atomic_store(&w->loop_waiting, true);
	const struct timespec wait = { .tv_sec = 0, .tv_nsec = FULL_WAIT_NS };
	for (;;) {
		uint32_t progress = atomic_load_explicit(&w->progress, memory_order_acquire);
		tail = atomic_load(&w->tail);
		if (w->cap - (head - tail) >= len)
			break;
		kick_writer(w);
		futex(&w->progress, FUTEX_WAIT, progress, &wait);
	}
	atomic_store_explicit(&w->loop_waiting, false, memory_order_relaxed);
	w->wait_ns += (uint64_t)(mono_ns() - start);
}

static void put(struct sq_log_writer *w, const char *data, size_t len)
{
	uint64_t head = atomic_load_explicit(&w->head, memory_order_relaxed);
	wait_for_room(w, head, len);
	size_t at = (size_t)(head & (w->cap - 1));
	size_t first = len < w->cap - at ? len : w->cap - at;
	memcpy(w->ring + at, data, first);
	memcpy(w->ring, data + first, len - first);
	atomic_store_explicit(&w->head, head + len, memory_order_release);
	uint64_t fill = head + len - atomic_load_explicit(&w->tail, memory_order_relaxed);
	if (fill > w->max_fill)
		w->max_fill = fill;
}

static ssize_t queue_write(void *cookie, const char *data, size_t len)
{
	struct sq_log_writer *w = cookie;
	/* A write larger than the ring goes in ring-sized pieces. */
	for (size_t done = 0; done < len;) {
		size_t n = len - done < w->cap ? len - done : w->cap;
		put(w, data + done, n);
		done += n;
	}
	return (ssize_t)len;
}

static void destroy(struct sq_log_writer *w)
{
	if (w->ring)
		munmap(w->ring, w->cap);
	free(w);
}

static int close_writer(void *cookie)
{
	struct sq_log_writer *w = cookie;
	atomic_store_explicit(&w->closing, true, memory_order_release);
	kick_writer(w);
	pthread_join(w->thread, NULL);
	bool ok = !atomic_load(&w->failed);
	ok = close(w->fd) == 0 && ok;
	destroy(w);
	return ok ? 0 : -1;
}

/* SCHED_OTHER whatever the process's policy: the event loop comes first. */
static int start_thread(struct sq_log_writer *w)
{
	pthread_attr_t attr;
	struct sched_param normal = { .sched_priority = 0 };
	pthread_attr_init(&attr);
	pthread_attr_setinheritsched(&attr, PTHREAD_EXPLICIT_SCHED);
	pthread_attr_setschedpolicy(&attr, SCHED_OTHER);
	pthread_attr_setschedparam(&attr, &normal);
	int rc = sq_helper_thread_start(&w->thread, &attr, run_writer, w, "sq-log-writer");
	pthread_attr_destroy(&attr);
	return rc;
}

FILE *sq_log_writer_open(const char *path, struct sq_log_writer **writer, char *err, size_t errlen)
{
	struct sq_log_writer *w = calloc(1, sizeof(*w));
	if (!w) {
		snprintf(err, errlen, "log %s: out of memory for its writer", path);
		return NULL;
	}
	w->cap = SQ_LOG_RING_BYTES;
	/* Touched now (MAP_POPULATE), so that no page fault waits on the event loop's path. */
	w->ring = mmap(NULL, w->cap, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (w->ring == MAP_FAILED) {
		w->ring = NULL;
		snprintf(err, errlen, "log %s: no memory for its %u MB buffer: %s", path, SQ_LOG_RING_BYTES >> 20,
			 strerror(errno));
		destroy(w);
		return NULL;
	}
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
		return NULL;
	}
	if (writer)
		*writer = w;
	return f;
}

void sq_log_writer_stats(const struct sq_log_writer *w, struct sq_log_writer_stats *out)
{
	*out = (struct sq_log_writer_stats){
		.ring_bytes = w->cap, .max_fill_bytes = w->max_fill,
		.waits = w->waits, .wait_us = w->wait_ns / 1000,
	};
}

bool sq_log_writer_place(struct sq_log_writer *w, int cpu)
{
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return pthread_setaffinity_np(w->thread, sizeof(set), &set) == 0;
}
