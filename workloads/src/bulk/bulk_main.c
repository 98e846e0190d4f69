/* Command line of squall-bulk: `send` and `recv` modes (see workloads/README.md). */
#include <stdio.h>
#include <string.h>

#include "bulk.h"
#include "wl_parse.h"
#include "wl_options.h"

static const char usage[] =
    "usage: squall-bulk send --connect ADDR:PORT [--count 90] [--length 2096] [--nodelay]\n"
    "                        [--start-offset DUR] [--tos N] [--log FILE]\n"
    "       squall-bulk recv --listen ADDR:PORT [--connections 1] [--delayed-acks]\n"
    "                        [--tos N] [--log FILE]\n"
    "       squall-bulk --help | --version\n";

static const struct option send_options[] = {
    {"connect", required_argument, NULL, 0}, {"count", required_argument, NULL, 0},
    {"length", required_argument, NULL, 0},  {"nodelay", no_argument, NULL, 0},
    {"start-offset", required_argument, NULL, 0}, {"tos", required_argument, NULL, 0},
    {"log", required_argument, NULL, 0},     WL_INFO_OPTIONS, {NULL, 0, NULL, 0},
};

static const struct option recv_options[] = {
    {"listen", required_argument, NULL, 0}, {"connections", required_argument, NULL, 0},
    {"delayed-acks", no_argument, NULL, 0},
    {"start-offset", required_argument, NULL, 0}, {"tos", required_argument, NULL, 0},
    {"log", required_argument, NULL, 0},    WL_INFO_OPTIONS, {NULL, 0, NULL, 0},
};

static int send_option(void *config, const char *name, const char *value)
{
    struct bulk_send_config *c = config;
    if (strcmp(name, "connect") == 0)
        return wl_parse_endpoint("--connect", value, false, &c->remote, &c->remote_len);
    if (strcmp(name, "count") == 0)
        return wl_parse_uint("--count", value, 1, 1000000000, &c->count);
    if (strcmp(name, "length") == 0)
        return wl_parse_uint("--length", value, 1, 64 * 1024 * 1024, &c->length);
    if (strcmp(name, "nodelay") == 0) {
        c->nodelay = true;
        return 0;
    }
    return -1;
}

static int recv_option(void *config, const char *name, const char *value)
{
    struct bulk_recv_config *c = config;
    if (strcmp(name, "listen") == 0)
        return wl_parse_endpoint("--listen", value, true, &c->local, &c->local_len);
    if (strcmp(name, "connections") == 0)
        return wl_parse_uint("--connections", value, 1, 1024, &c->connections);
    if (strcmp(name, "delayed-acks") == 0) {
        c->delayed_acks = true;
        return 0;
    }
    return -1;
}

static const char *send_missing(const void *config, bool extra_arguments)
{
    (void)extra_arguments;
    return ((const struct bulk_send_config *)config)->remote_len == 0 ? "--connect ADDR:PORT is required"
                                                                      : NULL;
}

static const char *recv_missing(const void *config, bool extra_arguments)
{
    (void)extra_arguments;
    return ((const struct bulk_recv_config *)config)->local_len == 0 ? "--listen ADDR:PORT is required"
                                                                     : NULL;
}

static const struct wl_mode send_mode = {
    {"squall-bulk", usage, send_options}, "squall-bulk send", send_option, send_missing};
static const struct wl_mode recv_mode = {
    {"squall-bulk", usage, recv_options}, "squall-bulk recv", recv_option, recv_missing};

static int run_send(int argc, char **argv)
{
    struct bulk_send_config c = {.count = 90, .length = 2096};
    int stop = wl_parse_mode(argc, argv, &send_mode, &c.common, &c);
    return stop != WL_CONTINUE ? stop : bulk_send(&c);
}

static int run_recv(int argc, char **argv)
{
    struct bulk_recv_config c = {.connections = 1};
    int stop = wl_parse_mode(argc, argv, &recv_mode, &c.common, &c);
    return stop != WL_CONTINUE ? stop : bulk_recv(&c);
}

int main(int argc, char **argv)
{
    return wl_main(argc, argv, "squall-bulk", usage, run_send, run_recv);
}
