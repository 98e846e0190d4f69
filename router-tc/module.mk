# router-tc: the queue monitor (the tc configuration itself is rendered by testbed/router/tc_render.py).
router-tc_CFLAGS = -Icommon $(NL_CFLAGS)
ROUTER_TC_MONITOR_SRCS = router-tc/src/monitor_options.c router-tc/src/sample_row.c \
	router-tc/src/sample_timer.c router-tc/src/red_marks.c router-tc/src/tc_sampler.c $(VALUE_PARSE_SRCS)

PROGRAMS += squall-queue-monitor
squall-queue-monitor_SRCS = $(ROUTER_TC_MONITOR_SRCS) $(VERSION_SRCS) $(STOP_SIGNALS_SRCS) router-tc/src/queue_monitor.c
squall-queue-monitor_LIBS = $(NL_LIBS)

UNIT_TESTS += test_queue_monitor
test_queue_monitor_SRCS = router-tc/tests/test_queue_monitor.c router-tc/src/monitor_options.c \
	router-tc/src/sample_row.c router-tc/src/sample_timer.c $(VALUE_PARSE_SRCS)
test_queue_monitor_LIBS = -lcmocka

UNIT_TESTS += test_red_marks
test_red_marks_SRCS = router-tc/tests/test_red_marks.c router-tc/src/red_marks.c
test_red_marks_LIBS = $(NL_LIBS) -lcmocka
