/* squall-emulator's exit codes (emulator/PROTOCOL.md, "Exit codes"). */
#ifndef SQ_EXIT_CODES_H
#define SQ_EXIT_CODES_H

enum sq_exit {
	SQ_EXIT_OK = 0,
	SQ_EXIT_USAGE = 1,
	SQ_EXIT_RUNTIME = 2,
	SQ_EXIT_PEER_LOST = 3,
};

#endif
