#include "sample_timer.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <stdbool.h>
#include <sys/prctl.h>
#include <sys/timerfd.h>
#include <unistd.h>

#define NS_PER_S 1000000000LL

struct timespec timespec_add_ns(struct timespec ts, int64_t ns)
{
	int64_t total = (int64_t)ts.tv_nsec + ns % NS_PER_S;
	ts.tv_sec += (time_t)(ns / NS_PER_S + total / NS_PER_S);
	ts.tv_nsec = (long)(total % NS_PER_S);
	if (ts.tv_nsec < 0) {
		ts.tv_nsec += NS_PER_S;
		ts.tv_sec -= 1;
	}
	return ts;
}

int sample_timer_open(struct sample_timer *timer, int64_t interval_us)
{
	timer->fd = -1;
	timer->interval_ns = interval_us * 1000;
	if (prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL) != 0)
		return -1;
	if (clock_gettime(CLOCK_MONOTONIC, &timer->start) != 0)
		return -1;
	timer->fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	if (timer->fd < 0)
		return -1;
	struct itimerspec spec = {
		.it_value = timespec_add_ns(timer->start, timer->interval_ns),
		.it_interval = timespec_add_ns((struct timespec){ 0, 0 }, timer->interval_ns),
	};
	if (timerfd_settime(timer->fd, TFD_TIMER_ABSTIME, &spec, NULL) != 0) {
		int saved = errno;
		sample_timer_close(timer);
		errno = saved;
		return -1;
	}
	return 0;
}

int64_t sample_timer_consume(struct sample_timer *timer)
{
	uint64_t expirations = 0;
	ssize_t n = read(timer->fd, &expirations, sizeof expirations);
	if (n == (ssize_t)sizeof expirations)
		return (int64_t)expirations;
	if (n < 0 && errno == EAGAIN)
		return 0;
	return -1;
}

enum sample_wait sample_timer_wait(struct sample_timer *timer, int signal_fd, uint64_t *missed,
				   const char *program)
{
	struct pollfd fds[2] = { { .fd = timer->fd, .events = POLLIN }, { .fd = signal_fd, .events = POLLIN } };
	if (poll(fds, 2, -1) < 0) {
		if (errno == EINTR)
			return SAMPLE_NOTHING;
		fprintf(stderr, "%s: waiting for the sample timer (poll): %s\n", program, strerror(errno));
		return SAMPLE_ERROR;
	}
	if (fds[1].revents & POLLIN)
		return SAMPLE_STOP;
	int64_t expirations = fds[0].revents & POLLIN ? sample_timer_consume(timer) : 0;
	if (expirations < 0) {
		fprintf(stderr, "%s: reading the sample timer: %s\n", program, strerror(errno));
		return SAMPLE_ERROR;
	}
	if (expirations == 0)
		return SAMPLE_NOTHING;
	*missed += (uint64_t)(expirations - 1);
	return SAMPLE_DUE;
}

void sample_timer_close(struct sample_timer *timer)
{
	if (timer->fd >= 0)
		close(timer->fd);
	timer->fd = -1;
}

int64_t realtime_us_since(int64_t t0_realtime_us)
{
	struct timespec now;
	clock_gettime(CLOCK_REALTIME, &now);
	return (int64_t)now.tv_sec * 1000000 + now.tv_nsec / 1000 - t0_realtime_us;
}
