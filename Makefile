# squall — build, test, demo, benchmarks.
#
# Each C component describes itself in <dir>/module.mk by appending to
#   PROGRAMS    (built into build/bin/),  NAME_SRCS, NAME_LIBS
#   UNIT_TESTS  (cmocka, built with sanitizers into build/tests/), NAME_SRCS, NAME_LIBS
#   FUZZERS     (libFuzzer, built with clang into build/fuzz/), NAME_SRCS, NAME_LIBS
# and declares the include paths and flags of its sources as DIR_CFLAGS (DIR a directory:
# emulator_CFLAGS, emulator/src/model_CFLAGS): a source is compiled with those of the nearest
# directory above it, its own first, that declares them (none declared: no flags). So adding
# a program never means editing this file, and no component sees another's headers or
# libraries unless it says so.

SHELL := /bin/bash
BUILD := build
CC ?= gcc
FUZZ_CC ?= clang
PYTHON := .venv/bin/python

# Recursive (=) so pkg-config runs when a recipe needs it: on a fresh machine the
# libraries are installed by the deps step, after this file has been read.
NL_CFLAGS = $(shell pkg-config --cflags libnl-3.0 libnl-route-3.0)
NL_LIBS = $(shell pkg-config --libs libnl-3.0 libnl-route-3.0)

WARN := -Wall -Wextra -Werror
BASE_CFLAGS := -std=c17 -D_GNU_SOURCE $(WARN)
# $(call src_cflags,SOURCE): the DIR_CFLAGS of the nearest directory above SOURCE that has them.
dir_cflags = $(if $(filter undefined,$(origin $(1)_CFLAGS)),$(if $(findstring /,$(1)),$(call dir_cflags,$(patsubst %/,%,$(dir $(1))))),$($(1)_CFLAGS))
src_cflags = $(call dir_cflags,$(patsubst %/,%,$(dir $(1))))
OPT_CFLAGS ?= -O2 -g
SAN_FLAGS := -O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
FUZZ_FLAGS := -O1 -g -fsanitize=fuzzer,address,undefined

PROGRAMS :=
UNIT_TESTS :=
FUZZERS :=
# Fragments may refer to each other's variables: use recursive `=` for NAME_SRCS.
include $(wildcard */module.mk */src/*/module.mk)

.PHONY: all build deps test unit pytest demo bench fuzz validate man clean distclean

all: build

# --- system and Python dependencies -------------------------------------------------
deps: $(BUILD)/.deps-stamp
$(BUILD)/.deps-stamp: scripts/install-deps requirements.lock pyproject.toml
	bash scripts/install-deps
	@mkdir -p $(BUILD) && touch $@

# --- C programs ---------------------------------------------------------------------
build: $(BUILD)/.deps-stamp $(addprefix $(BUILD)/bin/,$(PROGRAMS))

# $(1) = output dir, $(2) = name, $(3) = object dir, $(4) = compiler + flags
define link_rule
$(1)/$(2): $$(patsubst %.c,$(3)/%.o,$$($(2)_SRCS))
	@mkdir -p $$(@D)
	$(4) -o $$@ $$^ $$($(2)_LIBS)
endef

$(foreach p,$(PROGRAMS),$(eval $(call link_rule,$(BUILD)/bin,$(p),$(BUILD)/obj,$$(CC) $$(OPT_CFLAGS))))
$(foreach t,$(UNIT_TESTS),$(eval $(call link_rule,$(BUILD)/tests,$(t),$(BUILD)/san,$$(CC) $$(SAN_FLAGS))))
$(foreach f,$(FUZZERS),$(eval $(call link_rule,$(BUILD)/fuzz,$(f),$(BUILD)/fuzzobj,$$(FUZZ_CC) $$(FUZZ_FLAGS))))

$(BUILD)/obj/%.o: %.c | $(BUILD)/.deps-stamp
	@mkdir -p $(@D)
	$(CC) $(BASE_CFLAGS) $(call src_cflags,$<) $(OPT_CFLAGS) -MMD -MP -c -o $@ $<
$(BUILD)/san/%.o: %.c | $(BUILD)/.deps-stamp
	@mkdir -p $(@D)
	$(CC) $(BASE_CFLAGS) $(call src_cflags,$<) $(SAN_FLAGS) -MMD -MP -c -o $@ $<
$(BUILD)/fuzzobj/%.o: %.c | $(BUILD)/.deps-stamp
	@mkdir -p $(@D)
	$(FUZZ_CC) $(BASE_CFLAGS) $(call src_cflags,$<) -Wno-unused-command-line-argument $(FUZZ_FLAGS) -MMD -MP -c -o $@ $<

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)

# --- tests --------------------------------------------------------------------------
# C unit tests (sanitizer build) first, then pytest (unit + namespace integration).
test: build unit pytest

unit: $(BUILD)/.deps-stamp $(addprefix $(BUILD)/tests/,$(UNIT_TESTS))
	@set -e; for t in $(UNIT_TESTS); do echo "== $$t"; $(BUILD)/tests/$$t; done

pytest: build
	$(PYTHON) -m pytest $(PYTEST_ARGS)

# --- the main job -------------------------------------------------------------------
demo: build
	$(PYTHON) -m testbed.cli run scenarios/demo.toml --parallel 2

# --- benchmarks, fuzzing, long validation -------------------------------------------
bench: build
	$(PYTHON) -m bench.run

# Each fuzzer NAME may ship seed inputs in <dir>/fuzz/corpus/NAME/ (found by FUZZ_SEEDS).
# Then the Python scenario loader's property-based fuzzer (Hypothesis), for as long.
FUZZ_SECONDS ?= 60
FUZZ_SEEDS = $(wildcard */fuzz/corpus/$(1))
fuzz: $(BUILD)/.deps-stamp $(addprefix $(BUILD)/fuzz/,$(FUZZERS))
	@set -e; $(foreach f,$(FUZZERS), \
	  mkdir -p $(BUILD)/fuzz-corpus/$(f); echo "== $(f) ($(FUZZ_SECONDS) s)"; \
	  $(BUILD)/fuzz/$(f) -max_total_time=$(FUZZ_SECONDS) $(BUILD)/fuzz-corpus/$(f) $(call FUZZ_SEEDS,$(f));)
	@echo "== fuzz_scenario ($(FUZZ_SECONDS) s)"
	$(PYTHON) tests/fuzz_scenario.py --seconds $(FUZZ_SECONDS)

# The studies, reduced (about 11 min on 2 cores; `python -m validation.run --full` for all): runs in
# validation/out/, the side-by-side report in validation/report.md.
validate: build
	$(PYTHON) -m validation.run

# The man page and the bash completion, from squall's argparse parsers (committed: docs/man/).
man:
	$(PYTHON) scripts/cli-docs.py

clean:
	rm -rf $(BUILD)/bin $(BUILD)/obj $(BUILD)/san $(BUILD)/tests $(BUILD)/fuzz $(BUILD)/fuzzobj

distclean:
	rm -rf $(BUILD) .venv
