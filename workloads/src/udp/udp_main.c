/* Command line of squall-udp: `send` and `recv` modes (see workloads/README.md). */
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "udp.h"
#include "udp_payload.h"
#include "wl_signal.h"

enum { EXIT_USAGE = 2 };

static const char usage[] =
    "usage: squall-udp send --connect ADDR:PORT --size BYTES --rate RATE (--duration DUR | --count N)\n"
    "                       [--start-offset DUR] [--tos N] [--log FILE]\n"
    "       squall-udp recv --listen ADDR:PORT [--duration DUR] [--idle-timeout DUR]\n"
    "                       [--tos N] [--log FILE]\n"
    "RATE: 32kbit, 1.5Mbit, 64000bit (UDP payload bits/s), 30pps, or max\n";

static const struct option send_options[] = {
    {"connect", required_argument, NULL, 0}, {"size", required_argument, NULL, 0},
    {"rate", required_argument, NULL, 0},    {"duration", required_argument, NULL, 0},
    {"count", required_argument, NULL, 0},   {"start-offset", required_argument, NULL, 0},
    {"tos", required_argument, NULL, 0},     {"log", required_argument, NULL, 0},
    {NULL, 0, NULL, 0},
};

static const struct option recv_options[] = {
    {"listen", required_argument, NULL, 0},       {"duration", required_argument, NULL, 0},
    {"idle-timeout", required_argument, NULL, 0}, {"start-offset", required_argument, NULL, 0},
    {"tos", required_argument, NULL, 0},          {"log", required_argument, NULL, 0},
    {NULL, 0, NULL, 0},
};

static int send_option(struct udp_send_config *c, const char *name, const char *value)
{
    int common = wl_common_option(&c->common, name, value);
    if (common != 0)
        return common > 0 ? 0 : -1;
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

static int recv_option(struct udp_recv_config *c, const char *name, const char *value, bool *have_local)
{
    int common = wl_common_option(&c->common, name, value);
    if (common != 0)
        return common > 0 ? 0 : -1;
    if (strcmp(name, "listen") == 0) {
        *have_local = true;
        return wl_parse_endpoint("--listen", value, true, &c->local, &c->local_len);
    }
    if (strcmp(name, "duration") == 0)
        return wl_parse_duration_us("--duration", value, false, &c->duration_us);
    if (strcmp(name, "idle-timeout") == 0)
        return wl_parse_duration_us("--idle-timeout", value, false, &c->idle_timeout_us);
    return -1;
}

static const char *missing_send_flag(const struct udp_send_config *c)
{
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

static int run_send(int argc, char **argv)
{
    struct udp_send_config c = {0};
    wl_common_defaults(&c.common);
    int idx, opt;
    while ((opt = getopt_long(argc, argv, "", send_options, &idx)) != -1) {
        if (opt != 0 || send_option(&c, send_options[idx].name, optarg) != 0) {
            fputs(usage, stderr);
            return EXIT_USAGE;
        }
    }
    const char *missing = optind != argc ? "unexpected extra arguments" : missing_send_flag(&c);
    if (missing) {
        fprintf(stderr, "squall-udp send: %s\n%s", missing, usage);
        return EXIT_USAGE;
    }
    return udp_send(&c);
}

static int run_recv(int argc, char **argv)
{
    struct udp_recv_config c = {0};
    wl_common_defaults(&c.common);
    bool have_local = false;
    int idx, opt;
    while ((opt = getopt_long(argc, argv, "", recv_options, &idx)) != -1) {
        if (opt != 0 || recv_option(&c, recv_options[idx].name, optarg, &have_local) != 0) {
            fputs(usage, stderr);
            return EXIT_USAGE;
        }
    }
    if (optind != argc || !have_local) {
        fprintf(stderr, "squall-udp recv: %s\n%s", have_local ? "unexpected extra arguments"
                : "--listen ADDR:PORT is required", usage);
        return EXIT_USAGE;
    }
    return udp_recv(&c);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fputs(usage, stderr);
        return EXIT_USAGE;
    }
    wl_install_signal_handlers();
    if (strcmp(argv[1], "send") == 0)
        return run_send(argc - 1, argv + 1);
    if (strcmp(argv[1], "recv") == 0)
        return run_recv(argc - 1, argv + 1);
    fprintf(stderr, "squall-udp: expected mode 'send' or 'recv', got '%s'\n%s", argv[1], usage);
    return EXIT_USAGE;
}
