/* Command line of squall-http (see workloads/README.md). */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "http_client.h"
#include "http_inline_after.h"
#include "http_request.h"
#include "http_workloads.h"
#include "wl_log.h"
#include "wl_options.h"
#include "wl_parse.h"
#include "wl_signal.h"
#include "wl_time.h"

static const char usage[] =
    "usage: squall-http --connect ADDR:PORT (--workload LABEL | --objects MAIN,INLINE,...)\n"
    "                   [--http 1.0|1.1] [--parallel N] [--persistent 1|2] [--pipeline]\n"
    "                   [--inline-after first|complete|BYTES] [--delayed-acks]\n"
    "                   [--request-size 350] [--timeout DUR] [--host NAME]\n"
    "                   [--start-offset DUR] [--tos N] [--log FILE]\n"
    "       squall-http --list-workloads | --help | --version\n";

static const struct option options[] = {
    {"connect", required_argument, NULL, 0},  {"workload", required_argument, NULL, 0},
    {"objects", required_argument, NULL, 0},  {"http", required_argument, NULL, 0},
    {"parallel", required_argument, NULL, 0}, {"persistent", required_argument, NULL, 0},
    {"pipeline", no_argument, NULL, 0},       {"request-size", required_argument, NULL, 0},
    {"timeout", required_argument, NULL, 0},  {"host", required_argument, NULL, 0},
    {"start-offset", required_argument, NULL, 0}, {"tos", required_argument, NULL, 0},
    {"log", required_argument, NULL, 0},      {"list-workloads", no_argument, NULL, 0},
    {"inline-after", required_argument, NULL, 0}, {"delayed-acks", no_argument, NULL, 0},
    WL_INFO_OPTIONS,                          {NULL, 0, NULL, 0},
};
static const struct wl_cli cli_spec = {"squall-http", usage, options};

struct cli {
    struct http_config cfg;
    bool have_objects, list, parallel_given, persistent_given;
};

static int parse_objects(struct http_config *cfg, const char *text)
{
    char *copy = strdup(text);
    int rc = copy ? 0 : -1;
    cfg->object_count = 0;
    for (char *save = NULL, *item = copy ? strtok_r(copy, ",", &save) : NULL; item && rc == 0;
         item = strtok_r(NULL, ",", &save)) {
        if (cfg->object_count == HTTP_MAX_OBJECTS) {
            fprintf(stderr, "--objects: at most %d objects per page, got more in '%s'\n", HTTP_MAX_OBJECTS, text);
            rc = -1;
            break;
        }
        rc = wl_parse_uint("--objects (each size in bytes)", item, 1, 1ull << 40, &cfg->sizes[cfg->object_count++]);
    }
    if (rc == 0 && cfg->object_count == 0) {
        fprintf(stderr, "--objects: expected a comma-separated list of sizes in bytes, main object first, got '%s'\n", text);
        rc = -1;
    }
    free(copy);
    return rc;
}

static int use_workload(struct http_config *cfg, const char *label)
{
    const struct http_workload *w = http_workload_find(label);
    if (!w) {
        fprintf(stderr, "--workload: unknown label '%s'; known labels: ", label);
        http_workloads_print_labels(stderr);
        fputs(" (or give sizes with --objects)\n", stderr);
        return -1;
    }
    cfg->workload = w->label;
    cfg->sizes[0] = w->main_size;
    for (unsigned k = 0; k < w->inline_count; k++)
        cfg->sizes[1 + k] = w->inline_size;
    cfg->object_count = 1 + w->inline_count;
    return 0;
}

static int parse_http_version(struct http_config *cfg, const char *value)
{
    if (strcmp(value, "1.0") == 0 || strcmp(value, "1.1") == 0) {
        cfg->http11 = value[2] == '1';
        return 0;
    }
    fprintf(stderr, "--http: expected 1.0 or 1.1, got '%s'\n", value);
    return -1;
}

static int apply_option(void *config, const char *name, const char *value)
{
    struct cli *cli = config;
    struct http_config *cfg = &cli->cfg;
    uint64_t n;
    if (strcmp(name, "connect") == 0)
        return wl_parse_endpoint("--connect", value, false, &cfg->remote, &cfg->remote_len);
    if (strcmp(name, "workload") == 0 || strcmp(name, "objects") == 0) {
        if (cli->have_objects) {
            fprintf(stderr, "--%s: give either --workload or --objects, once\n", name);
            return -1;
        }
        cli->have_objects = true;
        return name[0] == 'w' ? use_workload(cfg, value) : parse_objects(cfg, value);
    }
    if (strcmp(name, "http") == 0)
        return parse_http_version(cfg, value);
    if (strcmp(name, "parallel") == 0) {
        cli->parallel_given = true;
        if (wl_parse_uint("--parallel", value, 1, HTTP_MAX_CONNS, &n) != 0)
            return -1;
        cfg->parallel = (unsigned)n;
        return 0;
    }
    if (strcmp(name, "persistent") == 0) {
        cli->persistent_given = true;
        if (wl_parse_uint("--persistent", value, 1, 2, &n) != 0)
            return -1;
        cfg->persistent = (unsigned)n;
        return 0;
    }
    if (strcmp(name, "pipeline") == 0) {
        cfg->pipeline = true;
        return 0;
    }
    if (strcmp(name, "inline-after") == 0)
        return http_inline_after_parse(value, &cfg->inline_after);
    if (strcmp(name, "delayed-acks") == 0) {
        cfg->delayed_acks = true;
        return 0;
    }
    if (strcmp(name, "request-size") == 0)
        return wl_parse_uint("--request-size", value, 1, HTTP_REQUEST_MAX / 2, &cfg->request_size);
    if (strcmp(name, "timeout") == 0)
        return wl_parse_duration_us("--timeout", value, false, &cfg->timeout_us);
    if (strcmp(name, "host") == 0) {
        cfg->host = value;
        return 0;
    }
    if (strcmp(name, "list-workloads") == 0) {
        cli->list = true;
        return 0;
    }
    return -1;
}

