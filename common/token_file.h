/* The run token read from a file (emulator/PROTOCOL.md, "The run token"): the way the
 * runner hands it to the emulator and the NPAs without putting it on a command line,
 * where every local user can read it in /proc/PID/cmdline. */
#ifndef SQ_TOKEN_FILE_H
#define SQ_TOKEN_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The file holds exactly 16 hexadecimal digits (an optional 0x in front, an optional
 * newline after). A regular file must not be readable or writable by group or others
 * (mode 0600 or stricter); a pipe or an inherited descriptor (/dev/fd/N) may be read
 * too. On failure err names the path and what is wrong, never the file's content. */
bool sq_token_file_read(const char *path, uint64_t *token, char *err, size_t errlen);

/* The text of a token, exactly 16 hexadecimal digits ("0x" allowed in front); false
 * for anything else. */
bool sq_token_parse(const char *text, size_t len, uint64_t *token);

#endif
