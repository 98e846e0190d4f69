/* The whole check of a configuration (config_check.h): what start-up and --check ask
 * after the parser, with one-line messages that name the file and the key. */
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
#include "test_config_minimal.h"

static const char *const RED_MIN_NOT_BELOW_MAX =
	"[down.router]\n"
	"default = BE\n"
	"[down.router.class.BE]\n"
	"discipline = red\n"
	"limit = 11000B\n"
	"red.min = 6000B\n"
	"red.max = 6000B\n"
	"red.avpkt = 500B\n";

/* Parses MINIMAL (without its first `skip` lines) followed by extra, then checks it. */
static bool check_text(struct sq_emu_config *cfg, int skip, const char *extra, char *err,
		       size_t errlen)
{
	const char *text = MINIMAL;
	for (int i = 0; i < skip; i++)
		text = strchr(text, '\n') + 1;
	char buf[2048];
	snprintf(buf, sizeof(buf), "%s%s", text, extra);
	sq_config_init(cfg);
	if (!sq_config_parse(cfg, "t.conf", buf, strlen(buf), err, errlen))
		fail_msg("the parser refused it: %s", err);
	return sq_config_check(cfg, err, errlen);
}

static void expect_refused(int skip, const char *extra, const char *expected)
{
	struct sq_emu_config *cfg = malloc(sizeof(*cfg));
	assert_non_null(cfg);
	char err[512] = "";
	bool ok = check_text(cfg, skip, extra, err, sizeof(err));
	if (ok || strcmp(err, expected) != 0)
		fail_msg("'%s': got %s '%s', expected '%s'", extra, ok ? "success" : "error", err, expected);
	assert_null(strchr(err, '\n'));
	sq_config_release(cfg);
	free(cfg);
}

static void expect_valid(const char *extra)
{
	struct sq_emu_config *cfg = malloc(sizeof(*cfg));
	assert_non_null(cfg);
	char err[512] = "";
	if (!check_text(cfg, 0, extra, err, sizeof(err)))
		fail_msg("'%s': refused: %s", extra, err);
	sq_config_release(cfg);
	free(cfg);
}

static void a_complete_link_passes(void **state)
{
	(void)state;
	expect_valid("");
	expect_valid("arq_retransmissions = 1000\narq_delay = 1us\n");
	expect_valid("arq_delay = 0us\n");   /* no retries: the delay is never used */
}

static void arq_limits_are_the_link_models(void **state)
{
	(void)state;
	expect_refused(0, "arq_retransmissions = 5000\narq_delay = 700ms\n",
		       "t.conf: up.arq_retransmissions: 5000 is more than the limit 1000");
	expect_refused(0, "arq_retransmissions = 3\n",
		       "t.conf: up.arq_delay: must be >= 1 us when arq_retransmissions > 0 (3), got 0 us");
	expect_refused(0, "arq_retransmissions = 1\narq_delay = 2000000000s\n",
		       "t.conf: up.arq_delay: 2000000000000000 us is outside [0, 1000000000000] us");
}

static void the_router_stage_is_checked(void **state)
{
	(void)state;
	expect_refused(0, RED_MIN_NOT_BELOW_MAX,
		       "t.conf: down.router.class.BE.red.min: must be < max (6000 B), got 6000 B");
}

static void required_process_keys_come_from_file_or_command_line(void **state)
{
	(void)state;
	expect_refused(1, "", "t.conf: token: missing, give it with --token-file PATH (or set it in the file or with --token)");
	struct sq_emu_config *cfg = malloc(sizeof(*cfg));
	assert_non_null(cfg);
	char err[512] = "";
	assert_false(check_text(cfg, 1, "", err, sizeof(err)));
	assert_true(sq_config_override(cfg, "token", "00000000000000ff", "--token", err, sizeof(err)));
	assert_true(sq_config_check(cfg, err, sizeof(err)));
	sq_config_release(cfg);
	free(cfg);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(a_complete_link_passes),
		cmocka_unit_test(arq_limits_are_the_link_models),
		cmocka_unit_test(the_router_stage_is_checked),
		cmocka_unit_test(required_process_keys_come_from_file_or_command_line),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
