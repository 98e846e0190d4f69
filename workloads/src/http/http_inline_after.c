#include "http_inline_after.h"

#include <stdio.h>
#include <string.h>

#include "value_parse.h"

int http_inline_after_parse(const char *text, uint64_t *after)
{
    uint64_t bytes;
    if (strcmp(text, "first") == 0)
        *after = HTTP_INLINE_AFTER_FIRST;
    else if (strcmp(text, "complete") == 0)
        *after = HTTP_INLINE_AFTER_COMPLETE;
    else if (sq_parse_count(text, HTTP_INLINE_AFTER_COMPLETE - 1, &bytes) && bytes > 0)
        *after = bytes;
    else {
        fprintf(stderr, "--inline-after: expected first, complete or a number of bytes of the main "
                "object (1 or more), got '%s'\n", text);
        return -1;
    }
    return 0;
}

void http_inline_after_format(uint64_t after, char *out, size_t out_size)
{
    if (after == HTTP_INLINE_AFTER_FIRST)
        snprintf(out, out_size, "first");
    else if (after == HTTP_INLINE_AFTER_COMPLETE)
        snprintf(out, out_size, "complete");
    else
        snprintf(out, out_size, "%llu", (unsigned long long)after);
}

bool http_inline_after_reached(uint64_t after, uint64_t body_bytes, uint64_t main_size)
{
    return body_bytes >= (after < main_size ? after : main_size);
}
