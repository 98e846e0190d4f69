/* Options every generator accepts (--start-offset, --tos, --log, --help, --version) and the
 * command-line skeleton of the generators with a `send` and a `recv` mode. */
#ifndef WL_OPTIONS_H
#define WL_OPTIONS_H

#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>

/* WL_CONTINUE: the command line is parsed and the program goes on; the others are exit
 * statuses. */
enum { WL_CONTINUE = -1, WL_EXIT_USAGE = 2 };

/* Every table of long options ends with these (then the NULL entry). */
#define WL_INFO_OPTIONS {"help", no_argument, NULL, 0}, {"version", no_argument, NULL, 0}

struct wl_common_options {
    int64_t start_offset_us;
    int tos;            /* -1: leave the default */
    const char *log_path;
};

/* One command line: the program (named by --version), its usage text (printed on stdout by
 * --help, on stderr after a mistake) and its long options. */
struct wl_cli {
    const char *program;
    const char *usage;
    const struct option *options;
};

void wl_common_defaults(struct wl_common_options *o);

/* Applies one long option of a mode that is not a common option to that mode's config;
 * 0 on success, -1 on a bad value (message printed) or an unknown name. */
typedef int (*wl_option_handler)(void *config, const char *name, const char *value);
/* Runs one mode (argv[0] is the mode's name); returns the process exit status. */
typedef int (*wl_mode_runner)(int argc, char **argv);

/* Applies every common long option of argv to common, the others to apply on config.
 * Returns WL_CONTINUE, or the exit status to return at once: 0 after answering --help or
 * --version, WL_EXIT_USAGE after printing usage at the first option that is unknown or has a
 * bad value. Options are taken in order: the first of these wins. */
int wl_parse_long_options(int argc, char **argv, const struct wl_cli *cli,
                          struct wl_common_options *common, wl_option_handler apply, void *config);
/* After wl_parse_long_options: names missing (a required flag left out; NULL if none) or else
 * any argument that is not an option as "command: problem" with usage and returns
 * WL_EXIT_USAGE; 0 when there is no problem. */
int wl_check_arguments(int argc, const char *command, const char *missing, const char *usage);
/* One mode of a generator with `send` and `recv` modes: its command line, its name in
 * messages ("squall-bulk send"), how its own options apply to its config and which required
 * flag its config still lacks (a message like "--listen ADDR:PORT is required", or NULL;
 * extra_arguments: argv holds arguments that are not options). */
struct wl_mode {
    struct wl_cli cli;
    const char *command;
    wl_option_handler apply;
    const char *(*missing)(const void *config, bool extra_arguments);
};
/* The common defaults, then argv's options (wl_parse_long_options), then the checks of
 * wl_check_arguments with the mode's missing flag. WL_CONTINUE: config is ready to run. */
int wl_parse_mode(int argc, char **argv, const struct wl_mode *mode,
                  struct wl_common_options *common, void *config);
/* main() of a generator: answers --help and --version given instead of a mode, installs the
 * signal handlers and runs `send` or `recv` by argv[1]. */
int wl_main(int argc, char **argv, const char *program, const char *usage,
            wl_mode_runner run_send, wl_mode_runner run_recv);

#endif
