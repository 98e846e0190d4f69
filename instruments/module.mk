# instruments: squall-tcp-sampler (tcp_info of every connection of a host, every interval).
instruments_CFLAGS = -Icommon -Irouter-tc/src

PROGRAMS += squall-tcp-sampler
squall-tcp-sampler_SRCS = instruments/src/tcp_sampler.c instruments/src/tcp_diag.c router-tc/src/sample_timer.c \
	$(VALUE_PARSE_SRCS) $(VERSION_SRCS) $(STOP_SIGNALS_SRCS)
