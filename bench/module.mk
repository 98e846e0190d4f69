# squall-naive-relay: the benchmark's TUN <-> TUN reference (bench/naive_relay.c).
# It reuses the NPA's TUN and libnl netconf modules rather than copying them.
bench_CFLAGS = -Icommon $(NL_CFLAGS)
PROGRAMS += squall-naive-relay
squall-naive-relay_SRCS = bench/naive_relay.c $(NPA_NET_SRCS) $(VERSION_SRCS) $(STOP_SIGNALS_SRCS)
squall-naive-relay_LIBS = $(NL_LIBS)
