/* The configuration file parser: every key, every unit, and the messages of bad input. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sys/stat.h>
#include <unistd.h>

#include "config_file.h"
#include "config_keys.h"
#include "config_link_keys.h"
#include "config_router.h"
#include "config_text.h"
#include "config_capacity.h"
#include "config_trace.h"
#include "config_write.h"
#include "test_config_minimal.h"
#include "test_config_support.h"

static struct sq_emu_config *new_config(void)
{
	struct sq_emu_config *cfg = malloc(sizeof(*cfg));
	assert_non_null(cfg);
	sq_config_init(cfg);
	return cfg;
}

static void free_config(struct sq_emu_config *cfg)
{
	sq_config_release(cfg);
	free(cfg);
}

static bool parse_text(struct sq_emu_config *cfg, const char *text, char *err, size_t errlen)
{
	return sq_config_parse(cfg, "t.conf", text, strlen(text), err, errlen);
}

static void test_minimal_file_and_defaults(void **state)
{
	(void)state;
	struct sq_emu_config *cfg = new_config();
	char err[512] = "";
	assert_true(parse_text(cfg, MINIMAL, err, sizeof(err)));
	assert_true(sq_config_finish(cfg, err, sizeof(err)));
	assert_int_equal(cfg->token, 0x0123456789abcdefULL);
	assert_string_equal(cfg->log_path, "run.log");
	assert_int_equal(cfg->link.seed, 7);
	assert_int_equal(cfg->link.replication, 0);
	assert_int_equal(cfg->keepalive, 1000000);
	assert_int_equal(cfg->peer_timeout, 5000000);
	assert_int_equal(cfg->autostart, SQ_AUTOSTART_NONE);
	assert_int_equal(cfg->release_ahead, 0);
	const struct sockaddr_in *a = (const void *)&cfg->listen;
	assert_int_equal(a->sin_family, AF_INET);
	assert_int_equal(ntohs(a->sin_port), 5300);
	assert_int_equal(a->sin_addr.s_addr, htonl(INADDR_ANY));
	assert_int_equal(cfg->link.channel.initial_state, SQ_GOOD);
	assert_int_equal(cfg->link.channel.length[SQ_GOOD].kind, SQ_DIST_FIXED);
	assert_int_equal(cfg->link.channel.length[SQ_GOOD].a, 10000000);
	assert_int_equal(cfg->link.channel.length[SQ_BAD].a, 2000000);
	const struct sq_direction_config *down = &cfg->link.dir[SQ_DOWN], *up = &cfg->link.dir[SQ_UP];
	assert_int_equal(down->mtu, 576);
	assert_int_equal(down->rate_len, 1);
	assert_int_equal(down->rate[0].at_us, 0);
	assert_int_equal(down->rate[0].rate_bps, 64000);
	assert_int_equal(down->delay, 200000);
	assert_int_equal(down->send_buffer, 9600);
	assert_int_equal(down->recv_buffer, 65536);
	assert_int_equal(down->overhead, 0);
	assert_true(down->error[SQ_GOOD] == 0.0 && down->error[SQ_BAD] == 0.0);
	assert_int_equal(down->arq_retransmissions, 0);
	assert_int_equal(down->arq_delay, 0);
	assert_true(down->in_order);
	assert_int_equal(up->mtu, 1500);
	assert_int_equal(up->rate[0].rate_bps, 32000);
	assert_int_equal(up->delay, 100000);
	assert_int_equal(up->send_buffer, 4800);
	free_config(cfg);
}

static void test_every_key(void **state)
{
	(void)state;
	static const char *const text =
		"  listen = [::1]:6000   # comment\n"
		"token = FEDCBA9876543210\n"
		"log = /var/tmp/x.log\n"
		"seed = 18446744073709551615\n"
		"replication = 4294967295\n"
		"keepalive = 250ms\n"
		"peer_timeout = 1.5s\n"
		"autostart = peers\n"
		"release_ahead = 2ms\n"
		"\n"
		"[ channel ]\n"
		"initial = bad\n"
		"good = exponential(10s, min=1s, max=30s)\n"
		"bad = uniform(1s, 3s)\n"
		"[up]\n"
		"mtu = 1500B\n"
		"bandwidth = 0s:64kbit, 10s:32kbit, 20.5s:0bit, 30s:unlimited\n"
		"delay = 250us\n"
		"send_buffer = 12000B\n"
		"recv_buffer = 9600B\n"
		"overhead = 7B\n"
		"error_good = 0.001\n"
		"error_bad = 0.63\n"
		"arq_retransmissions = 3\n"
		"arq_delay = 700ms\n"
		"in_order = false\n"
		"[down]\n"
		"mtu = 576B\n"
		"bandwidth = 1.5Mbit\n"
		"delay = 0us\n"
		"send_buffer = 0B\n";
	struct sq_emu_config *cfg = new_config();
	char err[512] = "";
	assert_true(parse_text(cfg, text, err, sizeof(err)));
	const struct sockaddr_in6 *a6 = (const void *)&cfg->listen;
	assert_int_equal(a6->sin6_family, AF_INET6);
	assert_int_equal(ntohs(a6->sin6_port), 6000);
	assert_true(IN6_IS_ADDR_LOOPBACK(&a6->sin6_addr));
	assert_int_equal(cfg->token, 0xfedcba9876543210ULL);
	assert_int_equal(cfg->link.seed, UINT64_MAX);
	assert_int_equal(cfg->link.replication, UINT32_MAX);
	assert_int_equal(cfg->keepalive, 250000);
	assert_int_equal(cfg->peer_timeout, 1500000);
	assert_int_equal(cfg->autostart, SQ_AUTOSTART_PEERS);
	assert_int_equal(cfg->release_ahead, 2000);
	const struct sq_channel_config *ch = &cfg->link.channel;
	assert_int_equal(ch->initial_state, SQ_BAD);
	assert_int_equal(ch->length[SQ_GOOD].kind, SQ_DIST_EXPONENTIAL);
	assert_int_equal(ch->length[SQ_GOOD].a, 10000000);
	assert_true(ch->length[SQ_GOOD].truncated);
	assert_int_equal(ch->length[SQ_GOOD].min, 1000000);
	assert_int_equal(ch->length[SQ_GOOD].max, 30000000);
	assert_int_equal(ch->length[SQ_BAD].kind, SQ_DIST_UNIFORM);
	assert_int_equal(ch->length[SQ_BAD].a, 1000000);
	assert_int_equal(ch->length[SQ_BAD].b, 3000000);
	const struct sq_direction_config *up = &cfg->link.dir[SQ_UP];
	assert_int_equal(up->rate_len, 4);
	assert_int_equal(up->rate[1].at_us, 10000000);
	assert_int_equal(up->rate[1].rate_bps, 32000);
	assert_int_equal(up->rate[2].at_us, 20500000);
	assert_int_equal(up->rate[2].rate_bps, 0);
	assert_int_equal(up->rate[3].rate_bps, SQ_RATE_UNLIMITED);
	assert_int_equal(up->delay, 250);
	assert_int_equal(up->recv_buffer, 9600);
	assert_int_equal(up->overhead, 7);
	assert_true(up->error[SQ_GOOD] == 0.001);
	assert_true(up->error[SQ_BAD] == 0.63);
	assert_int_equal(up->arq_retransmissions, 3);
	assert_int_equal(up->arq_delay, 700000);
	assert_false(up->in_order);
	assert_int_equal(cfg->link.dir[SQ_DOWN].rate[0].rate_bps, 1500000);
	free_config(cfg);
}

static void test_canonical_output_parses_back(void **state)
{
	(void)state;
	struct sq_emu_config *cfg = new_config();
	char err[512] = "";
	assert_true(parse_text(cfg, MINIMAL, err, sizeof(err)));
	char *text = canonical_text(cfg);
	assert_non_null(strstr(text, "down.bandwidth = 64000bit\n"));
	assert_non_null(strstr(text, "channel.good = fixed(10000000us)\n"));
	/* The log header is this text: it names no token. */
	assert_non_null(strstr(text, "token = <redacted>\n"));
	assert_null(strstr(text, "0123456789abcdef"));
	assert_non_null(strstr(text, "up.recv_buffer = 65536B\n"));
	char *rebuilt = calloc(1, strlen(text) + 64);
	append_keys(rebuilt, text, "");
	strcat(rebuilt, "[channel]\n");
	append_keys(rebuilt, text, "channel.");
	strcat(rebuilt, "[down]\n");
	append_keys(rebuilt, text, "down.");
	strcat(rebuilt, "[up]\n");
	append_keys(rebuilt, text, "up.");
	struct sq_emu_config *back = new_config();
	if (!parse_text(back, rebuilt, err, sizeof(err)))
		fail_msg("canonical output does not parse: %s", err);
	char *again = canonical_text(back);
	assert_string_equal(again, text);
	free(again);
	free(rebuilt);
	free(text);
	free_config(back);
	free_config(cfg);
}

