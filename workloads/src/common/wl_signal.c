#include "wl_signal.h"

#include <string.h>

/* The one process-wide flag: a signal handler can only reach global state. */
volatile sig_atomic_t wl_stop_requested;

static void request_stop(int signo)
{
    (void)signo;
    wl_stop_requested = 1;
}

void wl_install_signal_handlers(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = request_stop;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
}
