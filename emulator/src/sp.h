/* The Simulation Process: sockets, timer, signals and the link model around
 * one run (emulator/PROTOCOL.md). */
#ifndef SQ_SP_H
#define SQ_SP_H

#include <stdbool.h>
#include <stddef.h>

#include "config.h"

enum sq_exit {
	SQ_EXIT_OK = 0,
	SQ_EXIT_USAGE = 1,
	SQ_EXIT_RUNTIME = 2,
	SQ_EXIT_PEER_LOST = 3,
};

/* Runs until STOP, a signal or a lost peer; returns the process exit code. The
 * configuration has passed sq_config_check (config_check.h). */
int sq_sp_run(const struct sq_emu_config *cfg);

#endif
