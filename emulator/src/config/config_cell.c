/* [cell] and the hosts' own sections (emulator/CONFIG.md "[cell]"; LINK_MODEL.md "A cell of
 * several hosts"). A host's keys are the link's own keys of the same section, applied with
 * the same setters on top of the link's values once the whole file is read. */
#include "config_cell.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config_link_keys.h"
#include "config_text.h"
#include "value_parse.h"

/* --- [cell] --------------------------------------------------------------------------- */

static const char *set_hosts(struct sq_emu_config *cfg, const struct where *w, const char *v)
{
	(void)w;
	uint64_t n;
	if (!sq_parse_count(v, SQ_CELL_MAX_HOSTS, &n) || n < 1)
		return "expected a count of hosts in [1, 16]";
	cfg->link.cell.hosts = (uint32_t)n;
	return NULL;
}

static const char *set_scheduler(struct sq_emu_config *cfg, const struct where *w, const char *v)
{
	(void)w;
	if (strcmp(v, "round_robin") == 0)
		cfg->link.cell.scheduler = SQ_CELL_ROUND_ROBIN;
	else if (strcmp(v, "proportional_fair") == 0)
		cfg->link.cell.scheduler = SQ_CELL_PROPORTIONAL_FAIR;
	else
		return "expected 'round_robin' or 'proportional_fair'";
	return NULL;
}

static const char *set_pf_window(struct sq_emu_config *cfg, const struct where *w, const char *v)
{
	(void)w;
	uint64_t n;
	if (!sq_parse_count(v, SQ_CELL_MAX_PF_WINDOW, &n) || n < 1)
		return "expected a window in frames in [1, 1000000] like 100";
	cfg->link.cell.pf_window = (uint32_t)n;
	return NULL;
}

/* One address: IPv4 or IPv6 text; false if it is neither. */
static bool parse_address(const char *text, struct sq_cell_address *a)
{
	memset(a, 0, sizeof *a);
	if (inet_pton(AF_INET, text, a->addr) == 1)
		a->family = 4;
	else if (inet_pton(AF_INET6, text, a->addr) == 1)
		a->family = 6;
	return a->family != 0;
}

/* addresses = A1, A2, ...: host K's address is the K-th (checked against hosts at the end). */
static const char *set_addresses(struct sq_emu_config *cfg, const struct where *w, const char *v)
{
	(void)w;
	static const char expected[] = "expected the hosts' addresses, host 1 first, separated by commas, "
				       "like 198.19.7.2, 198.19.7.3 (IPv4 or IPv6, at most 16)";
	char buf[sizeof cfg->cell_addresses_text];
	if (strlen(v) >= sizeof buf)
		return expected;
	strcpy(buf, v);
	size_t n = 0;
	for (char *p = buf;;) {
		char *comma = strchr(p, ',');
		if (comma)
			*comma = '\0';
		if (n == SQ_CELL_MAX_HOSTS || !parse_address(sq_config_trim(p), &cfg->cell_addresses[n]))
			return expected;
		n++;
		if (!comma)
			break;
		p = comma + 1;
	}
	cfg->n_cell_addresses = n;
	strcpy(cfg->cell_addresses_text, v);
	return NULL;
}

const struct key_spec sq_cell_keys[] = {
	{ "hosts", set_hosts, false },
	{ "scheduler", set_scheduler, false },
	{ "pf_window", set_pf_window, false },
	{ "addresses", set_addresses, false },
	{ NULL, NULL, false },
};

/* --- the hosts' sections ---------------------------------------------------------------- */

/* What a host may have of its own: not the cell's capacity, not the channel's trace file or
 * error-draw mode, not the outages and the netem stage (yet: docs/cell.md). */
static const char *const host_channel_keys[] = { "initial", "start", "good", "bad", NULL };
static const char *const host_direction_keys[] = {
	"mtu", "delay", "send_buffer", "recv_buffer", "error_good", "error_bad",
	"arq_retransmissions", "arq_delay", "in_order", NULL,
};

static const struct key_spec *section_table(int section)
{
	return section < 0 ? sq_channel_keys : sq_direction_keys;
}

static const char *section_name(int section)
{
	return section < 0 ? "channel" : section == SQ_UP ? "up" : "down";
}

bool sq_cell_host_section(const struct sq_emu_config *cfg, const char *name, int *host,
			  int *section, const char **problem)
{
	if (strncmp(name, "host.", 5) != 0)
		return false;
	char *end;
	long k = strtol(name + 5, &end, 10);
	*problem = NULL;
	*host = (int)k;
	if (end == name + 5 || *end != '.' || name[5] < '1' || name[5] > '9') {
		*problem = "expected [host.K.channel], [host.K.down] or [host.K.up] with K a host from 1";
		return true;
	}
	if (strcmp(end + 1, "channel") == 0)
		*section = -1;
	else if (strcmp(end + 1, "down") == 0)
		*section = SQ_DOWN;
	else if (strcmp(end + 1, "up") == 0)
		*section = SQ_UP;
	else
		*problem = "expected [host.K.channel], [host.K.down] or [host.K.up]";
	if (!*problem && (k < 1 || k > SQ_CELL_MAX_HOSTS))
		*problem = "K is outside [1, 16] (cell.hosts)";
	if (!*problem && cfg->n_host_overrides == SQ_MAX_HOST_OVERRIDES)
		*problem = "more than 512 keys and sections of hosts";
	for (size_t i = 0; !*problem && i < cfg->n_host_overrides; i++) {
		const struct sq_host_override *o = &cfg->host_overrides[i];
		if (o->host == k && o->section == *section)
			*problem = "section appears twice";
	}
	return true;
}

