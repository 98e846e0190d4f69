# squall-emulator (emulator/README.md): the event loop (event_loop.c, peer_messages.c,
# outgoing.c, run_control.c) around the link model. The link model's sources come
# from emulator/src/model/module.mk ($(MODEL_SRCS)), the configuration parser's
# from emulator/src/config/module.mk ($(EMU_CONFIG_SRCS)). The model and the configuration
# declare their own (narrower) include paths there.
emulator_CFLAGS := -Icommon -Iemulator/src -Iemulator/src/config -Iemulator/src/model
EMU_CORE_SRCS = $(EMU_CONFIG_SRCS) $(addprefix emulator/src/,packet_inspect.c log_line.c arrival.c \
	peers.c cell_routes.c packet_pool.c send_ahead.c event_log.c log_writer.c helper_thread.c ecn_mark.c) \
	$(LATENESS_SRCS)

PROGRAMS += squall-emulator
squall-emulator_SRCS = emulator/src/main.c emulator/src/event_loop.c emulator/src/peer_messages.c emulator/src/outgoing.c \
	emulator/src/run_control.c emulator/src/standby.c emulator/src/udp_socket.c emulator/src/control_socket.c \
	emulator/src/timeline.c emulator/src/dry_run.c $(EMU_CORE_SRCS) $(MODEL_SRCS) $(COMMON_SRCS) $(VERSION_SRCS)
squall-emulator_LIBS = -lm

UNIT_TESTS += test_emu_wire test_emu_packet_inspect
test_emu_wire_SRCS = emulator/tests/test_wire.c $(COMMON_SRCS)
test_emu_wire_LIBS = -lcmocka
test_emu_packet_inspect_SRCS = emulator/tests/test_packet_inspect.c emulator/src/packet_inspect.c emulator/src/ecn_mark.c
test_emu_packet_inspect_LIBS = -lcmocka

# Log tests use the model only for its event/state names.
UNIT_TESTS += test_emu_log
test_emu_log_SRCS = emulator/tests/test_log.c emulator/src/log_line.c $(LATENESS_SRCS) \
	emulator/src/event_log.c emulator/src/log_writer.c emulator/src/helper_thread.c emulator/src/packet_inspect.c emulator/src/peers.c $(EMU_CONFIG_SRCS) \
	$(MODEL_SRCS) $(COMMON_SRCS)
test_emu_log_LIBS = -lcmocka -lm

UNIT_TESTS += test_emu_peers
test_emu_peers_SRCS = emulator/tests/test_peers.c emulator/src/peers.c emulator/src/packet_inspect.c $(COMMON_SRCS) \
	$(VALUE_PARSE_SRCS)
test_emu_peers_LIBS = -lcmocka

UNIT_TESTS += test_emu_cell_routes
test_emu_cell_routes_SRCS = emulator/tests/test_cell_routes.c emulator/src/cell_routes.c
test_emu_cell_routes_LIBS = -lcmocka

FUZZERS += fuzz_wire
fuzz_wire_SRCS = emulator/fuzz/fuzz_wire.c emulator/src/peers.c emulator/src/packet_inspect.c \
	emulator/src/log_line.c emulator/src/ecn_mark.c $(MODEL_SRCS) $(COMMON_SRCS) $(VALUE_PARSE_SRCS)
fuzz_wire_LIBS = -lm

UNIT_TESTS += test_emu_arrival
test_emu_arrival_SRCS = emulator/tests/test_arrival.c emulator/src/arrival.c
test_emu_arrival_LIBS = -lcmocka

UNIT_TESTS += test_emu_standby
test_emu_standby_SRCS = emulator/tests/test_standby.c emulator/src/standby.c emulator/src/helper_thread.c
test_emu_standby_LIBS = -lcmocka

# The whole process over loopback UDP (forks sq_event_loop_run; no root needed).
UNIT_TESTS += test_emu_loopback
test_emu_loopback_SRCS = emulator/tests/test_peers_loopback.c emulator/src/event_loop.c emulator/src/peer_messages.c emulator/src/outgoing.c \
	emulator/src/run_control.c emulator/src/standby.c emulator/src/udp_socket.c \
	emulator/src/control_socket.c \
	$(EMU_CORE_SRCS) $(MODEL_SRCS) $(COMMON_SRCS)
test_emu_loopback_LIBS = -lcmocka -lm

# squall-control: one START or STOP on the emulator's control socket (over SSH on lab hosts).
PROGRAMS += squall-control
squall-control_SRCS = emulator/src/control_client.c $(VALUE_PARSE_SRCS) $(VERSION_SRCS)
