/* Command line of squall-bulk: `send` and `recv` modes (see workloads/README.md). */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "bulk.h"
#include "wl_parse.h"
#include "wl_signal.h"

enum { EXIT_USAGE = 2 };

static const char usage[] =
    "usage: squall-bulk send --connect ADDR:PORT [--count 90] [--length 2096] [--nodelay]\n"
    "                        [--start-offset DUR] [--tos N] [--log FILE]\n"
    "       squall-bulk recv --listen ADDR:PORT [--connections 1] [--tos N] [--log FILE]\n";

static const struct option send_options[] = {
    {"connect", required_argument, NULL, 0}, {"count", required_argument, NULL, 0},
    {"length", required_argument, NULL, 0},  {"nodelay", no_argument, NULL, 0},
    {"start-offset", required_argument, NULL, 0}, {"tos", required_argument, NULL, 0},
    {"log", required_argument, NULL, 0},     {NULL, 0, NULL, 0},
};

static const struct option recv_options[] = {
    {"listen", required_argument, NULL, 0}, {"connections", required_argument, NULL, 0},
    {"start-offset", required_argument, NULL, 0}, {"tos", required_argument, NULL, 0},
    {"log", required_argument, NULL, 0},    {NULL, 0, NULL, 0},
};

static int send_option(struct bulk_send_config *c, const char *name, const char *value, bool *have_remote)
{
    int common = wl_common_option(&c->common, name, value);
    if (common != 0)
        return common > 0 ? 0 : -1;
    if (strcmp(name, "connect") == 0) {
        *have_remote = true;
        return wl_parse_endpoint("--connect", value, false, &c->remote, &c->remote_len);
    }
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

static int recv_option(struct bulk_recv_config *c, const char *name, const char *value, bool *have_local)
{
    int common = wl_common_option(&c->common, name, value);
    if (common != 0)
        return common > 0 ? 0 : -1;
    if (strcmp(name, "listen") == 0) {
        *have_local = true;
        return wl_parse_endpoint("--listen", value, true, &c->local, &c->local_len);
    }
    if (strcmp(name, "connections") == 0)
        return wl_parse_uint("--connections", value, 1, 1024, &c->connections);
    return -1;
}

static int run_send(int argc, char **argv)
{
    struct bulk_send_config c = {.count = 90, .length = 2096};
    wl_common_defaults(&c.common);
    bool have_remote = false;
    int idx, opt;
    while ((opt = getopt_long(argc, argv, "", send_options, &idx)) != -1) {
        if (opt != 0 || send_option(&c, send_options[idx].name, optarg, &have_remote) != 0) {
            fputs(usage, stderr);
            return EXIT_USAGE;
        }
    }
    if (optind != argc || !have_remote) {
        fprintf(stderr, "squall-bulk send: %s\n%s", have_remote ? "unexpected extra arguments"
                : "--connect ADDR:PORT is required", usage);
        return EXIT_USAGE;
    }
    return bulk_send(&c);
}

static int run_recv(int argc, char **argv)
{
    struct bulk_recv_config c = {.connections = 1};
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
        fprintf(stderr, "squall-bulk recv: %s\n%s", have_local ? "unexpected extra arguments"
                : "--listen ADDR:PORT is required", usage);
        return EXIT_USAGE;
    }
    return bulk_recv(&c);
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
    fprintf(stderr, "squall-bulk: expected mode 'send' or 'recv', got '%s'\n%s", argv[1], usage);
    return EXIT_USAGE;
}
