#include "wl_options.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "squall_version.h"
#include "wl_parse.h"
#include "wl_signal.h"

void wl_common_defaults(struct wl_common_options *o)
{
    o->start_offset_us = 0;
    o->tos = -1;
    o->log_path = NULL;
}

/* Returns 1 if name is a common option and was applied, 0 if it is not one, -1 on a bad value
 * (message printed). */
static int common_option(struct wl_common_options *o, const char *name, const char *value)
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

/* Answers --help (usage on stdout) and --version; false if name is neither. */
static bool answer_info(const char *name, const char *program, const char *usage)
{
    if (strcmp(name, "help") == 0)
        fputs(usage, stdout);
    else if (strcmp(name, "version") == 0)
        sq_print_version(stdout, program);
    else
        return false;
    return true;
}

static int apply_option(struct wl_common_options *common, wl_option_handler apply, void *config,
                        const char *name, const char *value)
{
    int handled = common_option(common, name, value);
    if (handled != 0)
        return handled > 0 ? 0 : -1;
    return apply(config, name, value);
}

int wl_parse_long_options(int argc, char **argv, const struct wl_cli *cli,
                          struct wl_common_options *common, wl_option_handler apply, void *config)
{
    int idx, opt;
    while ((opt = getopt_long(argc, argv, "", cli->options, &idx)) != -1) {
        const char *name = opt == 0 ? cli->options[idx].name : NULL;
        if (name && answer_info(name, cli->program, cli->usage))
            return 0;
        if (!name || apply_option(common, apply, config, name, optarg) != 0) {
            fputs(cli->usage, stderr);
            return WL_EXIT_USAGE;
        }
    }
    return WL_CONTINUE;
}

int wl_check_arguments(int argc, const char *command, const char *missing, const char *usage)
{
    const char *problem = missing ? missing : optind != argc ? "unexpected extra arguments" : NULL;
    if (!problem)
        return 0;
    fprintf(stderr, "%s: %s\n%s", command, problem, usage);
    return WL_EXIT_USAGE;
}

int wl_parse_mode(int argc, char **argv, const struct wl_mode *mode,
                  struct wl_common_options *common, void *config)
{
    wl_common_defaults(common);
    int stop = wl_parse_long_options(argc, argv, &mode->cli, common, mode->apply, config);
    if (stop != WL_CONTINUE)
        return stop;
    const char *missing = mode->missing(config, optind != argc);
    return wl_check_arguments(argc, mode->command, missing, mode->cli.usage) != 0 ? WL_EXIT_USAGE
                                                                                : WL_CONTINUE;
}

int wl_main(int argc, char **argv, const char *program, const char *usage,
            wl_mode_runner run_send, wl_mode_runner run_recv)
{
    if (argc < 2) {
        fputs(usage, stderr);
        return WL_EXIT_USAGE;
    }
    if (strncmp(argv[1], "--", 2) == 0 && answer_info(argv[1] + 2, program, usage))
        return 0;
    wl_install_signal_handlers();
    if (strcmp(argv[1], "send") == 0)
        return run_send(argc - 1, argv + 1);
    if (strcmp(argv[1], "recv") == 0)
        return run_recv(argc - 1, argv + 1);
    fprintf(stderr, "%s: expected mode 'send' or 'recv', got '%s'\n%s", program, argv[1], usage);
    return WL_EXIT_USAGE;
}
