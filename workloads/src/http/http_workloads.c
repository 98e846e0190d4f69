#include "http_workloads.h"

#include <string.h>

/* Sizes from Saarto 2003 (slide "Workloads") = the first values of IIP report table 5:
 * main small 6288, medium 12576, large 71788; in-line small 2096, medium 8384. Keep in step
 * with scenarios/profiles/workloads.toml (tests/test_workload_labels.py compares them). */
static const struct http_workload workloads[] = {
    {"s+2s", 6288, 2096, 2},  {"s+2m", 6288, 8384, 2},  {"s+8m", 6288, 8384, 8},
    {"m+2m", 12576, 8384, 2}, {"m+8m", 12576, 8384, 8}, {"l+8m", 71788, 8384, 8},
};

const struct http_workload *http_workload_find(const char *label)
{
    for (size_t i = 0; i < sizeof workloads / sizeof workloads[0]; i++)
        if (strcmp(workloads[i].label, label) == 0)
            return &workloads[i];
    return NULL;
}

void http_workloads_print_json(FILE *out)
{
    fputc('{', out);
    for (size_t i = 0; i < sizeof workloads / sizeof workloads[0]; i++) {
        const struct http_workload *w = &workloads[i];
        fprintf(out, "%s\"%s\":[%llu", i ? "," : "", w->label, (unsigned long long)w->main_size);
        for (unsigned k = 0; k < w->inline_count; k++)
            fprintf(out, ",%llu", (unsigned long long)w->inline_size);
        fputc(']', out);
    }
    fputs("}\n", out);
}

void http_workloads_print_labels(FILE *out)
{
    for (size_t i = 0; i < sizeof workloads / sizeof workloads[0]; i++)
        fprintf(out, "%s%s", i ? " " : "", workloads[i].label);
}