static void test_overrides_and_required_process_keys(void **state)
{
	(void)state;
	struct sq_emu_config *cfg = new_config();
	char err[512] = "";
	const char *no_process = strstr(MINIMAL, "[channel]");
	assert_true(parse_text(cfg, no_process, err, sizeof(err)));
	assert_false(sq_config_finish(cfg, err, sizeof(err)));
	assert_string_equal(err, "t.conf: token: missing, give it with --token-file PATH (or set it in the file or with --token)");
	assert_true(sq_config_override(cfg, "token", "00000000000000ff", "--token", err, sizeof(err)));
	assert_false(sq_config_finish(cfg, err, sizeof(err)));
	assert_string_equal(err, "t.conf: log: missing, set it in the file or with --log");
	/* `token = <redacted>` (the runner's files, the log header) sets nothing. */
	assert_true(sq_config_override(cfg, "token", "<redacted>", "--token", err, sizeof(err)));
	assert_int_equal(cfg->token, 0xff);
	assert_true(sq_config_override(cfg, "log", "x.log", "--log", err, sizeof(err)));
	assert_false(sq_config_finish(cfg, err, sizeof(err)));
	assert_string_equal(err, "t.conf: seed: missing, set it in the file or with --seed");
	assert_true(sq_config_override(cfg, "seed", "99", "--seed", err, sizeof(err)));
	assert_true(sq_config_override(cfg, "replication", "12", "--replication", err, sizeof(err)));
	assert_true(sq_config_override(cfg, "listen", "127.0.0.1:0", "--listen", err, sizeof(err)));
	assert_true(sq_config_finish(cfg, err, sizeof(err)));
	assert_int_equal(cfg->token, 0xff);
	assert_int_equal(cfg->link.seed, 99);
	assert_int_equal(cfg->link.replication, 12);
	assert_false(sq_config_override(cfg, "seed", "-1", "--seed", err, sizeof(err)));
	assert_string_equal(err, "--seed: expected a decimal integer in [0, 18446744073709551615], got '-1'");
	free_config(cfg);
}

/* bandwidth = mahimahi(FILE) and the outage keys: parsed, resolved, checked and written to
 * the log header. */
