/* squall-bulk: TTCP-like bulk TCP transfer (IIP report 5.2). */
#ifndef BULK_H
#define BULK_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include "wl_options.h"

struct bulk_send_config {
    struct sockaddr_storage remote;
    socklen_t remote_len;
    uint64_t count;
    uint64_t length;
    bool nodelay;
    struct wl_common_options common;
};

struct bulk_recv_config {
    struct sockaddr_storage local;
    socklen_t local_len;
    uint64_t connections;
    bool delayed_acks; /* TCP_QUICKACK = 0 on each connection and after every read */
    struct wl_common_options common;
};

/* Both return the process exit status and print the JSON summary. */
int bulk_send(const struct bulk_send_config *cfg);
int bulk_recv(const struct bulk_recv_config *cfg);

#endif
