/* A minimal JSON object writer for the one-line summaries (no nesting beyond what the
 * summaries need: objects and arrays of objects). Writes into a growing buffer. */
#ifndef WL_JSON_H
#define WL_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct wl_json {
    char *buf;
    size_t len;
    size_t cap;
    bool need_comma;
};

void wl_json_init(struct wl_json *j);
void wl_json_free(struct wl_json *j);
void wl_json_begin_object(struct wl_json *j, const char *key); /* key NULL: top level / in array */
void wl_json_end_object(struct wl_json *j);
void wl_json_begin_array(struct wl_json *j, const char *key);
void wl_json_end_array(struct wl_json *j);
void wl_json_str(struct wl_json *j, const char *key, const char *value);
void wl_json_int(struct wl_json *j, const char *key, int64_t value);
void wl_json_num(struct wl_json *j, const char *key, double value);
void wl_json_bool(struct wl_json *j, const char *key, bool value);
/* Inits j and opens a generator's summary: "tool", "mode" (left out when NULL), "ok" and, when
 * not ok, "error" (workloads/README.md); the caller adds its own keys, ends and prints it. */
void wl_json_begin_summary(struct wl_json *j, const char *tool, const char *mode, bool ok, const char *error);
/* Writes the buffer and a newline to out and flushes it. */
void wl_json_print(struct wl_json *j, FILE *out);

#endif
