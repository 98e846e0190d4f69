# Code shared by the emulator and the NPA.
COMMON_SRCS := common/wire.c
