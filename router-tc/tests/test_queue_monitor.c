/* Unit tests of the queue monitor's pure parts: options, row format, deadline arithmetic. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "../src/monitor_options.h"
#include "../src/sample_row.h"
#include "../src/sample_timer.h"

static int parse(struct monitor_options *opts, char *err, int argc, const char **argv)
{
	return monitor_options_parse(argc, (char **)argv, opts, err, 256);
}

static void test_durations_are_exact_microseconds(void **state)
{
	(void)state;
	int64_t us = 0;
	assert_int_equal(parse_duration_us("10ms", &us), 0);
	assert_int_equal(us, 10000);
	assert_int_equal(parse_duration_us("1ms", &us), 0);
	assert_int_equal(us, 1000);
	assert_int_equal(parse_duration_us("250us", &us), 0);
	assert_int_equal(us, 250);
	assert_int_equal(parse_duration_us("60s", &us), 0);
	assert_int_equal(us, 60000000);
	assert_int_equal(parse_duration_us("10", &us), -1);
	assert_int_equal(parse_duration_us("1.5ms", &us), -1);
	assert_int_equal(parse_duration_us("-1ms", &us), -1);
	assert_int_equal(parse_duration_us("5hours", &us), -1);
	assert_int_equal(parse_duration_us("2min", &us), 0);
	assert_int_equal(us, 120000000);
	assert_int_equal(parse_duration_us("153722867281min", &us), -1);   /* > INT64_MAX µs */
	assert_int_equal(parse_duration_us("10ms ", &us), -1);
}

static void test_options_defaults_and_values(void **state)
{
	(void)state;
	struct monitor_options opts;
	char err[256] = "";
	const char *minimal[] = { "m", "--dev", "wl0", "--output", "q.tsv" };
	assert_int_equal(parse(&opts, err, 5, minimal), 0);
	assert_string_equal(opts.device, "wl0");
	assert_string_equal(opts.output, "q.tsv");
	assert_int_equal(opts.interval_us, 10000);
	assert_int_equal(opts.t0_realtime_us, 0);
	assert_int_equal(opts.duration_us, 0);

	const char *full[] = { "m", "--dev", "wl0", "--output", "q2.tsv", "--interval", "1ms",
			       "--t0-realtime-us", "1795312345678901", "--duration", "2s" };
	assert_int_equal(parse(&opts, err, 11, full), 0);
	assert_string_equal(opts.output, "q2.tsv");
	assert_int_equal(opts.interval_us, 1000);
	assert_int_equal(opts.t0_realtime_us, 1795312345678901LL);
	assert_int_equal(opts.duration_us, 2000000);
}

static void test_options_errors_name_the_option(void **state)
{
	(void)state;
	struct monitor_options opts;
	char err[256] = "";
	const char *no_dev[] = { "m", "--output", "q.tsv" };
	assert_int_equal(parse(&opts, err, 3, no_dev), -1);
	assert_non_null(strstr(err, "--dev"));

	const char *bad_interval[] = { "m", "--dev", "wl0", "--output", "q", "--interval", "0ms" };
	assert_int_equal(parse(&opts, err, 7, bad_interval), -1);
	assert_non_null(strstr(err, "--interval \"0ms\""));

	const char *bad_t0[] = { "m", "--dev", "wl0", "--output", "q", "--t0-realtime-us", "12x" };
	assert_int_equal(parse(&opts, err, 7, bad_t0), -1);
	assert_non_null(strstr(err, "--t0-realtime-us \"12x\""));

	const char *stray[] = { "m", "--dev", "wl0", "--output", "q", "extra" };
	assert_int_equal(parse(&opts, err, 6, stray), -1);
	assert_non_null(strstr(err, "\"extra\""));

	const char *help[] = { "m", "--help" };
	assert_int_equal(parse(&opts, err, 2, help), MONITOR_ASKED_HELP);
	const char *version[] = { "m", "--version" };
	assert_int_equal(parse(&opts, err, 2, version), MONITOR_ASKED_VERSION);
}

