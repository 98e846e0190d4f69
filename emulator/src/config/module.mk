# The emulator's configuration file (emulator/CONFIG.md): parser, keys, traces, canonical form.
# The emulator program links $(EMU_CONFIG_SRCS), and with it $(MODEL_SRCS): config_check.c
# asks the link model's own checks. It sees the value parsers and the link model, not the
# process around it.
emulator/src/config_CFLAGS := -Icommon -Iemulator/src/model
EMU_CONFIG_SRCS = $(VALUE_PARSE_SRCS) $(addprefix emulator/src/config/,config_file.c config_link_keys.c \
	config_router.c config_text.c config_trace.c config_capacity.c config_write.c config_check.c \
	config_netem.c config_cell.c)

UNIT_TESTS += test_emu_config test_emu_config_check test_emu_config_cell
test_emu_config_cell_SRCS = emulator/tests/test_config_cell.c $(EMU_CONFIG_SRCS) $(MODEL_SRCS)
test_emu_config_cell_LIBS = -lcmocka -lm
test_emu_config_SRCS = emulator/tests/test_config.c $(EMU_CONFIG_SRCS) $(MODEL_SRCS)
test_emu_config_LIBS = -lcmocka -lm
test_emu_config_check_SRCS = emulator/tests/test_config_check.c $(EMU_CONFIG_SRCS) $(MODEL_SRCS)
test_emu_config_check_LIBS = -lcmocka -lm

# The parsers must survive any bytes a configuration or trace file can hold.
FUZZERS += fuzz_config
fuzz_config_SRCS = emulator/fuzz/fuzz_config.c $(EMU_CONFIG_SRCS) $(MODEL_SRCS)
fuzz_config_LIBS = -lm
