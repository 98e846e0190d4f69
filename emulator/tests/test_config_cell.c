/* The cell's keys in the configuration file (emulator/CONFIG.md "[cell]"): [cell], a host's
 * own values on top of the link's, the canonical form, and the messages of bad input. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config_check.h"
#include "config_file.h"
#include "config_write.h"
#include "test_config_minimal.h"
#include "test_config_support.h"

static struct sq_emu_config *parsed(const char *before, const char *after, char *err, size_t errlen,
				    bool *ok)
{
	struct sq_emu_config *cfg = malloc(sizeof(*cfg));
	assert_non_null(cfg);
	sq_config_init(cfg);
	size_t n = strlen(before) + strlen(MINIMAL) + strlen(after) + 1;
	char *text = malloc(n);
	snprintf(text, n, "%s%s%s", before, MINIMAL, after);
	*ok = sq_config_parse(cfg, "t.conf", text, strlen(text), err, errlen);
	free(text);
	return cfg;
}

static struct sq_emu_config *must_parse(const char *before, const char *after)
{
	char err[512] = "";
	bool ok;
	struct sq_emu_config *cfg = parsed(before, after, err, sizeof err, &ok);
	if (!ok)
		fail_msg("expected the file to parse: %s", err);
	return cfg;
}

static void release(struct sq_emu_config *cfg)
{
	sq_config_release(cfg);
	free(cfg);
}

/* Without [cell]: one host, no host array, and the canonical form has no cell key (a
 * one-host log header is what it was before cells). */
static void no_cell_is_one_host(void **state)
{
	(void)state;
	struct sq_emu_config *cfg = must_parse("", "");
	assert_true(cfg->link.cell.hosts <= 1);
	assert_null(cfg->link.cell.host);
	char *text = canonical_text(cfg);
	assert_null(strstr(text, "cell."));
	assert_null(strstr(text, "host."));
	free(text);
	release(cfg);
}

/* [cell] and a host's sections, in any place of the file (here before [channel]): host 2
 * has its own bad state and down errors, every other value is the link's. */
static void hosts_get_the_links_values_and_their_own(void **state)
{
	(void)state;
	struct sq_emu_config *cfg = must_parse("", "[host.2.down]\n"
						   "error_bad = 0.9\n"
						   "arq_retransmissions = 2\n"
						   "arq_delay = 300ms\n"
						   "[cell]\n"
						   "hosts = 3\n"
						   "scheduler = proportional_fair\n"
						   "pf_window = 50\n"
						   "[host.2.channel]\n"
						   "bad = uniform(5s, 10s)\n");
	const struct sq_cell_config *c = &cfg->link.cell;
	assert_int_equal(c->hosts, 3);
	assert_int_equal(c->scheduler, SQ_CELL_PROPORTIONAL_FAIR);
	assert_int_equal(c->pf_window, 50);
	assert_ptr_equal(c->host, cfg->hosts);
	const struct sq_host_config *h2 = &c->host[1];
	assert_true(h2->dir[SQ_DOWN].error[SQ_BAD] == 0.9);
	assert_int_equal(h2->dir[SQ_DOWN].arq_retransmissions, 2);
	assert_int_equal(h2->dir[SQ_DOWN].arq_delay, 300000);
	assert_int_equal(h2->channel.length[SQ_BAD].kind, SQ_DIST_UNIFORM);
	assert_int_equal(h2->channel.length[SQ_BAD].a, 5000000);
	assert_int_equal(h2->channel.length[SQ_GOOD].a, 10000000);   /* the link's */
	assert_int_equal(h2->dir[SQ_UP].send_buffer, 4800);
	for (int k = 0; k < 3; k += 2) {
		assert_memory_equal(&c->host[k].channel, &cfg->link.channel, sizeof cfg->link.channel);
		assert_memory_equal(c->host[k].dir, cfg->link.dir, sizeof cfg->link.dir);
	}
	/* the link's own values are untouched */
	assert_true(cfg->link.dir[SQ_DOWN].error[SQ_BAD] == 0.0);
	assert_int_equal(cfg->link.channel.length[SQ_BAD].kind, SQ_DIST_FIXED);
	char err[256] = "";
	cfg->token_set = cfg->log_set = cfg->seed_set = true;
	if (!sq_config_check(cfg, err, sizeof err))
		fail_msg("the model refused the cell: %s", err);
	release(cfg);
}