static void test_capacity_trace_and_outages(void **state)
{
	(void)state;
	struct sq_emu_config *cfg = new_config();
	char err[512] = "";
	const char *text = "token = 0123456789abcdef\nlog = l\nseed = 1\n"
			   "[channel]\ngood = fixed(10s)\nbad = fixed(1s)\n"
			   "outage_every = uniform(5s, 30s)\noutage_length = fixed(2s)\n"
			   "[down]\nmtu = 1500B\nbandwidth = mahimahi(lte.trace)\ndelay = 0s\nsend_buffer = 1500B\n"
			   "[up]\nmtu = 576B\nbandwidth = 64kbit\ndelay = 0s\nsend_buffer = 576B\n"
			   "outage_every = fixed(20s)\noutage_length = fixed(1s)\n";
	assert_true(sq_config_parse(cfg, "dir/run.conf", text, strlen(text), err, sizeof(err)));
	assert_string_equal(cfg->capacity_path[SQ_DOWN], "dir/lte.trace");
	assert_string_equal(cfg->capacity_path[SQ_UP], "");
	assert_true(cfg->link.outages.enabled && cfg->link.dir[SQ_UP].outages.enabled);
	assert_false(cfg->link.dir[SQ_DOWN].outages.enabled);
	const char *trace = "1\n1\n4\n";
	assert_true(sq_config_parse_capacity(cfg, SQ_DOWN, "lte.trace", trace, strlen(trace), err, sizeof(err)));
	assert_int_equal(cfg->link.dir[SQ_DOWN].capacity.len, 3);
	assert_int_equal(cfg->link.dir[SQ_DOWN].capacity.ms[2], 4);
	char *out = canonical_text(cfg);
	assert_non_null(strstr(out, "down.bandwidth = mahimahi(dir/lte.trace)\ndown.bandwidth_opportunities = 3\n"));
	assert_non_null(strstr(out, "channel.outage_every = uniform(5000000us, 30000000us)\n"
				    "channel.outage_length = fixed(2000000us)\n"));
	assert_non_null(strstr(out, "up.outage_every = fixed(20000000us)\nup.outage_length = fixed(1000000us)\n"));
	assert_null(strstr(out, "down.outage"));
	free(out);
	static const struct { const char *trace, *expected; } bad[] = {
		{ "5\n3\n", "b.trace:2: times must be non-decreasing (mahimahi's rule)" },
		{ "5\n\n6\n", "b.trace:2: expected a delivery opportunity's time in whole milliseconds" },
		{ " 5\n", "b.trace:1: expected a delivery opportunity's time" },
		{ "0\n0\n", "b.trace:2: the trace must last a nonzero time" },
		{ "", "b.trace: expected at least one delivery opportunity" },
		{ "1000000001\n", "b.trace:1: expected a delivery opportunity's time" },
	};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		assert_false(sq_config_parse_capacity(cfg, SQ_DOWN, "b.trace", bad[i].trace, strlen(bad[i].trace),
						      err, sizeof(err)));
		if (strncmp(err, bad[i].expected, strlen(bad[i].expected)) != 0)
			fail_msg("case %zu: got '%s', expected '%s'", i, err, bad[i].expected);
	}
	assert_int_equal(cfg->link.dir[SQ_DOWN].capacity.len, 3);   /* the good one stays */
	free_config(cfg);
	cfg = new_config();
	const char *half = "token = 0123456789abcdef\nlog = l\nseed = 1\n"
			   "[channel]\ngood = fixed(10s)\nbad = fixed(1s)\noutage_every = fixed(5s)\n"
			   "[down]\nmtu = 1500B\nbandwidth = mahimahi()\ndelay = 0s\nsend_buffer = 1500B\n";
	assert_false(sq_config_parse(cfg, "t.conf", half, strlen(half), err, sizeof(err)));
	assert_string_equal(err, "t.conf:10: down.bandwidth: expected mahimahi(FILE) with the path of a "
			    "delivery-opportunity trace, got 'mahimahi()'");
	free_config(cfg);
	cfg = new_config();
	half = "token = 0123456789abcdef\nlog = l\nseed = 1\n"
	       "[channel]\ngood = fixed(10s)\nbad = fixed(1s)\noutage_every = fixed(5s)\n"
	       "[down]\nmtu = 1500B\nbandwidth = 64kbit\ndelay = 0s\nsend_buffer = 1500B\n"
	       "[up]\nmtu = 1500B\nbandwidth = 64kbit\ndelay = 0s\nsend_buffer = 1500B\n";
	assert_false(sq_config_parse(cfg, "t.conf", half, strlen(half), err, sizeof(err)));
	assert_non_null(strstr(err, "t.conf: channel.outage_length: missing"));
	free_config(cfg);
}

static void test_trace(void **state)
{
	(void)state;
	struct sq_emu_config *cfg = new_config();
	char err[512] = "";
	const char *text = "token = 0123456789abcdef\nlog = l\nseed = 1\n"
			   "[channel]\ntrace = states.trace\n"
			   "[down]\nmtu = 576B\nbandwidth = 64kbit\ndelay = 0s\nsend_buffer = 1B\n"
			   "[up]\nmtu = 576B\nbandwidth = 64kbit\ndelay = 0s\nsend_buffer = 1B\n";
	assert_true(sq_config_parse(cfg, "dir/sub/run.conf", text, strlen(text), err, sizeof(err)));
	assert_string_equal(cfg->trace_path, "dir/sub/states.trace");
	const char *trace = "# a trace\ngood 2s\n\nbad 500ms  # short\ngood 1.5s\n";
	assert_true(sq_config_parse_trace(cfg, "states.trace", trace, strlen(trace), err, sizeof(err)));
	assert_int_equal(cfg->link.channel.trace_len, 3);
	assert_int_equal(cfg->link.channel.trace[0].state, SQ_GOOD);
	assert_int_equal(cfg->link.channel.trace[0].duration, 2000000);
	assert_int_equal(cfg->link.channel.trace[1].state, SQ_BAD);
	assert_int_equal(cfg->link.channel.trace[1].duration, 500000);
	assert_int_equal(cfg->link.channel.trace[2].duration, 1500000);
	const char *bad_trace = "good 2s\nugly 1s\n";
	assert_false(sq_config_parse_trace(cfg, "states.trace", bad_trace, strlen(bad_trace), err, sizeof(err)));
	assert_non_null(strstr(err, "states.trace:2: expected 'good DURATION' or 'bad DURATION'"));
	const char *zero = "good 0s\n";
	assert_false(sq_config_parse_trace(cfg, "z.trace", zero, strlen(zero), err, sizeof(err)));
	assert_non_null(strstr(err, "z.trace:1: "));
	assert_false(sq_config_parse_trace(cfg, "e.trace", "# nothing\n", 10, err, sizeof(err)));
	assert_string_equal(err, "e.trace: expected at least one 'good|bad DURATION' line");
	/* The earlier good trace is still in place. */
	assert_int_equal(cfg->link.channel.trace_len, 3);
	free_config(cfg);
}

/* One bad input: the text replaces line `line` of MINIMAL (1-based), or is
 * appended when line is 0; the message must start with `expected`. */
struct bad_case {
	int line;
	const char *text;
	const char *expected;
};

