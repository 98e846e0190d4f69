# The analysis's fast capture reader (analysis/README.md, "Packet records"); it and the log
# reader take gzip-compressed files too (zlib).
# Its sources include each other by relative path and libpcap's system header.
analysis_CFLAGS := -Icommon
PROGRAMS += squall-capture-records
squall-capture-records_SRCS = analysis/src/capture_records.c analysis/src/packet_parse.c analysis/src/gz_input.c \
	analysis/src/records_args.c $(VERSION_SRCS)
squall-capture-records_LIBS = -lpcap -lz

UNIT_TESTS += test_analysis_parse
test_analysis_parse_SRCS = analysis/tests/test_packet_parse.c analysis/src/packet_parse.c
test_analysis_parse_LIBS = -lcmocka

# Header extraction must survive any bytes a capture can hold.
FUZZERS += fuzz_packet_parse
fuzz_packet_parse_SRCS = analysis/fuzz/fuzz_packet_parse.c analysis/src/packet_parse.c
fuzz_packet_parse_LIBS =

# The analysis's fast emulator log reader (read/emulog.py falls back to Python on odd lines).
PROGRAMS += squall-log-records
squall-log-records_SRCS = analysis/src/log_records.c analysis/src/log_parse.c analysis/src/gz_input.c \
	analysis/src/records_args.c $(VERSION_SRCS)
squall-log-records_LIBS = -lz

# The log reader must survive any bytes a log file can hold.
FUZZERS += fuzz_log_parse
fuzz_log_parse_SRCS = analysis/fuzz/fuzz_log_parse.c analysis/src/log_parse.c
fuzz_log_parse_LIBS =
