# Traffic generators (workloads/README.md): squall-bulk, squall-udp, squall-http.
WL_COMMON_SRCS = $(VALUE_PARSE_SRCS) $(VERSION_SRCS) workloads/src/common/wl_time.c workloads/src/common/wl_parse.c \
  workloads/src/common/wl_net.c workloads/src/common/wl_json.c workloads/src/common/wl_log.c \
  workloads/src/common/wl_signal.c workloads/src/common/wl_options.c
# The generators include their shared headers (all prefixed wl_) without a path.
workloads_CFLAGS := -Icommon -Iworkloads/src/common

PROGRAMS += squall-bulk
squall-bulk_SRCS = $(WL_COMMON_SRCS) workloads/src/bulk/bulk_main.c workloads/src/bulk/bulk_send.c \
  workloads/src/bulk/bulk_recv.c
squall-bulk_LIBS := -lm

PROGRAMS += squall-udp
squall-udp_SRCS = $(WL_COMMON_SRCS) workloads/src/udp/udp_main.c workloads/src/udp/udp_send.c \
  workloads/src/udp/udp_recv.c workloads/src/udp/udp_payload.c workloads/src/udp/udp_stats.c
squall-udp_LIBS := -lm

PROGRAMS += squall-http
squall-http_SRCS = $(WL_COMMON_SRCS) workloads/src/http/http_main.c workloads/src/http/http_page.c \
  workloads/src/http/http_conn.c workloads/src/http/http_summary.c workloads/src/http/http_request.c \
  workloads/src/http/http_response.c workloads/src/http/http_workloads.c workloads/src/http/http_inline_after.c
squall-http_LIBS := -lm

# Unit tests (cmocka, sanitizer build).
UNIT_TESTS += test_wl_parse test_udp_stats test_http_messages test_http_inline_after
test_wl_parse_SRCS = workloads/tests/test_wl_parse.c workloads/src/common/wl_parse.c $(VALUE_PARSE_SRCS)
test_wl_parse_LIBS := -lcmocka -lm
test_udp_stats_SRCS = workloads/tests/test_udp_stats.c workloads/src/udp/udp_stats.c workloads/src/udp/udp_payload.c
test_udp_stats_LIBS := -lcmocka -lm
test_http_messages_SRCS = workloads/tests/test_http_messages.c workloads/src/http/http_request.c \
  workloads/src/http/http_response.c
test_http_messages_LIBS := -lcmocka
test_http_inline_after_SRCS = workloads/tests/test_http_inline_after.c workloads/src/http/http_inline_after.c \
  $(VALUE_PARSE_SRCS)
test_http_inline_after_LIBS := -lcmocka

# libFuzzer target (make fuzz); seeds in workloads/fuzz/corpus/fuzz_http_response/.
FUZZERS += fuzz_http_response
fuzz_http_response_SRCS = workloads/fuzz/fuzz_http_response.c workloads/src/http/http_response.c
fuzz_http_response_LIBS :=
