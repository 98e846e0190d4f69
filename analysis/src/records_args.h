/* The command line both record writers share: "PROGRAM INPUT [OUTPUT]", --help, --version. */
#ifndef SQ_RECORDS_ARGS_H
#define SQ_RECORDS_ARGS_H

/* Returns -1 when argv is INPUT [OUTPUT] and the program goes on; else the exit status after
 * answering: 0 for --version or --help (usage on stdout), 2 for a wrong count of arguments
 * (usage on stderr). */
int sq_records_args(int argc, char **argv, const char *program, const char *usage);

#endif