static const struct bad_case bad_cases[] = {
	{ 9, "bandwidth = 64kbps", "t.conf:9: down.bandwidth: expected a rate like 64kbit" },
	{ 9, "bandwidth = 0s:64kbit, 0s:32kbit", "t.conf:9: down.bandwidth: expected a rate" },
	{ 9, "bandwidth = 1s:64kbit", "t.conf:9: down.bandwidth: expected a rate" },
	{ 9, "bandwidth = 0bit", "t.conf:9: down.bandwidth: the last rate must be greater than zero" },
	{ 9, "bandwidth = 0s:64kbit, 5s:0bit", "t.conf:9: down.bandwidth: the last rate must be greater than zero" },
	{ 8, "mtu = 576", "t.conf:8: down.mtu: expected a size in bytes in [68B, 65535B] like 576B (68B: the smallest IPv4 MTU), got '576'" },
	{ 8, "mtu = 70000B", "t.conf:8: down.mtu: expected a size in bytes in [68B, 65535B]" },
	{ 8, "mtu = 67B", "t.conf:8: down.mtu: expected a size in bytes in [68B, 65535B]" },
	{ 10, "delay = 200", "t.conf:10: down.delay: expected a duration like 200ms (units us, ms, s), got '200'" },
	{ 11, "send_buffer = 9.6kB", "t.conf:11: down.send_buffer: expected a size in bytes like 576B, got '9.6kB'" },
	{ 4, "[channel]\ninitial = worse", "t.conf:5: channel.initial: expected 'good' or 'bad'" },
	{ 4, "[channel]\nstart = stale", "t.conf:5: channel.start: expected 'fresh' or 'running'" },
	{ 1, "token = 0123", "t.conf:1: token: expected exactly 16 hex digits, got '0123'" },
	{ 1, "token = 0123456789abcdeg", "t.conf:1: token: expected exactly 16 hex digits" },
	{ 3, "seed = forty", "t.conf:3: seed: expected a decimal integer in [0, 18446744073709551615], got 'forty'" },
	{ 5, "good = fixed(0s)", "t.conf:5: channel.good: expected fixed(D), uniform(D, D), exponential(MEAN)" },
	{ 6, "bad = uniform(3s, 1s)", "t.conf:6: channel.bad: expected fixed(D)" },
	{ 6, "bad = exponential(1s, min=5s, max=2s)", "t.conf:6: channel.bad: expected fixed(D)" },
	{ 6, "bad = exponential(1s, mean=5s)", "t.conf:6: channel.bad: expected fixed(D)" },
	{ 6, "bad = normal(1s)", "t.conf:6: channel.bad: expected fixed(D)" },
	{ 0, "error_bad = 1.5", "t.conf:17: up.error_bad: expected a probability in [0, 1] like 0.63, got '1.5'" },
	{ 0, "in_order = yes", "t.conf:17: up.in_order: expected 'true' or 'false', got 'yes'" },
	{ 0, "arq_retransmissions = many", "t.conf:17: up.arq_retransmissions: expected a count like 3 (a decimal integer), got 'many'" },
	{ 0, "arq_retransmissions = 4294967296", "t.conf:17: up.arq_retransmissions: expected a count like 3" },
	{ 0, "colour = blue", "t.conf:17: up.colour: unknown key" },
	{ 0, "mtu = 576B", "t.conf:17: up.mtu: key appears twice" },
	{ 0, "[down]", "t.conf:17: [down]: section appears twice" },
	{ 0, "[router]", "t.conf:17: [router]: unknown section, expected [channel], [down], [up], [down.router]" },
	{ 0, "just words", "t.conf:17: expected 'key = value' or a [section], got 'just words'" },
	{ 2, "listen = localhost:5300", "t.conf:2: listen: expected ADDR:PORT like 0.0.0.0:5300 or [::1]:5300" },
	{ 2, "listen = 127.0.0.1:65536", "t.conf:2: listen: expected ADDR:PORT" },
	{ 2, "autostart = always", "t.conf:2: autostart: expected 'none' or 'peers', got 'always'" },
	{ 2, "release_ahead = 10001us", "t.conf:2: release_ahead: expected a duration from 0us (off) to 10ms" },
	{ 2, "release_ahead = -1us", "t.conf:2: release_ahead: expected a duration from 0us (off) to 10ms" },
	{ 2, "keepalive = 0s", "t.conf:2: keepalive: expected a duration > 0" },
	{ 2, "peer_timeout = 500ms", "t.conf: peer_timeout: must be longer than keepalive (1000000us), got 500000us" },
	{ 9, "# bandwidth removed", "t.conf: down.bandwidth: missing required key" },
	{ 15, "", "t.conf: up.delay: missing required key" },
	{ 6, "", "t.conf: channel.bad: missing, expected a distribution like exponential(10s)" },
	{ 6, "trace = x.trace", "t.conf: channel.trace: cannot be combined with channel.good" },
	{ 0, "[nothing", "t.conf:17: expected a section header [channel], [down] or [up], got '[nothing'" },
};

/* MINIMAL with line `line` replaced by text (or text appended). */
static char *edited_minimal(int line, const char *text)
{
	char *out = calloc(1, strlen(MINIMAL) + strlen(text) + 2);
	const char *p = MINIMAL;
	for (int n = 1; *p; n++) {
		const char *nl = strchr(p, '\n');
		if (n == line)
			strcat(strcat(out, text), "\n");
		else
			strncat(out, p, (size_t)(nl - p) + 1);
		p = nl + 1;
	}
	if (line == 0)
		strcat(strcat(out, text), "\n");
	return out;
}

static void test_bad_inputs_name_line_and_key(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(bad_cases) / sizeof(bad_cases[0]); i++) {
		const struct bad_case *c = &bad_cases[i];
		char *text = edited_minimal(c->line, c->text);
		struct sq_emu_config *cfg = new_config();
		char err[512] = "";
		bool ok = parse_text(cfg, text, err, sizeof(err));
		if (ok || strncmp(err, c->expected, strlen(c->expected)) != 0)
			fail_msg("case %zu (%s): got %s '%s', expected '%s'", i, c->text, ok ? "success" : "error",
				 err, c->expected);
		free_config(cfg);
		free(text);
	}
}

/* The smallest IPv4 MTU and the largest IP packet are both accepted. */
static void test_mtu_bounds(void **state)
{
	(void)state;
	const struct { int line; const char *text; uint32_t mtu; } cases[] = {
		{ 8, "mtu = 68B", 68 }, { 8, "mtu = 65535B", 65535 },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *text = edited_minimal(cases[i].line, cases[i].text);
		struct sq_emu_config *cfg = new_config();
		char err[512] = "";
		if (!parse_text(cfg, text, err, sizeof(err)))
			fail_msg("%s: %s", cases[i].text, err);
		assert_int_equal(cfg->link.dir[SQ_DOWN].mtu, cases[i].mtu);
		free_config(cfg);
		free(text);
	}
}

static void test_exponential_bounds(void **state)
{
	(void)state;
	struct sq_emu_config *cfg = new_config();
	char err[512] = "";
	char *text = edited_minimal(5, "good = exponential(10s, min=0us, max=30s)");
	assert_true(parse_text(cfg, text, err, sizeof(err)));
	assert_true(cfg->link.channel.length[SQ_GOOD].truncated);
	assert_int_equal(cfg->link.channel.length[SQ_GOOD].min, 0);
	free(text);
	text = edited_minimal(5, "good = exponential(10s, max=30s)");
	assert_true(parse_text(cfg, text, err, sizeof(err)));
	assert_int_equal(cfg->link.channel.length[SQ_GOOD].min, 0);
	assert_int_equal(cfg->link.channel.length[SQ_GOOD].max, 30000000);
	free(text);
	text = edited_minimal(5, "good = exponential(10s, min=2s)");
	assert_true(parse_text(cfg, text, err, sizeof(err)));
	assert_int_equal(cfg->link.channel.length[SQ_GOOD].max, SQ_DIST_NO_MAX);
	free(text);
	text = edited_minimal(5, "good = exponential(10s)");
	assert_true(parse_text(cfg, text, err, sizeof(err)));
	assert_false(cfg->link.channel.length[SQ_GOOD].truncated);
	free(text);
	free_config(cfg);
}

