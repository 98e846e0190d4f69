# The link model: pure C, no I/O. The emulator program links $(MODEL_SRCS).
MODEL_SRCS := $(addprefix emulator/src/model/,rng.c dist.c channel.c rate_schedule.c \
	link_check.c action_heap.c pkt_ring.c link_model.c)
