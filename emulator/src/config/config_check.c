/* One validator: the configuration parser has checked every value it read; this adds the
 * required process keys and the link model's own checks. */
#include "config_check.h"

#include <stdio.h>

#include "config_file.h"
#include "link_check.h"

bool sq_config_check(const struct sq_emu_config *cfg, char *err, size_t errlen)
{
	if (!sq_config_finish(cfg, err, errlen))
		return false;
	char why[512];
	if (sq_link_config_check(&cfg->link, why, sizeof(why)))
		return true;
	snprintf(err, errlen, "%.300s: %s", cfg->source, why);
	return false;
}
