/* The value syntax every program shares: exact durations, rates, sizes, counts,
 * probabilities, booleans and HOST:PORT; malformed values are refused. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include <cmocka.h>

#include "host_port.h"
#include "value_parse.h"

static void durations_are_exact_microseconds(void **state)
{
	(void)state;
	int64_t us;
	assert_true(sq_parse_duration("1us", &us) && us == 1);
	assert_true(sq_parse_duration("3ms", &us) && us == 3000);
	assert_true(sq_parse_duration("2s", &us) && us == 2000000);
	assert_true(sq_parse_duration("1.5s", &us) && us == 1500000);
	assert_true(sq_parse_duration("0.000001s", &us) && us == 1);
	assert_true(sq_parse_duration("1.25ms", &us) && us == 1250);
	assert_true(sq_parse_duration("0ms", &us) && us == 0);
	assert_true(sq_parse_duration("1.000000000000000000s", &us) && us == 1000000);
}

static void durations_refuse_what_is_not_whole_or_written_out(void **state)
{
	(void)state;
	int64_t us;
	assert_false(sq_parse_duration("1.0005ms", &us));   /* not a whole µs */
	assert_false(sq_parse_duration("0.5us", &us));
	assert_false(sq_parse_duration("1.0000001s", &us));
	assert_false(sq_parse_duration("2", &us));
	assert_false(sq_parse_duration("2 s", &us));
	assert_false(sq_parse_duration(" 2s", &us));
	assert_false(sq_parse_duration("-2s", &us));
	assert_false(sq_parse_duration("+2s", &us));
	assert_false(sq_parse_duration("2min", &us));
	assert_false(sq_parse_duration("s", &us));
	assert_false(sq_parse_duration(".5s", &us));
	assert_false(sq_parse_duration("5.s", &us));
	assert_false(sq_parse_duration("1e3ms", &us));
	assert_false(sq_parse_duration("2sx", &us));
	assert_false(sq_parse_duration("", &us));
	assert_false(sq_parse_duration("99999999999999999999s", &us));
	assert_false(sq_parse_duration("9223372036854775807us", &us));   /* > INT64_MAX / 2 */
}

static void rates_are_exact_bits_per_second(void **state)
{
	(void)state;
	uint64_t bps;
	assert_true(sq_parse_rate("9600bit", &bps) && bps == 9600);
	assert_true(sq_parse_rate("64kbit", &bps) && bps == 64000);
	assert_true(sq_parse_rate("1.5Mbit", &bps) && bps == 1500000);
	assert_true(sq_parse_rate("1Gbit", &bps) && bps == 1000000000);
	assert_true(sq_parse_rate("0.5kbit", &bps) && bps == 500);
	assert_true(sq_parse_rate("0bit", &bps) && bps == 0);
	assert_true(sq_parse_rate("unlimited", &bps) && bps == SQ_RATE_NO_LIMIT);
	assert_false(sq_parse_rate("64kbps", &bps));
	assert_false(sq_parse_rate("64Kbit", &bps));
	assert_false(sq_parse_rate("0.5bit", &bps));
	assert_false(sq_parse_rate("64", &bps));
	assert_false(sq_parse_rate("-64kbit", &bps));
	assert_false(sq_parse_rate("18446744073709551615bit", &bps));   /* means unlimited */
	assert_false(sq_parse_rate("18446744073709552Gbit", &bps));
}

static void sizes_are_bytes_that_fit_32_bits(void **state)
{
	(void)state;
	uint32_t bytes;
	assert_true(sq_parse_size("576B", &bytes) && bytes == 576);
	assert_true(sq_parse_size("4294967295B", &bytes) && bytes == UINT32_MAX);
	assert_false(sq_parse_size("576", &bytes));
	assert_false(sq_parse_size("1kB", &bytes));
	assert_false(sq_parse_size("1.5B", &bytes));
	assert_false(sq_parse_size("4294967296B", &bytes));
}

static void custom_units_including_a_bare_number(void **state)
{
	(void)state;
	static const struct sq_unit units[] = {
		{ "min", 60000000 }, { "us", 1 }, { "ms", 1000 }, { "s", 1000000 }, { "", 1000000 },
		{ NULL, 0 },
	};
	uint64_t v;
	assert_true(sq_parse_with_units("1min", units, &v) && v == 60000000);
	assert_true(sq_parse_with_units("2.5", units, &v) && v == 2500000);
	assert_true(sq_parse_with_units("5ms", units, &v) && v == 5000);
	assert_true(sq_parse_with_units("1.5min", units, &v) && v == 90000000);
	assert_true(sq_parse_with_units("0.00000005min", units, &v) && v == 3);
	assert_false(sq_parse_with_units("0.000000001min", units, &v));   /* 0.06 µs */
	assert_false(sq_parse_with_units("5hours", units, &v));
	assert_false(sq_parse_with_units("", units, &v));
}