static const char *const ROUTER =
	"[down.router]\n"
	"scheduler = priority\n"
	"default = BE\n"
	"device_queue = 10\n"
	"[down.router.filter.voip]\n"      /* names a class defined later */
	"class = EF\n"
	"dscp = EF, 34, CS1, AF11, VA, BE\n"
	"[down.router.class.EF]\n"
	"priority = 0\n"
	"discipline = pfifo\n"
	"limit = 10\n"
	"[down.router.class.AF]\n"
	"priority = 1\n"
	"discipline = bfifo\n"
	"limit = 6000B\n"
	"[down.router.class.BE]\n"
	"priority = 2\n"
	"discipline = red\n"
	"limit = 11000B\n"
	"red.min = 2000B\n"
	"red.max = 6000B\n"
	"red.avpkt = 500B\n"
	"red.ecn = true\n"
	"[down.router.filter.web]\n"
	"class = AF\n"
	"protocol = tcp\n"
	"sport = 80\n"
	"dport = 1024-65535\n"
	"[up.router]\n"
	"scheduler = weighted\n"
	"default = only\n"
	"[up.router.class.only]\n"
	"share = 32kbit\n"
	"discipline = red\n"
	"limit = 9000B\n"
	"red.min = 1000B\n"
	"red.max = 3000B\n"
	"red.avpkt = 500B\n"
	"red.max_p = 0.25\n"
	"red.w_q = 0.001953125\n";

static char *minimal_plus(const char *extra)
{
	char *text = calloc(1, strlen(MINIMAL) + strlen(extra) + 1);
	strcat(strcat(text, MINIMAL), extra);
	return text;
}

static void test_router_sections(void **state)
{
	(void)state;
	struct sq_emu_config *cfg = new_config();
	char err[512] = "";
	char *text = minimal_plus(ROUTER);
	if (!parse_text(cfg, text, err, sizeof(err)))
		fail_msg("%s", err);
	const struct sq_router_config *r = &cfg->link.dir[SQ_DOWN].router;
	assert_true(r->enabled);
	assert_int_equal(r->scheduler, SQ_ROUTER_PRIORITY);
	assert_int_equal(r->n_classes, 3);
	assert_string_equal(r->classes[0].name, "EF");
	assert_int_equal(r->default_class, 2);
	assert_int_equal(r->device_queue, 10);
	assert_int_equal(r->classes[0].discipline, SQ_QDISC_PFIFO);
	assert_int_equal(r->classes[0].limit, 10);
	assert_int_equal(r->classes[1].discipline, SQ_QDISC_BFIFO);
	assert_int_equal(r->classes[1].limit, 6000);
	assert_int_equal(r->classes[1].priority, 1);
	const struct sq_red_config *red = &r->classes[2].red;
	assert_int_equal(r->classes[2].discipline, SQ_QDISC_RED);
	assert_int_equal(red->limit, 11000);
	assert_int_equal(red->min, 2000);
	assert_int_equal(red->max, 6000);
	assert_int_equal(red->avpkt, 500);
	assert_true(red->max_p == 0.1 && red->w_q == 0.002 && red->ecn);
	assert_int_equal(r->n_filters, 2);
	assert_string_equal(r->filters[0].name, "voip");
	assert_int_equal(r->filters[0].class_index, 0);
	uint64_t expected_mask = (UINT64_C(1) << 46) | (UINT64_C(1) << 34) | (UINT64_C(1) << 8) |
				 (UINT64_C(1) << 10) | (UINT64_C(1) << 44) | 1;
	assert_true(r->filters[0].dscp_mask == expected_mask);
	assert_false(r->filters[0].match_proto);
	assert_int_equal(r->filters[1].class_index, 1);
	assert_true(r->filters[1].match_proto && r->filters[1].proto == 6);
	assert_true(r->filters[1].match_sport && r->filters[1].sport_min == 80 && r->filters[1].sport_max == 80);
	assert_true(r->filters[1].match_dport && r->filters[1].dport_min == 1024 && r->filters[1].dport_max == 65535);
	const struct sq_router_config *u = &cfg->link.dir[SQ_UP].router;
	assert_true(u->enabled);
	assert_int_equal(u->scheduler, SQ_ROUTER_WEIGHTED);
	assert_int_equal(u->classes[0].share_bps, 32000);
	assert_true(u->classes[0].red.max_p == 0.25 && u->classes[0].red.w_q == 0.001953125);
	assert_false(u->classes[0].red.ecn);
	char *out = canonical_text(cfg);
	assert_non_null(strstr(out, "down.router.scheduler = priority\ndown.router.default = BE\n"
				    "down.router.device_queue = 10\n"));
	assert_non_null(strstr(out, "up.router.device_queue = 0\n"));   /* the default: none */
	assert_non_null(strstr(out, "down.router.class.EF.discipline = pfifo\ndown.router.class.EF.limit = 10\n"));
	assert_non_null(strstr(out, "down.router.class.BE.red.ecn = true\n"));
	assert_non_null(strstr(out, "down.router.filter.voip.class = EF\ndown.router.filter.voip.dscp = 0, 8, 10, 34, 44, 46\n"));
	assert_non_null(strstr(out, "down.router.filter.web.protocol = 6\ndown.router.filter.web.sport = 80-80\n"));
	assert_non_null(strstr(out, "up.router.class.only.share = 32000bit\n"));
	free(out);
	free(text);
	/* Without router sections the stage is off. */
	struct sq_emu_config *plain = new_config();
	assert_true(parse_text(plain, MINIMAL, err, sizeof(err)));
	assert_false(plain->link.dir[SQ_DOWN].router.enabled);
	free_config(plain);
	free_config(cfg);
}

/* A pie class without its own keys has RFC 8033's and Linux's defaults; the canonical
 * output writes them. */
