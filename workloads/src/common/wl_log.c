#include "wl_log.h"

#include <errno.h>
#include <string.h>

FILE *wl_log_open(const char *path, const char *tool, const char *mode, const char *columns, int *failed)
{
    *failed = 0;
    if (!path)
        return NULL;
    FILE *log = fopen(path, "w");
    if (!log) {
        fprintf(stderr, "--log: cannot open '%s' for writing: %s\n", path, strerror(errno));
        *failed = 1;
        return NULL;
    }
    fprintf(log, "# %s log v1\n# mode\t%s\n# columns\t%s\n", tool, mode, columns);
    return log;
}

void wl_log_header(FILE *log, const char *key, const char *value)
{
    if (log)
        fprintf(log, "# %s\t%s\n", key, value);
}

int wl_log_close(FILE *log, const char *path)
{
    if (!log)
        return 0;
    int bad = ferror(log);
    if (fclose(log) != 0 || bad) {
        fprintf(stderr, "--log: writing '%s' failed\n", path);
        return -1;
    }
    return 0;
}

int wl_log_finish(FILE *log, const char *path, int rc, const char *command, char *error, size_t error_size)
{
    if (wl_log_close(log, path) != 0 && rc == 0) {
        snprintf(error, error_size, "writing the --log file failed");
        rc = -1;
    }
    if (rc != 0)
        fprintf(stderr, "%s: %s\n", command, error);
    return rc;
}
