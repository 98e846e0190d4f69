/* The one squall version string of all C programs (scripts/squall-version: the package
 * version and the git revision of the build, e.g. "0.1.0+git.419c5dd"), written into a
 * generated header by the build (common/module.mk), and the --version line. */
#ifndef SQ_SQUALL_VERSION_H
#define SQ_SQUALL_VERSION_H

#include <stdbool.h>
#include <stdio.h>

/* The version this binary was built as. */
const char *sq_version(void);

/* Writes "PROGRAM (squall) VERSION\n" to out, e.g. "squall-http (squall) 0.1.0+git.419c5dd". */
void sq_print_version(FILE *out, const char *program);

/* "PROGRAM --version": prints the version line to stdout and returns true (the caller exits 0);
 * any other command line returns false. For programs without an option parser of their own. */
bool sq_version_asked(int argc, char **argv, const char *program);

#endif
