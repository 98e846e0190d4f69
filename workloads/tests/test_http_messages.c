/* Exact-size requests and the incremental response parser (pipelined responses). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "../src/http/http_request.h"
#include "../src/http/http_response.h"

static void request_has_exactly_the_configured_size(void **state)
{
    (void)state;
    char buf[1024];
    for (size_t size = 100; size <= 600; size += 50) {
        int n = http_request_build(buf, sizeof buf, size, "/obj/0-6288", "198.18.40.1:8080", true, size == 350);
        assert_int_equal(n, (int)size);
        assert_int_equal(strlen(buf), size);
        assert_memory_equal(buf, "GET /obj/0-6288 HTTP/1.1\r\n", 26);
        assert_memory_equal(buf + size - 4, "\r\n\r\n", 4);
    }
    assert_int_equal(http_request_build(buf, sizeof buf, 350, "/obj/0-6288", "h", false, false), 350);
    assert_non_null(strstr(buf, "HTTP/1.0\r\nHost: h\r\nX-Pad: "));
    assert_null(strstr(buf, "Connection"));
}

static void request_too_small_is_refused(void **state)
{
    (void)state;
    char buf[1024];
    size_t min = http_request_min_size("/obj/0-6288", "h", false, false);
    assert_int_equal(http_request_build(buf, sizeof buf, min - 1, "/obj/0-6288", "h", false, false), -1);
    assert_int_equal(http_request_build(buf, sizeof buf, min, "/obj/0-6288", "h", false, false), (int)min);
}

static void pipelined_responses_split_at_content_length(void **state)
{
    (void)state;
    const char *two = "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nabcde"
                      "HTTP/1.1 200 OK\r\ncontent-length: 3\r\n\r\nxyz";
    struct http_response r;
    http_response_reset(&r);
    size_t len = strlen(two);
    size_t used = 0;
    /* fed one byte at a time, as a slow link would deliver it */
    while (r.state != HTTP_RESP_DONE)
        used += http_response_feed(&r, (const uint8_t *)two + used, 1);
    assert_int_equal(r.status, 200);
    assert_int_equal(r.body_bytes, 5);
    http_response_reset(&r);
    used += http_response_feed(&r, (const uint8_t *)two + used, len - used);
    assert_int_equal(used, len);
    assert_int_equal(r.state, HTTP_RESP_DONE);
    assert_int_equal(r.body_bytes, 3);
}

static void body_without_length_ends_at_eof(void **state)
{
    (void)state;
    const char *resp = "HTTP/1.0 404 Not Found\r\n\r\nnope";
    struct http_response r;
    http_response_reset(&r);
    assert_int_equal(http_response_feed(&r, (const uint8_t *)resp, strlen(resp)), strlen(resp));
    assert_int_equal(r.state, HTTP_RESP_BODY);
    http_response_eof(&r);
    assert_int_equal(r.state, HTTP_RESP_DONE);
    assert_int_equal(r.status, 404);
    assert_int_equal(r.body_bytes, 4);
}

static bool closes(const char *header)
{
    struct http_response r;
    http_response_reset(&r);
    http_response_feed(&r, (const uint8_t *)header, strlen(header));
    assert_int_equal(r.state, HTTP_RESP_DONE);
    return r.connection_close;
}

static void connection_close_is_a_token_of_the_connection_field(void **state)
{
    (void)state;
    assert_true(closes("HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"));
    assert_true(closes("HTTP/1.1 200 OK\r\nconnection: Keep-Alive, CLOSE\r\nContent-Length: 0\r\n\r\n"));
    assert_false(closes("HTTP/1.1 200 OK\r\nConnection: keep-alive\r\nContent-Length: 0\r\n\r\n"));
    assert_false(closes("HTTP/1.1 200 OK\r\nConnection: closed\r\nContent-Length: 0\r\n\r\n"));
    assert_false(closes("HTTP/1.1 200 OK\r\nContent-Length: 0\r\nX-Note: close\r\n\r\n"));
}

static void garbage_is_an_error(void **state)
{
    (void)state;
    const char *resp = "SSH-2.0-OpenSSH\r\n\r\n";
    struct http_response r;
    http_response_reset(&r);
    http_response_feed(&r, (const uint8_t *)resp, strlen(resp));
    assert_int_equal(r.state, HTTP_RESP_ERROR);
    assert_non_null(r.error);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(request_has_exactly_the_configured_size),
        cmocka_unit_test(request_too_small_is_refused),
        cmocka_unit_test(pipelined_responses_split_at_content_length),
        cmocka_unit_test(body_without_length_ends_at_eof),
        cmocka_unit_test(connection_close_is_a_token_of_the_connection_field),
        cmocka_unit_test(garbage_is_an_error),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
