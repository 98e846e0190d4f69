#include "records_args.h"

#include <stdio.h>
#include <string.h>

#include "squall_version.h"

int sq_records_args(int argc, char **argv, const char *program, const char *usage)
{
	if (sq_version_asked(argc, argv, program))
		return 0;
	if (argc == 2 && strcmp(argv[1], "--help") == 0) {
		fputs(usage, stdout);
		return 0;
	}
	if (argc < 2 || argc > 3) {
		fputs(usage, stderr);
		return 2;
	}
	return -1;
}
