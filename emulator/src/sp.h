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

/* Lets the link model validate the configuration (exit code 1 material). */
bool sq_sp_check_config(const struct sq_emu_config *cfg, char *err, size_t errlen);

/* Runs until STOP, a signal or a lost peer; returns the process exit code. */
int sq_sp_run(const struct sq_emu_config *cfg);

#endif