static void counts_are_digits_up_to_a_maximum(void **state)
{
	(void)state;
	uint64_t v;
	assert_true(sq_parse_count("0", 10, &v) && v == 0);
	assert_true(sq_parse_count("65535", 65535, &v) && v == 65535);
	assert_true(sq_parse_count("18446744073709551615", UINT64_MAX, &v) && v == UINT64_MAX);
	assert_false(sq_parse_count("65536", 65535, &v));
	assert_false(sq_parse_count("18446744073709551616", UINT64_MAX, &v));
	assert_false(sq_parse_count("-1", 10, &v));
	assert_false(sq_parse_count("+1", 10, &v));
	assert_false(sq_parse_count("12x", 100, &v));
	assert_false(sq_parse_count("", 100, &v));
}

static void probabilities_and_booleans(void **state)
{
	(void)state;
	double p;
	bool b;
	assert_true(sq_parse_probability("0", &p) && p == 0.0);
	assert_true(sq_parse_probability("1", &p) && p == 1.0);
	assert_true(sq_parse_probability("0.01", &p) && p == 0.01);
	assert_false(sq_parse_probability("1.01", &p));
	assert_false(sq_parse_probability("-0", &p));
	assert_false(sq_parse_probability("nan", &p));
	assert_false(sq_parse_probability("0.5x", &p));
	assert_true(sq_parse_bool("true", &b) && b);
	assert_true(sq_parse_bool("false", &b) && !b);
	assert_false(sq_parse_bool("yes", &b));
}

static void host_port_forms(void **state)
{
	(void)state;
	char host[64];
	uint16_t port;
	assert_true(sq_parse_host_port("198.18.0.1:5300", false, host, sizeof(host), &port));
	assert_string_equal(host, "198.18.0.1");
	assert_int_equal(port, 5300);
	assert_true(sq_parse_host_port("[2001:db8::1]:80", false, host, sizeof(host), &port));
	assert_string_equal(host, "2001:db8::1");
	assert_int_equal(port, 80);
	assert_true(sq_parse_host_port("name.example:65535", false, host, sizeof(host), &port));
	assert_string_equal(host, "name.example");
	assert_true(sq_parse_host_port("198.18.0.1:0", true, host, sizeof(host), &port));
	assert_int_equal(port, 0);
	assert_false(sq_parse_host_port("198.18.0.1:0", false, host, sizeof(host), &port));
	assert_false(sq_parse_host_port("198.18.0.1:65536", false, host, sizeof(host), &port));
	assert_false(sq_parse_host_port("2001:db8::1:80", false, host, sizeof(host), &port));
	assert_false(sq_parse_host_port("[2001:db8::1]80", false, host, sizeof(host), &port));
	assert_false(sq_parse_host_port(":80", false, host, sizeof(host), &port));
	assert_false(sq_parse_host_port("198.18.0.1:", false, host, sizeof(host), &port));
	assert_false(sq_parse_host_port("198.18.0.1:80x", false, host, sizeof(host), &port));
	assert_false(sq_parse_host_port("198.18.0.1", false, host, sizeof(host), &port));
	assert_false(sq_parse_host_port("a-rather-long-name.example:80", false, host, 8, &port));
}

static void numeric_endpoints(void **state)
{
	(void)state;
	struct sockaddr_storage ss;
	socklen_t len = 0;
	assert_true(sq_parse_numeric_endpoint("198.18.40.1:5001", false, &ss, &len));
	const struct sockaddr_in *v4 = (const struct sockaddr_in *)&ss;
	assert_int_equal(v4->sin_family, AF_INET);
	assert_int_equal(ntohs(v4->sin_port), 5001);
	assert_int_equal(ntohl(v4->sin_addr.s_addr), 0xc6122801);
	assert_int_equal(len, sizeof(struct sockaddr_in));
	assert_true(sq_parse_numeric_endpoint("[2001:db8::1]:80", false, &ss, &len));
	const struct sockaddr_in6 *v6 = (const struct sockaddr_in6 *)&ss;
	assert_int_equal(v6->sin6_family, AF_INET6);
	assert_int_equal(ntohs(v6->sin6_port), 80);
	assert_int_equal(v6->sin6_addr.s6_addr[15], 1);
	assert_int_equal(len, sizeof(struct sockaddr_in6));
	assert_true(sq_parse_numeric_endpoint("0.0.0.0:0", true, &ss, &len));
	assert_false(sq_parse_numeric_endpoint("0.0.0.0:0", false, &ss, &len));
	assert_false(sq_parse_numeric_endpoint("host.example:80", false, &ss, &len));
	assert_false(sq_parse_numeric_endpoint("[198.18.40.1]:80", false, &ss, &len));
	assert_false(sq_parse_numeric_endpoint("[::1:80", false, &ss, &len));
	assert_false(sq_parse_numeric_endpoint("198.18.40.300:80", false, &ss, &len));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(durations_are_exact_microseconds),
		cmocka_unit_test(durations_refuse_what_is_not_whole_or_written_out),
		cmocka_unit_test(rates_are_exact_bits_per_second),
		cmocka_unit_test(sizes_are_bytes_that_fit_32_bits),
		cmocka_unit_test(custom_units_including_a_bare_number),
		cmocka_unit_test(counts_are_digits_up_to_a_maximum),
		cmocka_unit_test(probabilities_and_booleans),
		cmocka_unit_test(host_port_forms),
		cmocka_unit_test(numeric_endpoints),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
