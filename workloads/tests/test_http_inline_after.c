/* --inline-after: its spellings and when the main object's body lets in-line requests leave. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "../src/http/http_inline_after.h"

static void spellings_round_trip(void **state)
{
    (void)state;
    const char *texts[] = {"first", "complete", "4096", "71788"};
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) {
        uint64_t after = 0;
        char out[HTTP_INLINE_AFTER_STRLEN];
        assert_int_equal(http_inline_after_parse(texts[i], &after), 0);
        http_inline_after_format(after, out, sizeof out);
        assert_string_equal(out, texts[i]);
    }
    uint64_t after = 0;
    assert_int_equal(http_inline_after_parse("1", &after), 0); /* one byte is the first byte */
    assert_int_equal(after, HTTP_INLINE_AFTER_FIRST);
    char longest[HTTP_INLINE_AFTER_STRLEN];
    http_inline_after_format(HTTP_INLINE_AFTER_COMPLETE - 1, longest, sizeof longest);
    assert_string_equal(longest, "18446744073709551614");
}

static void anything_else_is_refused(void **state)
{
    (void)state;
    const char *bad[] = {"0", "-1", "", "First", "1k", "2096B", " 5", "18446744073709551615", "last"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        uint64_t after = 7;
        assert_int_equal(http_inline_after_parse(bad[i], &after), -1);
        assert_int_equal(after, 7);
    }
}

static void thresholds_are_body_bytes_capped_at_the_main_size(void **state)
{
    (void)state;
    const uint64_t size = 6288;
    assert_false(http_inline_after_reached(HTTP_INLINE_AFTER_FIRST, 0, size));
    assert_true(http_inline_after_reached(HTTP_INLINE_AFTER_FIRST, 1, size));
    assert_false(http_inline_after_reached(4096, 4095, size));
    assert_true(http_inline_after_reached(4096, 4096, size));
    assert_false(http_inline_after_reached(HTTP_INLINE_AFTER_COMPLETE, size - 1, size));
    assert_true(http_inline_after_reached(HTTP_INLINE_AFTER_COMPLETE, size, size));
    /* more bytes than the main object has: reached when it is complete */
    assert_false(http_inline_after_reached(10000, size - 1, size));
    assert_true(http_inline_after_reached(10000, size, size));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(spellings_round_trip),
        cmocka_unit_test(anything_else_is_refused),
        cmocka_unit_test(thresholds_are_body_bytes_capped_at_the_main_size),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
