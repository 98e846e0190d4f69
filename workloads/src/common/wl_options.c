#include "wl_options.h"

#include <string.h>

#include "wl_parse.h"

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
