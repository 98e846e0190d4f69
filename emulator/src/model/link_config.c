/* The names of a link configuration's directions and channel states (messages, the log). */
#include "link_config.h"

const char *sq_dir_name(enum sq_dir dir)
{
	return dir == SQ_DOWN ? "down" : dir == SQ_UP ? "up" : "?";
}

const char *sq_state_name(enum sq_state state)
{
	return state == SQ_GOOD ? "good" : state == SQ_BAD ? "bad" : "?";
}
