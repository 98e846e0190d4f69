# squall-naive-relay: the benchmark's TUN <-> TUN reference (bench/naive_relay.c).
# It reuses the NPA's TUN and libnl netconf modules rather than copying them.
bench_CFLAGS = -Icommon $(NL_CFLAGS)
PROGRAMS += squall-naive-relay
squall-naive-relay_SRCS = bench/naive_relay.c $(NPA_NET_SRCS) $(VERSION_SRCS) $(STOP_SIGNALS_SRCS)
squall-naive-relay_LIBS = $(NL_LIBS)

# squall-model-cost: the link model's cost per packet alone, every feature on and off
# (bench/model_cost.py); the model's own sources, built as the emulator builds them.
bench/model_cost_CFLAGS := -Icommon -Iemulator/src/model
PROGRAMS += squall-model-cost
squall-model-cost_SRCS = bench/model_cost/model_cost.c $(MODEL_SRCS) $(VERSION_SRCS)
squall-model-cost_LIBS = -lm
