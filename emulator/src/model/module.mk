# The link model: pure C, no I/O. The emulator program links $(MODEL_SRCS).
# It includes nothing but its own headers (and the C library's).
emulator/src/model_CFLAGS :=
MODEL_SRCS := $(addprefix emulator/src/model/,link_config.c rng.c dist.c channel.c rate_schedule.c \
	link_check.c action_heap.c pkt_ring.c decided_out.c link_model.c capacity_trace.c outage.c \
	router_queue.c router.c router_check.c router_key_check.c router_disciplines.c \
	cell_config.c cell_scheduler.c cell_round_robin.c cell_proportional_fair.c \
	router_fifo.c router_pfifo.c router_bfifo.c router_red.c router_head_drop.c router_codel.c router_fq_codel.c \
	router_pie.c router_dualpi2.c \
	error_draw.c netem_config.c netem_rand.c netem_loss.c netem_dist.c netem_delay.c netem_stage.c \
	netem_check.c)

# Unit tests (cmocka, virtual time): emulator/tests/NAME.c with the model, cmocka and libm;
# the second list also with test_model_support.c, which the model tests share. The router
# stage: test_router*, LINK_MODEL.md "The router stage"; decided outs: test_model_decided;
# test_capacity_trace, test_outage and test_model_netem: "Recorded capacity traces", "Outages",
# "The netem stage" and "Random numbers".
MODEL_TESTS := test_rng test_dist test_channel test_router_red test_router_codel test_router_pie
MODEL_TESTS_WITH_SUPPORT := test_model_link test_model_arq test_model_reference test_router \
	test_router_device test_router_dualpi2 test_model_decided test_capacity_trace test_outage test_model_netem \
	test_cell_reference test_cell
UNIT_TESTS += $(MODEL_TESTS) $(MODEL_TESTS_WITH_SUPPORT)
$(foreach t,$(MODEL_TESTS),$(eval $(t)_SRCS = emulator/tests/$(t).c $$(MODEL_SRCS)))
$(foreach t,$(MODEL_TESTS_WITH_SUPPORT),\
	$(eval $(t)_SRCS = emulator/tests/$(t).c emulator/tests/test_model_support.c $$(MODEL_SRCS)))
$(foreach t,$(MODEL_TESTS) $(MODEL_TESTS_WITH_SUPPORT),$(eval $(t)_LIBS = -lcmocka -lm))