static void test_handles_in_tc_notation(void **state)
{
	(void)state;
	char buf[24];
	format_tc_handle(0x00010000u, false, buf, sizeof buf);
	assert_string_equal(buf, "1:");
	format_tc_handle(0x00010010u, true, buf, sizeof buf);
	assert_string_equal(buf, "1:10");
	format_tc_handle(0x00100000u, false, buf, sizeof buf);
	assert_string_equal(buf, "10:");
	format_tc_handle(0xFFFFFFFFu, true, buf, sizeof buf);
	assert_string_equal(buf, "root");
	format_tc_handle(0x00010000u, true, buf, sizeof buf);
	assert_string_equal(buf, "1:0");
}

static void test_row_is_eleven_tab_separated_columns(void **state)
{
	(void)state;
	char line[256];
	struct sample_row qdisc = { .time_us = -1500, .handle = 0x00100000u, .parent = 0x00010010u,
				    .kind = "pfifo", .backlog_bytes = 11000, .backlog_pkts = 20,
				    .drops = 7, .overlimits = 3, .requeues = 1 };
	sample_row_format(&qdisc, line, sizeof line);
	assert_string_equal(line, "-1500\tqdisc\t10:\t1:10\tpfifo\t11000\t20\t7\t3\t1\t-\n");

	struct sample_row red = { .time_us = 42, .handle = 0x00300000u, .parent = 0x00010030u, .kind = "red",
				  .has_marks = true, .marks = 9 };
	sample_row_format(&red, line, sizeof line);
	assert_string_equal(line, "42\tqdisc\t30:\t1:30\tred\t0\t0\t0\t0\t0\t9\n");

	struct sample_row cls = { .time_us = 0, .is_class = true, .handle = 0x00010001u,
				  .parent = 0xFFFFFFFFu, .kind = "htb" };
	sample_row_format(&cls, line, sizeof line);
	assert_string_equal(line, "0\tclass\t1:1\troot\thtb\t0\t0\t0\t0\t0\t-\n");
}

static void test_header_and_trailer(void **state)
{
	(void)state;
	char buf[1024] = "";
	FILE *f = fmemopen(buf, sizeof buf, "w");
	assert_non_null(f);
	struct sample_header header = { "wl0", 1000, 1795312345678901LL };
	assert_int_equal(sample_header_write(f, &header), 0);
	assert_int_equal(sample_trailer_write(f, 201, 2), 0);
	fclose(f);
	assert_string_equal(buf,
			    "# squall-queue-monitor samples\n"
			    "# format 1\n"
			    "# device wl0\n"
			    "# interval_us 1000\n"
			    "# t0_realtime_us 1795312345678901\n"
			    "# columns time_us object handle parent kind backlog_bytes backlog_pkts drops overlimits requeues marks\n"
			    "# end samples 201 missed 2\n");
}

static void test_deadlines_add_without_drift(void **state)
{
	(void)state;
	struct timespec t = { .tv_sec = 5, .tv_nsec = 999999000 };
	struct timespec next = timespec_add_ns(t, 1000);
	assert_int_equal(next.tv_sec, 6);
	assert_int_equal(next.tv_nsec, 0);
	struct timespec k = { 0, 0 };
	for (int i = 0; i < 1000; i++)
		k = timespec_add_ns(k, 1000000);
	assert_int_equal(k.tv_sec, 1);
	assert_int_equal(k.tv_nsec, 0);
	next = timespec_add_ns((struct timespec){ .tv_sec = 1, .tv_nsec = 500 }, 2500000000LL);
	assert_int_equal(next.tv_sec, 3);
	assert_int_equal(next.tv_nsec, 500000500);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_durations_are_exact_microseconds),
		cmocka_unit_test(test_options_defaults_and_values),
		cmocka_unit_test(test_options_errors_name_the_option),
		cmocka_unit_test(test_handles_in_tc_notation),
		cmocka_unit_test(test_row_is_eleven_tab_separated_columns),
		cmocka_unit_test(test_header_and_trailer),
		cmocka_unit_test(test_deadlines_add_without_drift),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