/* The canonical form names every host's values; written back as sections it parses to the
 * same configuration. */
static void canonical_form_parses_back(void **state)
{
	(void)state;
	struct sq_emu_config *cfg = must_parse("", "[cell]\nhosts = 2\naddresses = 198.19.7.2, 2001:db8::3\n"
						   "[host.2.up]\ndelay = 50ms\n");
	char *text = canonical_text(cfg);
	assert_non_null(strstr(text, "cell.hosts = 2\n"));
	assert_non_null(strstr(text, "cell.scheduler = round_robin\n"));
	assert_non_null(strstr(text, "cell.pf_window = 100\n"));
	assert_non_null(strstr(text, "host.2.up.delay = 50000us\n"));
	assert_non_null(strstr(text, "host.1.up.delay = 100000us\n"));
	assert_non_null(strstr(text, "cell.addresses = 198.19.7.2, 2001:db8::3\n"));
	assert_int_equal(cfg->n_cell_addresses, 2);
	assert_int_equal(cfg->cell_addresses[0].family, 4);
	assert_int_equal(cfg->cell_addresses[0].addr[3], 2);
	assert_int_equal(cfg->cell_addresses[1].family, 6);
	assert_int_equal(cfg->cell_addresses[1].addr[15], 3);
	char *rebuilt = calloc(1, 2 * strlen(text) + 256);
	static const char *const sections[] = { "channel", "down", "up", "cell", "host.1.channel",
						"host.1.down", "host.1.up", "host.2.channel",
						"host.2.down", "host.2.up" };
	append_keys(rebuilt, text, "");
	for (size_t i = 0; i < sizeof sections / sizeof sections[0]; i++) {
		char prefix[32];
		snprintf(prefix, sizeof prefix, "%s.", sections[i]);
		strcat(strcat(strcat(rebuilt, "["), sections[i]), "]\n");
		append_keys(rebuilt, text, prefix);
	}
	struct sq_emu_config *back = malloc(sizeof *back);
	sq_config_init(back);
	char err[512] = "";
	if (!sq_config_parse(back, "back.conf", rebuilt, strlen(rebuilt), err, sizeof err))
		fail_msg("canonical output does not parse: %s\n%s", err, rebuilt);
	char *again = canonical_text(back);
	assert_string_equal(again, text);
	free(again);
	free(rebuilt);
	free(text);
	release(back);
	release(cfg);
}

struct bad_case {
	const char *after;
	const char *expected;
};