static void test_pie_class_defaults(void **state)
{
	(void)state;
	struct sq_emu_config *cfg = new_config();
	char err[512] = "";
	char *text = minimal_plus("[down.router]\ndefault = BE\n[down.router.class.BE]\ndiscipline = pie\n"
				  "limit = 1000\n[up.router]\ndefault = L\n[up.router.class.L]\n"
				  "discipline = pie\nlimit = 50\npie.target = 5ms\npie.tupdate = 32500us\n"
				  "pie.alpha = 0.25\npie.beta = 2\npie.ecn = true\npie.bytemode = true\n");
	if (!parse_text(cfg, text, err, sizeof(err)))
		fail_msg("%s", err);
	const struct sq_router_class *c = &cfg->link.dir[SQ_DOWN].router.classes[0];
	assert_int_equal(c->discipline, SQ_QDISC_PIE);
	assert_int_equal(c->limit, 1000);
	assert_true(c->pie.target == 15000 && c->pie.tupdate == 15000);
	assert_true(c->pie.alpha == 0.125 && c->pie.beta == 1.25);
	assert_false(c->pie.ecn || c->pie.bytemode);
	const struct sq_router_class *u = &cfg->link.dir[SQ_UP].router.classes[0];
	assert_true(u->pie.target == 5000 && u->pie.tupdate == 32500);
	assert_true(u->pie.alpha == 0.25 && u->pie.beta == 2.0 && u->pie.ecn && u->pie.bytemode);
	char *out = canonical_text(cfg);
	assert_non_null(strstr(out, "down.router.class.BE.discipline = pie\ndown.router.class.BE.limit = 1000\n"
				    "down.router.class.BE.pie.target = 15000us\ndown.router.class.BE.pie.tupdate = 15000us\n"
				    "down.router.class.BE.pie.alpha = 0.125\ndown.router.class.BE.pie.beta = 1.25\n"
				    "down.router.class.BE.pie.ecn = false\ndown.router.class.BE.pie.bytemode = false\n"));
	free(out);
	free(text);
	free_config(cfg);
}

/* An fq_codel class without its own keys has Linux sch_fq_codel's defaults (ECN on); the
 * canonical output writes every key. */
static void test_fq_codel_class_defaults(void **state)
{
	(void)state;
	struct sq_emu_config *cfg = new_config();
	char err[512] = "";
	char *text = minimal_plus("[down.router]\ndefault = BE\n[down.router.class.BE]\ndiscipline = fq_codel\n"
				  "limit = 10240\n[up.router]\ndefault = L\n[up.router.class.L]\ndiscipline = fq_codel\n"
				  "limit = 50\nfq_codel.ecn = false\nfq_codel.flows = 8\nfq_codel.quantum = 300\n");
	if (!parse_text(cfg, text, err, sizeof(err)))
		fail_msg("%s", err);
	const struct sq_fq_codel_config *d = &cfg->link.dir[SQ_DOWN].router.classes[0].fq_codel;
	assert_true(d->target == 5000 && d->interval == 100000 && d->ecn && d->quantum == 1514 && d->flows == 1024);
	const struct sq_fq_codel_config *u = &cfg->link.dir[SQ_UP].router.classes[0].fq_codel;
	assert_true(!u->ecn && u->quantum == 300 && u->flows == 8);
	char *out = canonical_text(cfg);
	assert_non_null(strstr(out, "down.router.class.BE.fq_codel.target = 5000us\ndown.router.class.BE.fq_codel.interval = "
				    "100000us\ndown.router.class.BE.fq_codel.ecn = true\ndown.router.class.BE.fq_codel.quantum = "
				    "1514\ndown.router.class.BE.fq_codel.flows = 1024\n"));
	free(out);
	free(text);
	free_config(cfg);
}

/* A dualpi2 class without its own keys has Linux sch_dualpi2's defaults. */
static void test_dualpi2_class_defaults(void **state)
{
	(void)state;
	struct sq_emu_config *cfg = new_config();
	char err[512] = "";
	char *text = minimal_plus("[down.router]\ndefault = BE\n[down.router.class.BE]\ndiscipline = dualpi2\n"
				  "limit = 10000\n");
	if (!parse_text(cfg, text, err, sizeof(err)))
		fail_msg("%s", err);
	const struct sq_dualpi2_config *d = &cfg->link.dir[SQ_DOWN].router.classes[0].dualpi2;
	assert_true(d->target == 15000 && d->tupdate == 16000 && d->step_thresh == 1000);
	assert_true(d->alpha == 0.16015625 && d->beta == 3.19921875);
	assert_true(d->coupling == 2.0 && d->c_protection == 10.0 && !d->overflow);
	free(text);
	free_config(cfg);
}

