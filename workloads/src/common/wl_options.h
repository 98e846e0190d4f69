/* Options every generator accepts: --start-offset, --tos, --log. */
#ifndef WL_OPTIONS_H
#define WL_OPTIONS_H

#include <stdint.h>

struct wl_common_options {
    int64_t start_offset_us;
    int tos;            /* -1: leave the default */
    const char *log_path;
};

void wl_common_defaults(struct wl_common_options *o);
/* Handles one of the common long options by name; returns 1 if handled, 0 if the name is
 * not a common option, -1 on a bad value (message printed). */
int wl_common_option(struct wl_common_options *o, const char *name, const char *value);

#endif