/* MINIMAL has 16 lines; what is appended starts at line 17. */
static const struct bad_case bad_cases[] = {
	{ "[cell]\nhosts = 17\n", "t.conf:18: cell.hosts: expected a count of hosts in [1, 16], got '17'" },
	{ "[cell]\nhosts = 0\n", "t.conf:18: cell.hosts: expected a count of hosts in [1, 16]" },
	{ "[cell]\nscheduler = fifo\n", "t.conf:18: cell.scheduler: expected 'round_robin' or 'proportional_fair', got 'fifo'" },
	{ "[cell]\npf_window = 0\n", "t.conf:18: cell.pf_window: expected a window in frames in [1, 1000000]" },
	{ "[cell]\ncolour = red\n", "t.conf:18: cell.colour: unknown key" },
	{ "[cell]\n[cell]\n", "t.conf:18: [cell]: section appears twice" },
	{ "[cell]\nhosts = 2\n[host.3.down]\ndelay = 1ms\n", "t.conf:19: [host.3.down]: the cell has 2 hosts (cell.hosts)" },
	{ "[host.2.down]\ndelay = 1ms\n", "t.conf:17: [host.2.down]: the cell has 1 host (cell.hosts)" },
	{ "[cell]\nhosts = 2\n[host.2.down]\nbandwidth = 1kbit\n", "t.conf:20: host.2.down.bandwidth: unknown key for a host" },
	{ "[cell]\nhosts = 2\n[host.2.down]\nerror_bad = 2\n", "t.conf:20: host.2.down.error_bad: expected a probability in [0, 1] like 0.63, got '2'" },
	{ "[cell]\nhosts = 2\n[host.2.down]\ndelay = 1ms\ndelay = 2ms\n", "t.conf:21: host.2.down.delay: key appears twice" },
	{ "[cell]\nhosts = 2\n[host.2.up]\n[host.2.up]\n", "t.conf:20: [host.2.up]: section appears twice" },
	{ "[host.0.up]\n", "t.conf:17: [host.0.up]: expected [host.K.channel], [host.K.down] or [host.K.up] with K a host from 1" },
	{ "[host.2.sideways]\n", "t.conf:17: [host.2.sideways]: expected [host.K.channel], [host.K.down] or [host.K.up]" },
	{ "[host.99.up]\n", "t.conf:17: [host.99.up]: K is outside [1, 16] (cell.hosts)" },
	{ "[cell]\nhosts = 2\n[host.2.channel]\ntrace = x.trace\n", "t.conf:20: host.2.channel.trace: unknown key for a host" },
	{ "[cell]\nhosts = 2\naddresses = 198.19.7.2\n", "t.conf: cell.addresses: 1 addresses for 2 hosts (cell.hosts); expected one per host" },
	{ "[cell]\nhosts = 2\naddresses = 198.19.7.2, mobile2\n", "t.conf:19: cell.addresses: expected the hosts' addresses" },
};

static void bad_inputs_name_line_and_key(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof bad_cases / sizeof bad_cases[0]; i++) {
		char err[512] = "";
		bool ok;
		struct sq_emu_config *cfg = parsed("", bad_cases[i].after, err, sizeof err, &ok);
		if (ok || strncmp(err, bad_cases[i].expected, strlen(bad_cases[i].expected)) != 0)
			fail_msg("case %zu: got %s '%s', expected '%s'", i, ok ? "success" : "error", err,
				 bad_cases[i].expected);
		release(cfg);
	}
}

/* What the link model refuses names the host's key: the one validator (link_check.c). */
static void the_models_checks_name_the_hosts_key(void **state)
{
	(void)state;
	struct sq_emu_config *cfg = must_parse("", "[cell]\nhosts = 2\n[host.2.up]\nsend_buffer = 100B\n");
	cfg->token_set = cfg->log_set = cfg->seed_set = true;
	char err[512] = "";
	assert_false(sq_config_check(cfg, err, sizeof err));
	assert_non_null(strstr(err, "t.conf: host.2.up.send_buffer: 100 B is below the MTU 1500 B"));
	release(cfg);
	cfg = must_parse("", "[cell]\nhosts = 2\n[down.router]\ndefault = all\n[down.router.class.all]\ndiscipline = pfifo\nlimit = 20\n");
	cfg->token_set = cfg->log_set = cfg->seed_set = true;
	assert_false(sq_config_check(cfg, err, sizeof err));
	assert_non_null(strstr(err, "down.router: a cell of 2 hosts has no router stage yet"));
	release(cfg);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(no_cell_is_one_host),
		cmocka_unit_test(hosts_get_the_links_values_and_their_own),
		cmocka_unit_test(canonical_form_parses_back),
		cmocka_unit_test(bad_inputs_name_line_and_key),
		cmocka_unit_test(the_models_checks_name_the_hosts_key),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