static int key_index(int section, const char *key)
{
	const char *const *allowed = section < 0 ? host_channel_keys : host_direction_keys;
	bool ok = false;
	for (int i = 0; allowed[i] && !ok; i++)
		ok = strcmp(allowed[i], key) == 0;
	const struct key_spec *table = section_table(section);
	for (int i = 0; ok && table[i].name; i++)
		if (strcmp(table[i].name, key) == 0)
			return i;
	return -1;
}

const char *sq_cell_record(struct sq_emu_config *cfg, int host, int section, const char *key,
			   const char *value, unsigned line)
{
	int k = key_index(section, key);
	if (k < 0)
		return section < 0 ? "unknown key for a host (a host may set initial, start, good, bad)"
				   : "unknown key for a host (a host may set mtu, delay, send_buffer, "
				     "recv_buffer, error_good, error_bad, arq_retransmissions, arq_delay, in_order)";
	for (size_t i = 0; i < cfg->n_host_overrides; i++) {
		const struct sq_host_override *o = &cfg->host_overrides[i];
		if (o->host == host && o->section == section && o->key == k)
			return "key appears twice";
	}
	if (strlen(value) >= SQ_HOST_VALUE_MAX)
		return "value longer than 127 bytes";
	if (cfg->n_host_overrides == SQ_MAX_HOST_OVERRIDES)
		return "more than 512 keys and sections of hosts";
	struct sq_host_override *o = &cfg->host_overrides[cfg->n_host_overrides++];
	*o = (struct sq_host_override){ .host = (uint8_t)host, .section = (int8_t)section,
					.key = (uint8_t)k, .line = line };
	strcpy(o->value, value);
	return NULL;
}

void sq_cell_mark_section(struct sq_emu_config *cfg, int host, int section, unsigned line)
{
	if (cfg->n_host_overrides < SQ_MAX_HOST_OVERRIDES)
		cfg->host_overrides[cfg->n_host_overrides++] = (struct sq_host_override){
			.host = (uint8_t)host, .section = (int8_t)section, .key = SQ_HOST_SECTION_MARK,
			.line = line };
}

static bool apply(struct sq_emu_config *cfg, const struct sq_host_override *o, char *err,
		  size_t errlen)
{
	const struct key_spec *spec = &section_table(o->section)[o->key];
	if (o->section < 0 && cfg->trace_path[0]) {
		snprintf(err, errlen, "%s:%u: host.%u.channel.%s: the link's channel is a trace "
			 "(channel.trace), which a host cannot change", cfg->source, o->line, o->host,
			 spec->name);
		return false;
	}
	struct where w = { o->section == SQ_UP ? SQ_UP : SQ_DOWN, 0 };
	const char *expected = spec->set(cfg, &w, o->value);
	if (expected)
		snprintf(err, errlen, "%s:%u: host.%u.%s.%s: %s, got '%s'", cfg->source, o->line,
			 o->host, section_name(o->section), spec->name, expected, o->value);
	return expected == NULL;
}

/* Host k's values: the link's, then its own keys in file order (the setters write into
 * cfg->link, which is restored afterwards). */
static bool build_host(struct sq_emu_config *cfg, uint32_t k, char *err, size_t errlen)
{
	struct sq_channel_config channel = cfg->link.channel;
	struct sq_direction_config dir[SQ_DIRS];
	memcpy(dir, cfg->link.dir, sizeof dir);
	bool ok = true;
	for (size_t i = 0; i < cfg->n_host_overrides && ok; i++)
		if (cfg->host_overrides[i].host == k && cfg->host_overrides[i].key != SQ_HOST_SECTION_MARK)
			ok = apply(cfg, &cfg->host_overrides[i], err, errlen);
	struct sq_host_config *h = &cfg->hosts[k - 1];
	h->channel = cfg->link.channel;
	memcpy(h->dir, cfg->link.dir, sizeof h->dir);
	h->outages = cfg->link.outages;
	cfg->link.channel = channel;
	memcpy(cfg->link.dir, dir, sizeof dir);
	return ok;
}

bool sq_cell_finish(struct sq_emu_config *cfg, char *err, size_t errlen)
{
	uint32_t hosts = cfg->link.cell.hosts ? cfg->link.cell.hosts : 1;
	cfg->link.cell.host = NULL;
	if (cfg->n_cell_addresses && cfg->n_cell_addresses != hosts) {
		snprintf(err, errlen, "%s: cell.addresses: %zu addresses for %u host%s (cell.hosts); expected "
			 "one per host", cfg->source, cfg->n_cell_addresses, hosts, hosts == 1 ? "" : "s");
		return false;
	}
	if (cfg->n_host_overrides == 0)
		return true;
	for (size_t i = 0; i < cfg->n_host_overrides; i++) {
		const struct sq_host_override *o = &cfg->host_overrides[i];
		if (o->host > hosts) {
			snprintf(err, errlen, "%s:%u: [host.%u.%s]: the cell has %u host%s (cell.hosts)",
				 cfg->source, o->line, o->host, section_name(o->section), hosts,
				 hosts == 1 ? "" : "s");
			return false;
		}
	}
	for (uint32_t k = 1; k <= hosts; k++)
		if (!build_host(cfg, k, err, errlen))
			return false;
	cfg->link.cell.host = cfg->hosts;
	return true;
}

void sq_cell_share_trace(struct sq_emu_config *cfg)
{
	for (uint32_t k = 0; cfg->link.cell.host && k < cfg->link.cell.hosts; k++) {
		cfg->hosts[k].channel.trace = cfg->link.channel.trace;
		cfg->hosts[k].channel.trace_len = cfg->link.channel.trace_len;
	}
}
