/* Validation of a whole link configuration, with messages that name the field. */
#ifndef SQ_LINK_CHECK_H
#define SQ_LINK_CHECK_H

#include <stdbool.h>
#include <stddef.h>

#include "link_config.h"

/* Limits that keep all time arithmetic of the model inside int64. */
#define SQ_MAX_ARQ_RETRANSMISSIONS 1000u
/* Bytes a link layer adds per packet: its headers, never more than an IP packet can be. */
#define SQ_MAX_OVERHEAD 65535u

/* true if cfg is usable; otherwise false with e.g.
 * "down.error[bad]: 1.5 is outside [0, 1]" in err. */
bool sq_link_config_check(const struct sq_link_config *cfg, char *err, size_t errlen);

#endif
