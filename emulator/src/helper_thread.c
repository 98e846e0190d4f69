#include "helper_thread.h"

#include <signal.h>

int sq_helper_thread_start(pthread_t *thread, const pthread_attr_t *attr, void *(*run)(void *), void *arg,
			  const char *name)
{
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	int rc = pthread_create(thread, attr, run, arg);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc == 0)
		pthread_setname_np(*thread, name);
	return rc;
}
