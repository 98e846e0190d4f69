/* squall-udp: CBR UDP sender and receiver (IIP report 5.2, section 6). */
#ifndef UDP_H
#define UDP_H

#include <stdint.h>
#include <sys/socket.h>

#include "wl_options.h"
#include "wl_parse.h"

struct udp_send_config {
    struct sockaddr_storage remote;
    socklen_t remote_len;
    uint64_t size;
    struct wl_rate rate;
    const char *rate_text;
    int64_t duration_us; /* 0: none */
    uint64_t count;      /* 0: none */
    struct wl_common_options common;
};

struct udp_recv_config {
    struct sockaddr_storage local;
    socklen_t local_len;
    int64_t duration_us;     /* 0: none */
    int64_t idle_timeout_us; /* 0: none */
    struct wl_common_options common;
};

int udp_send(const struct udp_send_config *cfg);
int udp_recv(const struct udp_recv_config *cfg);

#endif
