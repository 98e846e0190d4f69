#include "wl_options.h"

#include <stdio.h>
#include <string.h>

#include "wl_parse.h"
#include "wl_signal.h"

void wl_common_defaults(struct wl_common_options *o)
{
    o->start_offset_us = 0;
    o->tos = -1;
    o->log_path = NULL;
}

int wl_common_option(struct wl_common_options *o, const char *name, const char *value)
{
    if (strcmp(name, "start-offset") == 0)
        return wl_parse_duration_us("--start-offset", value, true, &o->start_offset_us) == 0 ? 1 : -1;
    if (strcmp(name, "tos") == 0)
        return wl_parse_tos("--tos", value, &o->tos) == 0 ? 1 : -1;
    if (strcmp(name, "log") == 0) {
        o->log_path = value;
        return 1;
    }
    return 0;
}

int wl_parse_long_options(int argc, char **argv, const struct option *options,
                          wl_option_handler apply, void *config, const char *usage)
{
    int idx, opt;
    while ((opt = getopt_long(argc, argv, "", options, &idx)) != -1) {
        if (opt != 0 || apply(config, options[idx].name, optarg) != 0) {
            fputs(usage, stderr);
            return -1;
        }
    }
    return 0;
}

const char *wl_options_problem(int argc, const char *missing)
{
    if (missing)
        return missing;
    return optind != argc ? "unexpected extra arguments" : NULL;
}

int wl_usage_error(const char *command, const char *problem, const char *usage)
{
    fprintf(stderr, "%s: %s\n%s", command, problem, usage);
    return WL_EXIT_USAGE;
}

int wl_main(int argc, char **argv, const char *program, const char *usage,
            wl_mode_runner run_send, wl_mode_runner run_recv)
{
    if (argc < 2) {
        fputs(usage, stderr);
        return WL_EXIT_USAGE;
    }
    wl_install_signal_handlers();
    if (strcmp(argv[1], "send") == 0)
        return run_send(argc - 1, argv + 1);
    if (strcmp(argv[1], "recv") == 0)
        return run_recv(argc - 1, argv + 1);
    fprintf(stderr, "%s: expected mode 'send' or 'recv', got '%s'\n%s", program, argv[1], usage);
    return WL_EXIT_USAGE;
}
