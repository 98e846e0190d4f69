/* Command line of squall-udp: `send` and `recv` modes (see workloads/README.md). */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "udp.h"
#include "udp_payload.h"
#include "wl_options.h"

static const char usage[] =
    "usage: squall-udp send --connect ADDR:PORT --size BYTES --rate RATE (--duration DUR | --count N)\n"
    "                       [--start-offset DUR] [--tos N] [--log FILE]\n"
    "       squall-udp recv --listen ADDR:PORT [--duration DUR] [--idle-timeout DUR]\n"
    "                       [--tos N] [--log FILE]\n"
    "       squall-udp --help | --version\n"
    "RATE: 32kbit, 1.5Mbit, 64000bit (UDP payload bits/s), 30pps, or max\n";

static const struct option send_options[] = {
    {"connect", required_argument, NULL, 0}, {"size", required_argument, NULL, 0},
    {"rate", required_argument, NULL, 0},    {"duration", required_argument, NULL, 0},
    {"count", required_argument, NULL, 0},   {"start-offset", required_argument, NULL, 0},
    {"tos", required_argument, NULL, 0},     {"log", required_argument, NULL, 0},
    WL_INFO_OPTIONS,                         {NULL, 0, NULL, 0},
};

static const struct option recv_options[] = {
    {"listen", required_argument, NULL, 0},       {"duration", required_argument, NULL, 0},
    {"idle-timeout", required_argument, NULL, 0}, {"start-offset", required_argument, NULL, 0},
    {"tos", required_argument, NULL, 0},          {"log", required_argument, NULL, 0},
    WL_INFO_OPTIONS,                              {NULL, 0, NULL, 0},
};

static int send_option(void *config, const char *name, const char *value)
{
    struct udp_send_config *c = config;
    if (strcmp(name, "connect") == 0)
        return wl_parse_endpoint("--connect", value, false, &c->remote, &c->remote_len);
    if (strcmp(name, "size") == 0)
        return wl_parse_uint("--size", value, UDP_PAYLOAD_HEADER, UDP_PAYLOAD_MAX, &c->size);
    if (strcmp(name, "rate") == 0) {
        c->rate_text = value;
        return wl_parse_rate("--rate", value, &c->rate);
    }
    if (strcmp(name, "duration") == 0)
        return wl_parse_duration_us("--duration", value, false, &c->duration_us);
    if (strcmp(name, "count") == 0)
        return wl_parse_uint("--count", value, 1, UDP_SEQ_LIMIT, &c->count);
    return -1;
}

static int recv_option(void *config, const char *name, const char *value)
{
    struct udp_recv_config *c = config;
    if (strcmp(name, "listen") == 0)
        return wl_parse_endpoint("--listen", value, true, &c->local, &c->local_len);
    if (strcmp(name, "duration") == 0)
        return wl_parse_duration_us("--duration", value, false, &c->duration_us);
    if (strcmp(name, "idle-timeout") == 0)
        return wl_parse_duration_us("--idle-timeout", value, false, &c->idle_timeout_us);
    return -1;
}

static const char *send_missing(const void *config, bool extra_arguments)
{
    const struct udp_send_config *c = config;
    if (extra_arguments)    /* named before a missing flag, as squall-udp always did */
        return NULL;
    if (c->remote_len == 0)
        return "--connect ADDR:PORT is required";
    if (c->size == 0)
        return "--size BYTES is required";
    if (!c->rate_text)
        return "--rate RATE is required";
    if (!c->duration_us && !c->count)
        return "--duration DUR or --count N is required";
    return NULL;
}

static const char *recv_missing(const void *config, bool extra_arguments)
{
    (void)extra_arguments;
    return ((const struct udp_recv_config *)config)->local_len == 0 ? "--listen ADDR:PORT is required"
                                                                    : NULL;
}

static const struct wl_mode send_mode = {
    {"squall-udp", usage, send_options}, "squall-udp send", send_option, send_missing};
static const struct wl_mode recv_mode = {
    {"squall-udp", usage, recv_options}, "squall-udp recv", recv_option, recv_missing};

static int run_send(int argc, char **argv)
{
    struct udp_send_config c = {0};
    int stop = wl_parse_mode(argc, argv, &send_mode, &c.common, &c);
    return stop != WL_CONTINUE ? stop : udp_send(&c);
}

static int run_recv(int argc, char **argv)
{
    struct udp_recv_config c = {0};
    int stop = wl_parse_mode(argc, argv, &recv_mode, &c.common, &c);
    return stop != WL_CONTINUE ? stop : udp_recv(&c);
}

int main(int argc, char **argv)
{
    return wl_main(argc, argv, "squall-udp", usage, run_send, run_recv);
}
