/* SIGINT/SIGTERM set a stop flag (no SA_RESTART, so blocking calls return EINTR); SIGPIPE
 * is ignored so a peer's reset is an error return, not a silent death. */
#ifndef WL_SIGNAL_H
#define WL_SIGNAL_H

#include <signal.h>

extern volatile sig_atomic_t wl_stop_requested;
void wl_install_signal_handlers(void);

#endif
