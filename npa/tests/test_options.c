/* squall-npa command line: values, defaults, and errors that name the flag. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../src/cli_values.h"
#include "../src/options.h"
#include "wire.h"

#define BASE "squall-npa", "--role", "mobile", "--emulator", "198.19.128.1:5300", \
	"--token", "0123456789abcdef", "--address", "198.19.10.2/32"

static char err[512];

static int parse(int argc, char **argv, struct npa_options *o)
{
	err[0] = '\0';
	return npa_options_parse(argc, argv, o, err, sizeof(err));
}

#define PARSE(o, ...) ({ char *argv_[] = { __VA_ARGS__ }; \
	parse((int)(sizeof(argv_) / sizeof(argv_[0])), argv_, (o)); })

static void test_minimal_command_line_gets_defaults(void **state)
{
	(void)state;
	struct npa_options o;
	assert_int_equal(PARSE(&o, BASE), 0);
	assert_int_equal(o.role, SQ_ROLE_MOBILE);
	assert_int_equal(o.token, 0x0123456789abcdefULL);
	assert_string_equal(o.dev, "wl0");
	assert_int_equal(o.mtu, 0);
	assert_int_equal(o.keepalive_us, 1000000);
	assert_int_equal(o.peer_timeout_us, 5000000);
	assert_int_equal(o.connect_timeout_us, 5000000);
	assert_int_equal(o.n_routes, 0);
	assert_false(o.has_peer);
	const struct sockaddr_in *sin = (const void *)&o.emulator.addr;
	assert_int_equal(sin->sin_family, AF_INET);
	assert_int_equal(ntohs(sin->sin_port), 5300);
	assert_int_equal(ntohl(sin->sin_addr.s_addr), 0xc6138001u);
	assert_int_equal(o.address.prefixlen, 32);
	assert_int_equal(o.host, 0);   /* host 1 of a cell, as before cells */
	assert_int_equal(PARSE(&o, BASE, "--host", "3"), 0);
	assert_int_equal(o.host, 3);
}

static void test_routes_with_and_without_gateway(void **state)
{
	(void)state;
	struct npa_options o;
	assert_int_equal(PARSE(&o, BASE, "--route", "198.18.3.0/24", "--route", "10.0.0.0/8",
			       "via", "198.19.10.1", "--route=0.0.0.0/0 via 198.19.10.1",
			       "--peer", "198.19.10.1", "--mtu", "1500", "--dev", "wl9"), 0);
	assert_int_equal(o.n_routes, 3);
	assert_false(o.routes[0].has_gateway);
	assert_int_equal(o.routes[0].dst.prefixlen, 24);
	assert_true(o.routes[1].has_gateway);
	assert_int_equal(o.routes[1].dst.prefixlen, 8);
	assert_memory_equal(o.routes[1].gateway.addr, "\xc6\x13\x0a\x01", 4);
	assert_true(o.routes[2].has_gateway);
	assert_int_equal(o.routes[2].dst.prefixlen, 0);
	assert_true(o.has_peer);
	assert_int_equal(o.mtu, 1500);
	assert_string_equal(o.dev, "wl9");
}

static void test_durations_with_units(void **state)
{
	(void)state;
	struct npa_options o;
	assert_int_equal(PARSE(&o, BASE, "--keepalive", "250ms", "--peer-timeout", "1.5s",
			       "--connect-timeout=800us"), 0);
	assert_int_equal(o.keepalive_us, 250000);
	assert_int_equal(o.peer_timeout_us, 1500000);
	assert_int_equal(o.connect_timeout_us, 800);
	assert_false(o.no_gso);
	assert_int_equal(PARSE(&o, BASE, "--no-gso"), 0);
	assert_true(o.no_gso);
}

static void expect_error(int argc, char **argv, const char *fragment)
{
	struct npa_options o;
	assert_int_equal(parse(argc, argv, &o), -1);
	if (strstr(err, fragment) == NULL)
		fail_msg("error '%s' does not contain '%s'", err, fragment);
}

#define EXPECT_ERROR(fragment, ...) do { char *argv_[] = { __VA_ARGS__ }; \
	expect_error((int)(sizeof(argv_) / sizeof(argv_[0])), argv_, fragment); } while (0)