static const struct bad_case router_cases[] = {
	{ 0, "[down.router.class.EF]\ndiscipline = pfifo\nlimit = 5\n",
	  "t.conf: [down.router]: missing, classes and filters need it" },
	{ 0, "[down.router]\ndefault = EF\n", "t.conf: [down.router.class.NAME]: missing" },
	{ 0, "[down.router]\ndefault = XX\n[down.router.class.EF]\ndiscipline = pfifo\nlimit = 5\n",
	  "t.conf:18: down.router.default: 'XX' names no class; defined classes are EF" },
	{ 0, "[down.router]\ndefault = EF\n[down.router.class.EF]\ndiscipline = pfifo\nlimit = 5B\n",
	  "t.conf: down.router.class.EF.limit: pfifo, head_drop, codel, fq_codel, pie and dualpi2 count packets, expected a number like 20" },
	{ 0, "[down.router]\ndefault = EF\n[down.router.class.EF]\ndiscipline = bfifo\nlimit = 5\n",
	  "t.conf: down.router.class.EF.limit: bfifo and red count bytes" },
	{ 0, "[down.router]\ndefault = EF\n[down.router.class.EF]\ndiscipline = red\nlimit = 5000B\nred.min = 1000B\n",
	  "t.conf: down.router.class.EF.red.min, red.max, red.avpkt: required with discipline = red" },
	{ 0, "[down.router]\ndefault = EF\n[down.router.class.EF]\nlimit = 5\n",
	  "t.conf: down.router.class.EF.discipline: missing required key" },
	{ 0, "[down.router]\ndefault = EF\n[down.router.class.EF]\ndiscipline = sfq\n",
	  "t.conf:20: down.router.class.EF.discipline: expected 'pfifo', 'bfifo', 'red', 'head_drop', 'codel', 'fq_codel', 'pie' or 'dualpi2', got 'sfq'" },
	{ 0, "[down.router]\ndefault = EF\n[down.router.class.EF]\ndiscipline = pfifo\nlimit = 5\n"
	     "[down.router.class.EF]\n", "t.conf:22: [down.router.class.EF]: section appears twice" },
	{ 0, "[down.router]\ndefault = EF\nscheduler = weighted\n[down.router.class.EF]\ndiscipline = pfifo\nlimit = 5\n",
	  "t.conf: down.router.class.EF.share: missing, scheduler = weighted needs a share" },
	{ 0, "[down.router]\ndefault = EF\n[down.router.class.EF]\ndiscipline = pfifo\nlimit = 5\n"
	     "[down.router.filter.f]\nclass = EF\nsport = 80\n",
	  "t.conf: down.router.filter.f.sport, dport: need protocol in the same filter" },
	{ 0, "[down.router]\ndefault = EF\n[down.router.class.EF]\ndiscipline = pfifo\nlimit = 5\n"
	     "[down.router.filter.f]\nclass = EF\n",
	  "t.conf: down.router.filter.f.dscp, protocol: a filter needs at least one of them" },
	{ 0, "[down.router]\ndefault = EF\n[down.router.class.EF]\ndiscipline = pfifo\nlimit = 5\n"
	     "[down.router.filter.f]\nclass = AF\ndscp = EF\n",
	  "t.conf:23: down.router.filter.f.class: 'AF' names no class; defined classes are EF" },
	{ 0, "[down.router.filter.f]\ndscp = AF44\n",
	  "t.conf:18: down.router.filter.f.dscp: expected DSCP values separated by commas" },
	{ 0, "[down.router.filter.f]\ndport = 90-80\n",
	  "t.conf:18: down.router.filter.f.dport: expected a port 0-65535 or a range like 5000-5010, got '90-80'" },
	{ 0, "[down.router.class.1x]\n", "t.conf:17: [down.router.class.1x]: expected a class name" },
	{ 0, "[down.router.queue]\n", "t.conf:17: [down.router.queue]: unknown section, expected [down.router]" },
	{ 0, "[down.router]\ndefault = EF\ndevice_queue = 65537\n",
	  "t.conf:19: down.router.device_queue: expected a number of packets in [0, 65536] like 10 (0: no device queue), got '65537'" },
	{ 0, "[down.router]\ndefault = EF\ndevice_queue = 10B\n",
	  "t.conf:19: down.router.device_queue: expected a number of packets" },
	{ 0, "[down.router.class.A]\nred.max_p = 0\n",
	  "t.conf:18: down.router.class.A.red.max_p: expected a probability in (0, 1] like 0.1, got '0'" },
	{ 0, "[down.router.class.A]\ncodel.target = 0ms\n",
	  "t.conf:18: down.router.class.A.codel.target: expected a duration such as 250us, 200ms or 1.5s "
	  "(whole microseconds), at least 1us, got '0ms'" },
	{ 0, "[down.router.class.A]\ncodel.ecn = maybe\n",
	  "t.conf:18: down.router.class.A.codel.ecn: expected 'true' or 'false', got 'maybe'" },
	{ 0, "[down.router]\ndefault = EF\n[down.router.class.EF]\ndiscipline = pfifo\nlimit = 5\ncodel.interval = 50ms\n",
	  "t.conf: down.router.class.EF.codel.interval: only with discipline = codel" },
	{ 0, "[down.router]\ndefault = EF\n[down.router.class.EF]\ndiscipline = codel\nlimit = 5B\n",
	  "t.conf: down.router.class.EF.limit: pfifo, head_drop, codel, fq_codel, pie and dualpi2 count packets" },
	{ 0, "[down.router.class.A]\npie.target = 0us\n",
	  "t.conf:18: down.router.class.A.pie.target: expected a duration such as 250us, 200ms or 1.5s "
	  "(whole microseconds), from 1us to 10s, got '0us'" },
	{ 0, "[down.router.class.A]\npie.tupdate = 15\n",
	  "t.conf:18: down.router.class.A.pie.tupdate: expected a duration such as 250us, 200ms or 1.5s "
	  "(whole microseconds), from 1us to 10s, got '15'" },
	{ 0, "[down.router.class.A]\ndualpi2.target = 11s\n",
	  "t.conf:18: down.router.class.A.dualpi2.target: expected a duration such as 250us, 200ms or 1.5s "
	  "(whole microseconds), from 1us to 10s, got '11s'" },
	{ 0, "[down.router]\ndefault = EF\n[down.router.class.EF]\ndiscipline = codel\nlimit = 5\npie.target = 20ms\n",
	  "t.conf: down.router.class.EF.pie.target: only with discipline = pie" },
	{ 0, "[down.router.class.A]\npie.alpha = 2.5\n",
	  "t.conf:18: down.router.class.A.pie.alpha: expected a gain in [0, 2] like 0.125, got '2.5'" },
	{ 0, "[down.router.class.A]\npie.beta = -1\n",
	  "t.conf:18: down.router.class.A.pie.beta: expected a gain in [0, 2] like 0.125, got '-1'" },
	{ 0, "[down.router.class.A]\npie.ecn = yes\n",
	  "t.conf:18: down.router.class.A.pie.ecn: expected 'true' or 'false', got 'yes'" },
	{ 0, "[down.router]\ndefault = EF\n[down.router.class.EF]\ndiscipline = pfifo\nlimit = 5\npie.ecn = true\n",
	  "t.conf: down.router.class.EF.pie.ecn: only with discipline = pie" },
	{ 0, "[down.router.class.A]\ndualpi2.coupling = 0.5\n",
	  "t.conf:18: down.router.class.A.dualpi2.coupling: expected a coupling factor in [1, 255] like 2, got '0.5'" },
	{ 0, "[down.router.class.A]\ndualpi2.c_protection = 101\n",
	  "t.conf:18: down.router.class.A.dualpi2.c_protection: expected a percentage in [0, 100] like 10, got '101'" },
	{ 0, "[down.router.class.A]\ndualpi2.step_thresh = 0ms\n",
	  "t.conf:18: down.router.class.A.dualpi2.step_thresh: expected a duration such as 250us, 200ms or 1.5s "
	  "(whole microseconds), from 1us to 10s, got '0ms'" },
	{ 0, "[down.router.class.A]\nfq_codel.flows = 0\n",
	  "t.conf:18: down.router.class.A.fq_codel.flows: expected a number of flows in [1, 65536] like 1024, got '0'" },
	{ 0, "[down.router.class.A]\nfq_codel.quantum = 100\n",
	  "t.conf:18: down.router.class.A.fq_codel.quantum: expected IP bytes in [256, 1048576] like 1514, got '100'" },
	{ 0, "[down.router]\ndefault = EF\n[down.router.class.EF]\ndiscipline = codel\nlimit = 5\nfq_codel.ecn = false\n",
	  "t.conf: down.router.class.EF.fq_codel.ecn: only with discipline = fq_codel" },
	{ 0, "[down.router.class.A]\ndualpi2.alpha = 0\n",
	  "t.conf:18: down.router.class.A.dualpi2.alpha: expected a gain in Hz like 0.16, got '0'" },
};