static const char *check_combination(const struct cli *cli)
{
    if (cli->cfg.remote_len == 0)
        return "--connect ADDR:PORT is required";
    if (!cli->have_objects)
        return "--workload LABEL or --objects SIZES is required";
    if (cli->cfg.http11 && cli->parallel_given)
        return "--parallel applies to --http 1.0; use --persistent for 1.1";
    if (!cli->cfg.http11 && (cli->persistent_given || cli->cfg.pipeline))
        return "--persistent and --pipeline apply to --http 1.1";
    return NULL;
}

/* Refuses a --request-size that cannot hold the longest request of the page. */
static int check_request_size(const struct http_config *cfg)
{
    char host[WL_ENDPOINT_STRLEN + 64], url[HTTP_URL_MAX];
    if (cfg->host)
        snprintf(host, sizeof host, "%s", cfg->host);
    else
        wl_format_endpoint(&cfg->remote, host, sizeof host);
    for (unsigned i = 0; i < cfg->object_count; i++) {
        snprintf(url, sizeof url, "/obj/%u-%llu", i, (unsigned long long)cfg->sizes[i]);
        size_t min = http_request_min_size(url, host, cfg->http11, cfg->http11);
        if (cfg->request_size < min) {
            fprintf(stderr, "--request-size: %llu bytes cannot hold the request for %s (at least %zu "
                    "bytes are needed)\n", (unsigned long long)cfg->request_size, url, min);
            return -1;
        }
    }
    return 0;
}

static int run(const struct http_config *cfg)
{
    struct http_page *page = calloc(1, sizeof *page);
    struct http_conn *conns = calloc(HTTP_MAX_CONNS, sizeof *conns);
    if (!page || !conns) {
        fprintf(stderr, "squall-http: out of memory\n");
        free(page);
        free(conns);
        return 1;
    }
    int log_failed;
    page->cfg = cfg;
    page->conns = conns;
    wl_format_endpoint(&cfg->remote, page->remote, sizeof page->remote);
    snprintf(page->host, sizeof page->host, "%s", cfg->host ? cfg->host : page->remote);
    page->log = wl_log_open(cfg->common.log_path, "squall-http", cfg->http11 ? "http/1.1" : "http/1.0",
                            "time_us\tevent\tconn\tobject\tbytes", &log_failed);
    char inline_after[HTTP_INLINE_AFTER_STRLEN];
    http_inline_after_format(cfg->inline_after, inline_after, sizeof inline_after);
    wl_log_header(page->log, "inline_after", inline_after);
    wl_log_header(page->log, "delayed_acks", cfg->delayed_acks ? "on" : "off");
    int rc = -1;
    if (!log_failed) {
        wl_sleep_us(cfg->common.start_offset_us, &wl_stop_requested);
        rc = http_page_run(page);
    } else {
        snprintf(page->error, sizeof page->error, "cannot open the --log file");
    }
    for (unsigned i = 0; i < page->conn_count; i++)
        if (conns[i].fd >= 0)
            close(conns[i].fd);
    rc = wl_log_finish(page->log, cfg->common.log_path, rc, "squall-http", page->error, sizeof page->error);
    http_page_print_summary(page, rc == 0);
    free(conns);
    free(page);
    return rc == 0 ? 0 : 1;
}

int main(int argc, char **argv)
{
    struct cli cli = {.cfg = {.parallel = 4, .persistent = 1, .inline_after = HTTP_INLINE_AFTER_COMPLETE,
                              .request_size = 350, .timeout_us = 600000000}};
    wl_common_defaults(&cli.cfg.common);
    int stop = wl_parse_long_options(argc, argv, &cli_spec, &cli.cfg.common, apply_option, &cli);
    if (stop != WL_CONTINUE)
        return stop;
    if (cli.list) {
        http_workloads_print_json(stdout);
        return 0;
    }
    /* Extra arguments are named before a missing or conflicting flag, as squall-http always did. */
    const char *problem = optind != argc ? NULL : check_combination(&cli);
    if (wl_check_arguments(argc, "squall-http", problem, usage) != 0)
        return WL_EXIT_USAGE;
    if (check_request_size(&cli.cfg) != 0)
        return WL_EXIT_USAGE;
    wl_install_signal_handlers();
    return run(&cli.cfg);
}
