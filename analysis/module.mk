# The analysis's fast capture reader (analysis/README.md, "Packet records").
PROGRAMS += squall-capture-records
squall-capture-records_SRCS = analysis/src/capture_records.c analysis/src/packet_parse.c
squall-capture-records_LIBS = -lpcap

# Header extraction must survive any bytes a capture can hold.
FUZZERS += fuzz-packet-parse
fuzz-packet-parse_SRCS = analysis/fuzz/fuzz_packet_parse.c analysis/src/packet_parse.c
fuzz-packet-parse_LIBS =
