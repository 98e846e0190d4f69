/* When a page's in-line requests may leave (--inline-after): once the main object's body has
 * come this far. "first" is its first body byte, BYTES a number of its body bytes, "complete"
 * its whole body (the default, the client's behaviour before the option existed). A
 * threshold beyond the main object's size is reached when the body is complete. Pure. */
#ifndef HTTP_INLINE_AFTER_H
#define HTTP_INLINE_AFTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define HTTP_INLINE_AFTER_FIRST 1
#define HTTP_INLINE_AFTER_COMPLETE UINT64_MAX
/* Longest spelling of http_inline_after_format, with its NUL. */
#define HTTP_INLINE_AFTER_STRLEN 24

/* "first", "complete" or BYTES (decimal, 1 or more) -> body bytes; -1 with a message naming
 * --inline-after on anything else. */
int http_inline_after_parse(const char *text, uint64_t *after);
/* "first", "complete" or the number of bytes: how the summary and the log name it. */
void http_inline_after_format(uint64_t after, char *out, size_t out_size);
/* Whether body_bytes of a main object of main_size bytes let the in-line requests leave. */
bool http_inline_after_reached(uint64_t after, uint64_t body_bytes, uint64_t main_size);

#endif
