#include "wl_json.h"

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

void wl_json_init(struct wl_json *j)
{
    *j = (struct wl_json){0};
}

void wl_json_free(struct wl_json *j)
{
    free(j->buf);
    *j = (struct wl_json){0};
}

static void append(struct wl_json *j, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int need = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (need < 0)
        return;
    if (j->len + (size_t)need + 1 > j->cap) {
        size_t cap = (j->cap ? j->cap * 2 : 1024) + (size_t)need;
        char *grown = realloc(j->buf, cap);
        if (!grown)
            abort(); /* out of memory while reporting: nothing sensible is left to do */
        j->buf = grown;
        j->cap = cap;
    }
    va_start(ap, fmt);
    vsnprintf(j->buf + j->len, j->cap - j->len, fmt, ap);
    va_end(ap);
    j->len += (size_t)need;
}

static void append_string(struct wl_json *j, const char *s)
{
    append(j, "\"");
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            append(j, "\\%c", c);
        else if (c < 0x20)
            append(j, "\\u%04x", c);
        else
            append(j, "%c", c);
    }
    append(j, "\"");
}

static void key_prefix(struct wl_json *j, const char *key)
{
    if (j->need_comma)
        append(j, ",");
    if (key) {
        append_string(j, key);
        append(j, ":");
    }
    j->need_comma = true;
}

/* An object or an array: its opening bracket, its first member needs no comma. */
static void open_bracket(struct wl_json *j, const char *key, const char *bracket)
{
    key_prefix(j, key);
    append(j, bracket);
    j->need_comma = false;
}

static void close_bracket(struct wl_json *j, const char *bracket)
{
    append(j, bracket);
    j->need_comma = true;
}

void wl_json_begin_object(struct wl_json *j, const char *key)
{
    open_bracket(j, key, "{");
}

void wl_json_end_object(struct wl_json *j)
{
    close_bracket(j, "}");
}

void wl_json_begin_array(struct wl_json *j, const char *key)
{
    open_bracket(j, key, "[");
}

void wl_json_end_array(struct wl_json *j)
{
    close_bracket(j, "]");
}

void wl_json_str(struct wl_json *j, const char *key, const char *value)
{
    key_prefix(j, key);
    append_string(j, value);
}

void wl_json_int(struct wl_json *j, const char *key, int64_t value)
{
    key_prefix(j, key);
    append(j, "%" PRId64, value);
}

void wl_json_num(struct wl_json *j, const char *key, double value)
{
    key_prefix(j, key);
    if (isfinite(value))
        append(j, "%.6g", value);
    else
        append(j, "null");
}

void wl_json_bool(struct wl_json *j, const char *key, bool value)
{
    key_prefix(j, key);
    append(j, value ? "true" : "false");
}

void wl_json_print(struct wl_json *j, FILE *out)
{
    fprintf(out, "%s\n", j->buf ? j->buf : "{}");
    fflush(out);
}

void wl_json_begin_summary(struct wl_json *j, const char *tool, const char *mode, bool ok, const char *error)
{
    wl_json_init(j);
    wl_json_begin_object(j, NULL);
    wl_json_str(j, "tool", tool);
    if (mode)
        wl_json_str(j, "mode", mode);
    wl_json_bool(j, "ok", ok);
    if (!ok)
        wl_json_str(j, "error", error);
}
