/* SIGINT and SIGTERM taken through a signalfd, so that they never interrupt a program
 * half-way: it reads the fd in its loop and ends cleanly (every exit path releases what was
 * created). */
#ifndef SQ_STOP_SIGNALS_H
#define SQ_STOP_SIGNALS_H

/* Blocks SIGINT and SIGTERM and returns a non-blocking, close-on-exec signalfd for them,
 * or -1 with errno set. */
int sq_stop_signals_fd(void);

#endif
