/* The keys of the process, [channel] and [down]/[up] sections (emulator/CONFIG.md). */
#ifndef SQ_CONFIG_LINK_KEYS_H
#define SQ_CONFIG_LINK_KEYS_H

#include "config_keys.h"

extern const struct key_spec sq_process_keys[];
extern const struct key_spec sq_channel_keys[];
extern const struct key_spec sq_direction_keys[];

#endif
