/* The running kernel's boot id (/proc/sys/kernel/random/boot_id): two programs that read the
 * same one run on the same kernel, which the wire's shared-clock extension needs (wire.h). */
#ifndef SQ_BOOT_ID_H
#define SQ_BOOT_ID_H

#include <stdbool.h>

#include "wire.h"

/* Fills out with the 36 characters of the boot id; false if it cannot be read. */
bool sq_boot_id(char out[SQ_WIRE_BOOT_ID_LEN]);

#endif
