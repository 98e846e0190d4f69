/* The emulator's event loop: the UDP socket to the NPAs, the control socket, signals, the
 * timer and the link model around one run. emulator/PROTOCOL.md calls this process the SP
 * (Simulation Process, after Seawind), the name its wire role keeps (SQ_ROLE_SP). */
#ifndef SQ_EVENT_LOOP_H
#define SQ_EVENT_LOOP_H

#include <stdbool.h>
#include <stddef.h>

#include "config.h"
#include "exit_codes.h"

/* Runs until STOP, a signal or a lost peer; returns the process exit code. The
 * configuration has passed sq_config_check (config_check.h). */
int sq_event_loop_run(const struct sq_emu_config *cfg);

#endif
