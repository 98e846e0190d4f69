/* The TUN device: created through /dev/net/tun (TUN cannot be created over
 * rtnetlink), in the calling thread's network namespace. It is not made
 * persistent, so it disappears when the returned fd is closed. */
#ifndef NPA_TUN_H
#define NPA_TUN_H

#include <stddef.h>

/* Creates TUN device name (IFF_TUN | IFF_NO_PI) and returns its non-blocking,
 * close-on-exec fd, or -1 with a sentence in err. An existing device of that
 * name is an error: squall-npa removes only what it created. */
int npa_tun_create(const char *name, char *err, size_t errlen);

#endif
