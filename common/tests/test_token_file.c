/* The run token's file: its one format, its mode, and messages that never show its content. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "token_file.h"

static char path[64];

static void write_token_file(const char *text, mode_t mode)
{
	snprintf(path, sizeof(path), "/tmp/squall-token-test-%d", (int)getpid());
	unlink(path);
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	assert_int_equal(fchmod(fd, mode), 0);
	close(fd);
}

static int remove_file(void **state)
{
	(void)state;
	unlink(path);
	return 0;
}

static void reads_sixteen_hex_digits_with_or_without_newline(void **state)
{
	(void)state;
	const char *forms[] = { "0123456789abcdef", "0123456789ABCDEF\n", "0x0123456789abcdef\r\n" };
	for (size_t i = 0; i < sizeof(forms) / sizeof(forms[0]); i++) {
		write_token_file(forms[i], 0600);
		uint64_t token = 0;
		char err[256] = "";
		assert_true(sq_token_file_read(path, &token, err, sizeof(err)));
		assert_true(token == 0x0123456789abcdefULL);
	}
	write_token_file("fedcba9876543210", 0400);
	uint64_t token = 0;
	char err[256] = "";
	assert_true(sq_token_file_read(path, &token, err, sizeof(err)));
	assert_true(token == 0xfedcba9876543210ULL);
}

static void refuses_other_content_without_showing_it(void **state)
{
	(void)state;
	const char *bad[] = { "", "0123456789abcde", "0123456789abcdef0", "0123456789abcdeg",
			      "0123456789abcdef\n\nx", " 0123456789abcdef", "secretsecretsecret\n" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		write_token_file(bad[i], 0600);
		uint64_t token = 0;
		char err[256] = "";
		assert_false(sq_token_file_read(path, &token, err, sizeof(err)));
		assert_non_null(strstr(err, "does not hold a run token"));
		assert_null(strstr(err, "secret"));
		assert_non_null(strstr(err, path));
	}
}

static void refuses_a_file_others_can_read(void **state)
{
	(void)state;
	write_token_file("0123456789abcdef", 0644);
	uint64_t token = 0;
	char err[256] = "";
	assert_false(sq_token_file_read(path, &token, err, sizeof(err)));
	assert_non_null(strstr(err, "(mode 0644): it must be 0600 or stricter"));
	assert_null(strstr(err, "0123456789abcdef"));
	write_token_file("0123456789abcdef", 0620);
	assert_false(sq_token_file_read(path, &token, err, sizeof(err)));
}

static void reads_a_pipe_and_names_a_missing_file(void **state)
{
	(void)state;
	int fds[2];
	assert_int_equal(pipe(fds), 0);
	assert_int_equal(write(fds[1], "00000000000000ff\n", 17), 17);
	close(fds[1]);
	char fd_path[32];
	snprintf(fd_path, sizeof(fd_path), "/dev/fd/%d", fds[0]);
	uint64_t token = 0;
	char err[256] = "";
	assert_true(sq_token_file_read(fd_path, &token, err, sizeof(err)));
	assert_true(token == 0xff);
	close(fds[0]);
	assert_false(sq_token_file_read("/nonexistent/token", &token, err, sizeof(err)));
	assert_string_equal(err, "cannot open the token file /nonexistent/token: No such file or directory");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(reads_sixteen_hex_digits_with_or_without_newline, remove_file),
		cmocka_unit_test_teardown(refuses_other_content_without_showing_it, remove_file),
		cmocka_unit_test_teardown(refuses_a_file_others_can_read, remove_file),
		cmocka_unit_test(reads_a_pipe_and_names_a_missing_file),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
