/* Helper threads of the emulator (the log writer, the standby delivery thread). */
#ifndef SQ_HELPER_THREAD_H
#define SQ_HELPER_THREAD_H

#include <pthread.h>

/* pthread_create with every signal blocked in the new thread (signals are for
 * the event loop's signalfd), then names it (how ps, top and traces show it).
 * Returns pthread_create's result. */
int sq_helper_thread_start(pthread_t *thread, const pthread_attr_t *attr, void *(*run)(void *), void *arg,
			  const char *name);

#endif
