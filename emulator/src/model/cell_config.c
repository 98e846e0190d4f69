#include "cell_config.h"

uint32_t sq_cell_hosts(const struct sq_link_config *cfg)
{
	return cfg->cell.hosts > 1 ? cfg->cell.hosts : 1;
}

const struct sq_channel_config *sq_host_channel(const struct sq_link_config *cfg, uint32_t host)
{
	return cfg->cell.host ? &cfg->cell.host[host].channel : &cfg->channel;
}

const struct sq_outage_config *sq_host_outages(const struct sq_link_config *cfg, uint32_t host)
{
	return cfg->cell.host ? &cfg->cell.host[host].outages : &cfg->outages;
}

struct sq_direction_config sq_host_direction(const struct sq_link_config *cfg, uint32_t host,
					     enum sq_dir dir)
{
	const struct sq_direction_config *cell = &cfg->dir[dir];
	struct sq_direction_config d = cfg->cell.host ? cfg->cell.host[host].dir[dir] : *cell;
	d.rate = cell->rate;
	d.rate_len = cell->rate_len;
	d.capacity = cell->capacity;
	d.overhead = cell->overhead;
	d.router = cell->router;
	return d;
}
