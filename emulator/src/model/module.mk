# The link model: pure C, no I/O. The emulator program links $(MODEL_SRCS).
# It includes nothing but its own headers (and the C library's).
emulator/src/model_CFLAGS :=
MODEL_SRCS := $(addprefix emulator/src/model/,link_config.c rng.c dist.c channel.c rate_schedule.c \
	link_check.c action_heap.c pkt_ring.c decided_out.c link_model.c capacity_trace.c outage.c \
	router_queue.c router.c router_check.c router_disciplines.c \
	router_fifo.c router_pfifo.c router_bfifo.c router_red.c router_head_drop.c \
	error_draw.c netem_config.c netem_rand.c netem_loss.c netem_dist.c netem_delay.c netem_stage.c \
	netem_check.c)

# Unit tests (cmocka, virtual time). test_model_support.c is shared by the model tests.
UNIT_TESTS += test_rng test_dist test_channel test_model_link test_model_arq test_model_reference
test_rng_SRCS = emulator/tests/test_rng.c $(MODEL_SRCS)
test_rng_LIBS = -lcmocka -lm
test_dist_SRCS = emulator/tests/test_dist.c $(MODEL_SRCS)
test_dist_LIBS = -lcmocka -lm
test_channel_SRCS = emulator/tests/test_channel.c $(MODEL_SRCS)
test_channel_LIBS = -lcmocka -lm
test_model_link_SRCS = emulator/tests/test_model_link.c emulator/tests/test_model_support.c $(MODEL_SRCS)
test_model_link_LIBS = -lcmocka -lm
test_model_arq_SRCS = emulator/tests/test_model_arq.c emulator/tests/test_model_support.c $(MODEL_SRCS)
test_model_arq_LIBS = -lcmocka -lm
test_model_reference_SRCS = emulator/tests/test_model_reference.c emulator/tests/test_model_support.c $(MODEL_SRCS)
test_model_reference_LIBS = -lcmocka -lm

# The router stage (LINK_MODEL.md "The router stage").
UNIT_TESTS += test_router_red test_router test_router_device
test_router_red_SRCS = emulator/tests/test_router_red.c $(MODEL_SRCS)
test_router_red_LIBS = -lcmocka -lm
test_router_SRCS = emulator/tests/test_router.c emulator/tests/test_model_support.c $(MODEL_SRCS)
test_router_LIBS = -lcmocka -lm
test_router_device_SRCS = emulator/tests/test_router_device.c emulator/tests/test_model_support.c $(MODEL_SRCS)
test_router_device_LIBS = -lcmocka -lm

# Decided outs (LINK_MODEL.md "Decided outs").
UNIT_TESTS += test_model_decided
test_model_decided_SRCS = emulator/tests/test_model_decided.c emulator/tests/test_model_support.c $(MODEL_SRCS)
test_model_decided_LIBS = -lcmocka -lm

# Recorded capacity traces (LINK_MODEL.md "Recorded capacity traces").
UNIT_TESTS += test_capacity_trace
test_capacity_trace_SRCS = emulator/tests/test_capacity_trace.c emulator/tests/test_model_support.c $(MODEL_SRCS)
test_capacity_trace_LIBS = -lcmocka -lm

# Outages (LINK_MODEL.md "Outages").
UNIT_TESTS += test_outage
test_outage_SRCS = emulator/tests/test_outage.c emulator/tests/test_model_support.c $(MODEL_SRCS)
test_outage_LIBS = -lcmocka -lm

# The netem stage and error draws by time (LINK_MODEL.md "The netem stage", "Random numbers").
UNIT_TESTS += test_model_netem
test_model_netem_SRCS = emulator/tests/test_model_netem.c emulator/tests/test_model_support.c $(MODEL_SRCS)
test_model_netem_LIBS = -lcmocka -lm
