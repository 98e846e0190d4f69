# The Simulation Process (emulator/README.md). The link model's sources come
# from emulator/src/model/module.mk ($(MODEL_SRCS)).
EMU_CORE_SRCS = $(addprefix emulator/src/,units.c config_file.c pktinfo.c log_line.c \
	lateness.c peers.c packet_pool.c event_log.c ecn_mark.c)

PROGRAMS += squall-emulator
squall-emulator_SRCS = emulator/src/main.c emulator/src/sp.c emulator/src/udp_socket.c \
	emulator/src/timeline.c $(EMU_CORE_SRCS) $(MODEL_SRCS) $(COMMON_SRCS)
squall-emulator_LIBS = -lm

UNIT_TESTS += test_emu_config
test_emu_config_SRCS = emulator/tests/test_config.c emulator/src/units.c emulator/src/config_file.c
test_emu_config_LIBS = -lcmocka -lm
