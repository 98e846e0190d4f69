# squall-npa: the Network Protocol Adapter (npa/README.md).
# NPA_NET_SRCS is what squall-naive-relay (bench/) reuses to configure its TUNs.
npa_CFLAGS = -Icommon $(NL_CFLAGS)
NPA_NET_SRCS = npa/src/netspec.c npa/src/cli_values.c npa/src/tun.c npa/src/netconf.c \
	common/token_file.c $(VALUE_PARSE_SRCS)
NPA_CORE_SRCS = $(NPA_NET_SRCS) npa/src/options.c npa/src/inbound.c npa/src/counters.c \
	npa/src/sp_link.c npa/src/registration.c npa/src/relay.c npa/src/to_sp_batch.c \
	npa/src/release_queue.c $(COMMON_SRCS) $(LATENESS_SRCS)

PROGRAMS += squall-npa
squall-npa_SRCS = npa/src/main.c $(NPA_CORE_SRCS) $(VERSION_SRCS)
squall-npa_LIBS = $(NL_LIBS) -lm

UNIT_TESTS += test_npa_options test_npa_inbound
test_npa_options_SRCS = npa/tests/test_options.c npa/src/options.c npa/src/netspec.c \
	npa/src/cli_values.c $(VALUE_PARSE_SRCS) $(COMMON_SRCS)
test_npa_options_LIBS = -lcmocka
test_npa_inbound_SRCS = npa/tests/test_inbound.c npa/src/inbound.c $(COMMON_SRCS) $(VALUE_PARSE_SRCS)
test_npa_inbound_LIBS = -lcmocka
UNIT_TESTS += test_npa_release_queue
test_npa_release_queue_SRCS = npa/tests/test_release_queue.c npa/src/release_queue.c
test_npa_release_queue_LIBS = -lcmocka

FUZZERS += fuzz_npa_inbound
fuzz_npa_inbound_SRCS = npa/fuzz/fuzz_inbound.c npa/src/inbound.c $(COMMON_SRCS) $(VALUE_PARSE_SRCS)