/* A codel class with no key of its own has Linux's defaults; the canonical output writes
 * every key, and what it writes parses back to the same. */
static void test_codel_defaults_and_keys(void **state)
{
	(void)state;
	struct sq_emu_config *cfg = new_config();
	char err[512] = "";
	char *text = minimal_plus("[down.router]\ndefault = A\n[down.router.class.A]\ndiscipline = codel\nlimit = 1000\n"
				  "[down.router.class.B]\ndiscipline = codel\nlimit = 20\ncodel.target = 2ms\n"
				  "codel.interval = 40ms\ncodel.ecn = true\ncodel.ce_threshold = 1ms\n");
	if (!parse_text(cfg, text, err, sizeof(err)))
		fail_msg("%s", err);
	const struct sq_router_class *a = &cfg->link.dir[SQ_DOWN].router.classes[0];
	const struct sq_router_class *b = &cfg->link.dir[SQ_DOWN].router.classes[1];
	assert_int_equal(a->discipline, SQ_QDISC_CODEL);
	assert_true(a->codel.target == 5000 && a->codel.interval == 100000 && !a->codel.ecn && a->codel.ce_threshold == 0);
	assert_true(b->codel.target == 2000 && b->codel.interval == 40000 && b->codel.ecn && b->codel.ce_threshold == 1000);
	char *out = canonical_text(cfg);
	assert_non_null(strstr(out, "down.router.class.A.limit = 1000\ndown.router.class.A.codel.target = 5000us\n"
				    "down.router.class.A.codel.interval = 100000us\ndown.router.class.A.codel.ecn = false\n"
				    "down.router.class.A.codel.ce_threshold = 0us\n"));
	char *rebuilt = calloc(1, strlen(out) + strlen(MINIMAL) + 256);
	strcat(rebuilt, MINIMAL);
	strcat(rebuilt, "[down.router]\ndefault = A\n[down.router.class.A]\n");
	append_keys(rebuilt, out, "down.router.class.A.");
	struct sq_emu_config *again = new_config();
	if (!parse_text(again, rebuilt, err, sizeof(err)))
		fail_msg("%s", err);
	assert_memory_equal(&again->link.dir[SQ_DOWN].router.classes[0].codel, &a->codel, sizeof a->codel);
	free_config(again);
	free(rebuilt);
	free(out);
	free(text);
	free_config(cfg);
}

/* Every section's key table fits the parser's record of the keys seen. */
static void test_key_tables_fit(void **state)
{
	(void)state;
	const struct key_spec *tables[] = { sq_process_keys, sq_channel_keys, sq_direction_keys, sq_router_keys,
					    sq_router_class_keys, sq_router_filter_keys };
	for (size_t t = 0; t < sizeof tables / sizeof tables[0]; t++) {
		size_t n = 0;
		while (tables[t][n].name)
			n++;
		if (n > SQ_MAX_SECTION_KEYS)
			fail_msg("key table %zu has %zu keys, SQ_MAX_SECTION_KEYS is %d", t, n, SQ_MAX_SECTION_KEYS);
	}
}

static void test_router_bad_inputs(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(router_cases) / sizeof(router_cases[0]); i++) {
		const struct bad_case *c = &router_cases[i];
		char *text = minimal_plus(c->text);
		struct sq_emu_config *cfg = new_config();
		char err[512] = "";
		bool ok = parse_text(cfg, text, err, sizeof(err));
		if (ok || strncmp(err, c->expected, strlen(c->expected)) != 0)
			fail_msg("router case %zu: got %s '%s', expected '%s'", i, ok ? "success" : "error", err,
				 c->expected);
		free_config(cfg);
		free(text);
	}
}

static void test_missing_section_and_nul_byte(void **state)
{
	(void)state;
	struct sq_emu_config *cfg = new_config();
	char err[512] = "";
	const char *no_up = "[channel]\ngood = fixed(1s)\nbad = fixed(1s)\n[down]\nmtu = 576B\n"
			    "bandwidth = 1kbit\ndelay = 0s\nsend_buffer = 1B\n";
	assert_false(parse_text(cfg, no_up, err, sizeof(err)));
	assert_string_equal(err, "t.conf: [up]: missing section");
	const char with_nul[] = "seed = 1\nlog = a\0b\n";
	assert_false(sq_config_parse(cfg, "t.conf", with_nul, sizeof(with_nul) - 1, err, sizeof(err)));
	assert_string_equal(err, "t.conf:2: line contains a NUL byte");
	free_config(cfg);
}

/* A FIFO nobody writes to (or a device) is refused at once, never waited on. */
static void test_only_a_regular_file_is_read(void **state)
{
	(void)state;
	char dir[] = "/tmp/sq-config-test.XXXXXX";
	assert_non_null(mkdtemp(dir));
	char fifo[sizeof(dir) + 16];
	snprintf(fifo, sizeof(fifo), "%s/fifo", dir);
	assert_int_equal(mkfifo(fifo, 0600), 0);
	char err[256];
	size_t len = 0;
	assert_null(sq_config_read_file(fifo, &len, err, sizeof(err)));
	assert_non_null(strstr(err, "fifo: cannot read: not a regular file"));
	assert_null(sq_config_read_file("/dev/zero", &len, err, sizeof(err)));
	assert_string_equal(err, "/dev/zero: cannot read: not a regular file (a pipe, a device or a socket); "
				 "expected a file");
	unlink(fifo);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_minimal_file_and_defaults),
		cmocka_unit_test(test_every_key),
		cmocka_unit_test(test_canonical_output_parses_back),
		cmocka_unit_test(test_overrides_and_required_process_keys),
		cmocka_unit_test(test_trace),
		cmocka_unit_test(test_capacity_trace_and_outages),
		cmocka_unit_test(test_bad_inputs_name_line_and_key),
		cmocka_unit_test(test_mtu_bounds),
		cmocka_unit_test(test_exponential_bounds),
		cmocka_unit_test(test_missing_section_and_nul_byte),
		cmocka_unit_test(test_router_sections),
		cmocka_unit_test(test_codel_defaults_and_keys),
		cmocka_unit_test(test_pie_class_defaults),
		cmocka_unit_test(test_dualpi2_class_defaults),
		cmocka_unit_test(test_fq_codel_class_defaults),
		cmocka_unit_test(test_key_tables_fit),
		cmocka_unit_test(test_router_bad_inputs),
		cmocka_unit_test(test_only_a_regular_file_is_read),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
