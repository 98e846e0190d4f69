# Code shared by the emulator and the NPA: the wire header and UDP GSO send grouping.
COMMON_SRCS := common/wire.c common/udp_gso.c
# The one parser of durations, rates, sizes, counts and HOST:PORT (all programs).
VALUE_PARSE_SRCS := common/value_parse.c common/host_port.c

UNIT_TESTS += test_value_parse
test_value_parse_SRCS = common/tests/test_value_parse.c $(VALUE_PARSE_SRCS)
test_value_parse_LIBS := -lcmocka
