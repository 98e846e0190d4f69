#include "wl_net.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

void wl_format_endpoint(const struct sockaddr_storage *addr, char *out, size_t out_size)
{
    char host[INET6_ADDRSTRLEN] = "?";
    if (addr->ss_family == AF_INET) {
        const struct sockaddr_in *v4 = (const struct sockaddr_in *)addr;
        inet_ntop(AF_INET, &v4->sin_addr, host, sizeof host);
        snprintf(out, out_size, "%s:%u", host, ntohs(v4->sin_port));
    } else if (addr->ss_family == AF_INET6) {
        const struct sockaddr_in6 *v6 = (const struct sockaddr_in6 *)addr;
        inet_ntop(AF_INET6, &v6->sin6_addr, host, sizeof host);
        snprintf(out, out_size, "[%s]:%u", host, ntohs(v6->sin6_port));
    } else {
        snprintf(out, out_size, "?");
    }
}

int wl_set_tos(int fd, int family, int tos)
{
    if (tos < 0)
        return 0;
    int rc = family == AF_INET6 ? setsockopt(fd, IPPROTO_IPV6, IPV6_TCLASS, &tos, sizeof tos)
                                : setsockopt(fd, IPPROTO_IP, IP_TOS, &tos, sizeof tos);
    if (rc != 0)
        fprintf(stderr, "--tos: setting TOS %d on the socket failed: %s\n", tos, strerror(errno));
    return rc;
}

int wl_delay_acks(int fd)
{
    int off = 0;
    return setsockopt(fd, IPPROTO_TCP, TCP_QUICKACK, &off, sizeof off);
}

void wl_local_endpoint(int fd, char *out, size_t out_size)
{
    struct sockaddr_storage local;
    socklen_t len = sizeof local;
    memset(&local, 0, sizeof local);
    if (getsockname(fd, (struct sockaddr *)&local, &len) != 0)
        local.ss_family = AF_UNSPEC;
    wl_format_endpoint(&local, out, out_size);
}

int wl_open_listener(const struct sockaddr_storage *addr, socklen_t len, int type, int tos)
{
    char where[WL_ENDPOINT_STRLEN];
    wl_format_endpoint(addr, where, sizeof where);
    int fd = socket(addr->ss_family, type | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        fprintf(stderr, "--listen: cannot create a socket for %s: %s\n", where, strerror(errno));
        return -1;
    }
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (wl_set_tos(fd, addr->ss_family, tos) != 0)
        goto fail;
    if (bind(fd, (const struct sockaddr *)addr, len) != 0) {
        fprintf(stderr, "--listen: cannot bind %s: %s (is the port in use or the address not on "
                "this host?)\n", where, strerror(errno));
        goto fail;
    }
    if (type == SOCK_STREAM && listen(fd, 128) != 0) {
        fprintf(stderr, "--listen: cannot listen on %s: %s\n", where, strerror(errno));
        goto fail;
    }
    wl_local_endpoint(fd, where, sizeof where);
    printf("listening %s\n", where);
    fflush(stdout);
    return fd;
fail:
    close(fd);
    return -1;
}
