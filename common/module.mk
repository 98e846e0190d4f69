# Code shared by the emulator and the NPA: the wire header, UDP GSO send grouping, the run token's file
# and the kernel's boot id (the shared clock). Its sources include each other only; its tests include its headers.
common_CFLAGS := -Icommon

COMMON_SRCS := common/wire.c common/boot_id.c common/udp_gso.c common/token_file.c common/stop_signals.c
STOP_SIGNALS_SRCS := common/stop_signals.c
# How late things happened, as a histogram (the emulator's deliveries, the NPA's releases); needs -lm.
LATENESS_SRCS := common/lateness.c
# The one parser of durations, rates, sizes, counts and HOST:PORT (all programs).
VALUE_PARSE_SRCS := common/value_parse.c common/host_port.c
# The squall version of --version (any program: add $(VERSION_SRCS) to its sources).
VERSION_SRCS := common/squall_version.c

# scripts/squall-version runs on every make; the header changes (and squall_version.c is
# recompiled, the programs relinked) only when the version does.
SQUALL_VERSION_HEADER := $(BUILD)/gen/squall_version_value.h
.PHONY: squall-version-check
squall-version-check:
$(SQUALL_VERSION_HEADER): squall-version-check
	@mkdir -p $(@D)
	@version=$$(scripts/squall-version) && \
	  printf '#define SQUALL_VERSION "%s"\n' "$$version" > $@.tmp
	@if cmp -s $@.tmp $@; then rm -f $@.tmp; else mv -f $@.tmp $@; fi
$(patsubst %,%/common/squall_version.o,$(BUILD)/obj $(BUILD)/san $(BUILD)/fuzzobj): \
  $(SQUALL_VERSION_HEADER)
$(patsubst %,%/common/squall_version.o,$(BUILD)/obj $(BUILD)/san $(BUILD)/fuzzobj): \
  BASE_CFLAGS += -I$(BUILD)/gen

UNIT_TESTS += test_value_parse
test_value_parse_SRCS = common/tests/test_value_parse.c $(VALUE_PARSE_SRCS)
test_value_parse_LIBS := -lcmocka

UNIT_TESTS += test_token_file
test_token_file_SRCS = common/tests/test_token_file.c common/token_file.c
test_token_file_LIBS := -lcmocka
