# hostbpf: the host profiles' BPF (the linux-2.4 TCP profile, docs/tcp-variants.md):
#   squall-hostbpf              attaches a sock_ops program for one network namespace's sockets
#   squall-host-2004.bpf.o      that program (clang -target bpf; uapi headers only, no vmlinux.h)
hostbpf_CFLAGS = -Ihostbpf/src -Icommon

PROGRAMS += squall-hostbpf
squall-hostbpf_SRCS = hostbpf/src/hostbpf.c $(VERSION_SRCS)
squall-hostbpf_LIBS = -lbpf

BPF_CC ?= clang
BPF_CFLAGS := -O2 -g -target bpf -Wall -Werror -Ihostbpf/src -I/usr/include/$(shell gcc -dumpmachine)

build: $(BUILD)/bin/squall-host-2004.bpf.o
$(BUILD)/bin/squall-host-2004.bpf.o: hostbpf/src/host_2004.bpf.c hostbpf/src/host_config.h | $(BUILD)/.deps-stamp
	@mkdir -p $(@D)
	$(BPF_CC) $(BPF_CFLAGS) -c -o $@ $<