static void test_errors_name_the_flag(void **state)
{
	(void)state;
	EXPECT_ERROR("--keepalive", BASE, "--keepalive", "200");
	EXPECT_ERROR("--keepalive", BASE, "--keepalive", "0ms");
	EXPECT_ERROR("--token", "squall-npa", "--token", "0123");
	EXPECT_ERROR("--token", "squall-npa", "--token", "0123456789abcdeg");
	EXPECT_ERROR("--role", "squall-npa", "--role", "sp");
	EXPECT_ERROR("--emulator", BASE, "--emulator", "198.19.128.1");
	EXPECT_ERROR("--emulator", BASE, "--emulator", "198.19.128.1:70000");
	EXPECT_ERROR("--address", BASE, "--address", "198.19.10.300/24");
	EXPECT_ERROR("--address", BASE, "--address", "198.19.10.2/33");
	EXPECT_ERROR("--route", BASE, "--route", "198.18.3.1/24");
	EXPECT_ERROR("--route ... via", BASE, "--route", "198.18.3.0/24", "via", "2001:db8::1");
	EXPECT_ERROR("--mtu", BASE, "--mtu", "20");
	EXPECT_ERROR("--dev", BASE, "--dev", "a-name-that-is-too-long");
	EXPECT_ERROR("--peer-timeout", BASE, "--keepalive", "2s", "--peer-timeout", "1s");
	EXPECT_ERROR("--peer", BASE, "--peer", "2001:db8::2");
	EXPECT_ERROR("--mtu needs a value", BASE, "--mtu");
	EXPECT_ERROR("--host", BASE, "--host", "0");
	EXPECT_ERROR("--host", BASE, "--host", "17");
	EXPECT_ERROR("--host: only a mobile NPA", "squall-npa", "--role", "router", "--emulator",
		     "127.0.0.1:5300", "--token", "0123456789abcdef", "--address", "198.19.10.1/32",
		     "--host", "2");
	EXPECT_ERROR("unknown option '--bogus'", BASE, "--bogus", "1");
	EXPECT_ERROR("unexpected argument 'extra'", BASE, "extra");
	EXPECT_ERROR("missing --token", "squall-npa", "--role", "router", "--emulator",
		     "127.0.0.1:5300", "--address", "198.19.10.1/32");
	EXPECT_ERROR("missing --address", "squall-npa", "--role", "router", "--emulator",
		     "127.0.0.1:5300", "--token", "0123456789abcdef");
}

static void test_ipv6_endpoint_and_address(void **state)
{
	(void)state;
	struct npa_options o;
	assert_int_equal(PARSE(&o, "squall-npa", "--role", "router", "--emulator", "[::1]:5300",
			       "--token", "0x00000000000000ff", "--address", "2001:db8::1/64",
			       "--route", "2001:db8:1::/48"), 0);
	assert_int_equal(o.emulator.addr.ss_family, AF_INET6);
	assert_int_equal(o.address.family, AF_INET6);
	assert_int_equal(o.address.prefixlen, 64);
	assert_int_equal(o.token, 0xff);
	assert_int_equal(o.routes[0].dst.prefixlen, 48);
}

/* The token from a 0600 file: what the runner passes, so that /proc/PID/cmdline shows none. */
static void test_token_file(void **state)
{
	(void)state;
	char path[64];
	snprintf(path, sizeof(path), "/tmp/squall-npa-token-%d", (int)getpid());
	unlink(path);
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "00000000000000aa\n", 17), 17);
	struct npa_options o;
	assert_int_equal(PARSE(&o, "squall-npa", "--role", "router", "--emulator", "127.0.0.1:5300",
			       "--token-file", path, "--address", "198.19.10.1/32"), 0);
	assert_int_equal(o.token, 0xaa);
	assert_int_equal(fchmod(fd, 0644), 0);
	close(fd);
	assert_int_equal(PARSE(&o, "squall-npa", "--role", "router", "--emulator", "127.0.0.1:5300",
			       "--token-file", path, "--address", "198.19.10.1/32"), -1);
	assert_non_null(strstr(err, "--token-file: the token file "));
	assert_non_null(strstr(err, "(mode 0644): it must be 0600 or stricter"));
	unlink(path);
	assert_int_equal(PARSE(&o, "squall-npa", "--role", "router", "--emulator", "127.0.0.1:5300",
			       "--token-file", path, "--address", "198.19.10.1/32"), -1);
	assert_non_null(strstr(err, "--token-file: cannot open the token file "));
}

static void test_duration_formatting_for_messages(void **state)
{
	(void)state;
	char buf[32];
	npa_format_duration(5000000, buf, sizeof(buf));
	assert_string_equal(buf, "5 s");
	npa_format_duration(500000, buf, sizeof(buf));
	assert_string_equal(buf, "500 ms");
	npa_format_duration(1500000, buf, sizeof(buf));
	assert_string_equal(buf, "1.5 s");
	npa_format_duration(800, buf, sizeof(buf));
	assert_string_equal(buf, "800 us");
}

static void test_help_stops_parsing(void **state)
{
	(void)state;
	struct npa_options o;
	assert_int_equal(PARSE(&o, "squall-npa", "--help", "--bogus"), 0);
	assert_true(o.help);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_minimal_command_line_gets_defaults),
		cmocka_unit_test(test_routes_with_and_without_gateway),
		cmocka_unit_test(test_durations_with_units),
		cmocka_unit_test(test_errors_name_the_flag),
		cmocka_unit_test(test_ipv6_endpoint_and_address),
		cmocka_unit_test(test_token_file),
		cmocka_unit_test(test_duration_formatting_for_messages),
		cmocka_unit_test(test_help_stops_parsing),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
