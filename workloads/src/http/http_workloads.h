/* The studies' HTTP workload labels (scenarios/profiles/workloads.toml; Saarto 2003, IIP
 * report tables 5 and 6): main object size + number × in-line object size. */
#ifndef HTTP_WORKLOADS_H
#define HTTP_WORKLOADS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct http_workload {
    const char *label;
    uint64_t main_size;
    uint64_t inline_size;
    unsigned inline_count;
};

/* NULL when the label is unknown. */
const struct http_workload *http_workload_find(const char *label);
/* Prints the table as one JSON object {"label": [main, inline, inline, ...], ...}. */
void http_workloads_print_json(FILE *out);
/* Prints the known labels separated by spaces (for error messages). */
void http_workloads_print_labels(FILE *out);

#endif
