/* The event log: line formatting, lateness statistics and the file layout. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config_file.h"
#include "event_log.h"
#include "lateness.h"
#include "log_line.h"
#include "log_writer.h"
#include "test_packets.h"

static void test_packet_event_line(void **state)
{
	(void)state;
	uint8_t p[200];
	size_t len = tp_ipv4(p, 6, 0, tp_tcp(p + 20, SQ_TCP_SYN | SQ_TCP_ACK, 0, 60));
	struct sq_pkt_meta m;
	struct sq_pkt_identity id;
	assert_true(sq_pkt_inspect(p, len, &m, &id));
	struct sq_event ev = {
		.t = 1234567, .type = SQ_EV_OUT, .dir = SQ_UP, .pkt_id = 42, .ip_len = 100,
		.state = SQ_BAD, .attempt = 2, .sbuf = 300, .rbuf = 100,
	};
	struct sq_log_record r = sq_log_record_of_event(&ev, &id);
	char line[SQ_LOG_LINE_MAX];
	size_t n = sq_log_format(&r, line, sizeof(line));
	assert_string_equal(line, "1234567\tout\tup\t42\t100\tbad\t2\t300\t100\ttcp\t198.18.0.1\t5000\t"
				  "198.18.1.2\t80\t4660\t1000\t2000\tSA\t60\t-\n");
	assert_int_equal(n, strlen(line));
}

static void test_enqueue_has_no_attempt_and_udp_no_tcp_fields(void **state)
{
	(void)state;
	uint8_t p[100];
	size_t len = tp_ipv6(p, 17, 0, tp_udp(p + 40, 10));
	struct sq_pkt_meta m;
	struct sq_pkt_identity id;
	assert_true(sq_pkt_inspect(p, len, &m, &id));
	struct sq_event ev = { .t = 5, .type = SQ_EV_ENQUEUE, .dir = SQ_DOWN, .pkt_id = 1, .ip_len = 58,
			       .state = SQ_GOOD, .sbuf = 58 };
	struct sq_log_record r = sq_log_record_of_event(&ev, &id);
	char line[SQ_LOG_LINE_MAX];
	sq_log_format(&r, line, sizeof(line));
	assert_string_equal(line, "5\tenqueue\tdown\t1\t58\tgood\t-\t58\t0\tudp\t2001:db8::1\t4000\t"
				  "2001:db8::2\t5000\t-\t-\t-\t-\t10\t-\n");
}

static void test_state_and_peer_lines(void **state)
{
	(void)state;
	struct sq_event ev = { .t = 10342117, .type = SQ_EV_STATE, .state = SQ_BAD };
	struct sq_log_record r = sq_log_record_of_event(&ev, NULL);
	char line[SQ_LOG_LINE_MAX];
	sq_log_format(&r, line, sizeof(line));
	assert_string_equal(line, "10342117\tstate\t-\t-\t-\tbad\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-\tgood\n");
	struct sq_log_record peer = { .t = -1500, .event = "peer", .note = "router up 198.18.0.1:40000" };
	sq_log_format(&peer, line, sizeof(line));
	assert_string_equal(line, "-1500\tpeer\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-\t"
				  "router up 198.18.0.1:40000\n");
	int columns = 1;
	for (const char *c = line; *c; c++)
		columns += *c == '\t';
	assert_int_equal(columns, 20);
}

static void test_tcp_flags_and_truncation(void **state)
{
	(void)state;
	char f[9];
	sq_tcp_flags_text(0, f);
	assert_string_equal(f, ".");
	sq_tcp_flags_text(0xff, f);
	assert_string_equal(f, "FSRPAUEC");
	sq_tcp_flags_text(SQ_TCP_FIN | SQ_TCP_ACK, f);
	assert_string_equal(f, "FA");
	struct sq_log_record r = { .t = 1, .event = "peer", .note = "a long note" };
	char small[12];
	size_t n = sq_log_format(&r, small, sizeof(small));
	assert_int_equal(n, 11);
	assert_string_equal(small, "1\tpeer\t-\t-\n");   /* cut, but still one whole line */
}

static void test_cached_identity_gives_the_same_line(void **state)
{
	(void)state;
	/* The SP formats a packet's identity once and reuses it for every event. */
	uint8_t p[200];
	size_t len = tp_ipv4(p, 6, 0, tp_tcp(p + 20, SQ_TCP_FIN | SQ_TCP_PSH | SQ_TCP_ACK, 12, 7));
	p[12] = 0; p[13] = 0; p[14] = 0; p[15] = 0;
	p[16] = 255; p[17] = 255; p[18] = 255; p[19] = 255;
	struct sq_pkt_meta m;
	struct sq_pkt_identity id;
	assert_true(sq_pkt_inspect(p, len, &m, &id));
	char id_text[SQ_LOG_ID_TEXT_MAX];
	size_t id_len = sq_log_identity_text(&id, id_text, sizeof(id_text));
	assert_string_equal(id_text, "\ttcp\t0.0.0.0\t5000\t255.255.255.255\t80\t4660\t1000\t2000\tFPA\t7");
	assert_int_equal(id_len, strlen(id_text));
	struct sq_event ev = {
		.t = INT64_MAX, .type = SQ_EV_TX, .dir = SQ_DOWN, .pkt_id = UINT64_MAX, .ip_len = 79,
		.state = SQ_GOOD, .attempt = 4294967295u, .sbuf = 0, .rbuf = 4294967295u,
	};
	struct sq_log_record r = sq_log_record_of_event(&ev, &id);
	char direct[SQ_LOG_LINE_MAX], cached[SQ_LOG_LINE_MAX];
	size_t n = sq_log_format(&r, direct, sizeof(direct));
	r.id_text = id_text;
	r.id_text_len = id_len;
	assert_int_equal(sq_log_format(&r, cached, sizeof(cached)), n);
	assert_string_equal(cached, direct);
	assert_string_equal(direct, "9223372036854775807\ttx\tdown\t18446744073709551615\t79\tgood\t"
				    "4294967295\t0\t4294967295\ttcp\t0.0.0.0\t5000\t255.255.255.255\t80\t"
				    "4660\t1000\t2000\tFPA\t7\t-\n");
}

static void test_negative_time_and_ipv6_identity(void **state)
{
	(void)state;
	uint8_t p[100] = { 0 };
	size_t len = tp_ipv6(p, 58, 0, 8);   /* ICMPv6: no ports, no payload length */
	memset(p + 8, 0, 16);
	p[18] = 0xff; p[19] = 0xff; p[20] = 198; p[21] = 18; p[22] = 0; p[23] = 1;   /* ::ffff:198.18.0.1 */
	struct sq_pkt_meta m;
	struct sq_pkt_identity id;
	assert_true(sq_pkt_inspect(p, len, &m, &id));
	char id_text[SQ_LOG_ID_TEXT_MAX];
	sq_log_identity_text(&id, id_text, sizeof(id_text));
	assert_string_equal(id_text, "\ticmp6\t::ffff:198.18.0.1\t-\t2001:db8::2\t-\t-\t-\t-\t-\t-");
	struct sq_log_record r = { .t = INT64_MIN + 1, .event = "peer", .note = "x" };
	char line[SQ_LOG_LINE_MAX];
	sq_log_format(&r, line, sizeof(line));
	assert_string_equal(line, "-9223372036854775807\tpeer\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-\tx\n");
}

/* A new empty file for a writer test; its name in path. */
static void temp_file(char path[static 32])
{
	strcpy(path, "/tmp/squall-test-writer-XXXXXX");
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
}

static void test_log_writer_keeps_order_and_reports_failure(void **state)
{
	(void)state;
	/* Many small writes and stdio flushes reach the file complete and in order. */
	char path[32];
	temp_file(path);
	char err[256];
	FILE *f = sq_log_writer_open(path, NULL, err, sizeof(err));
	assert_non_null(f);
	for (int i = 0; i < 20000; i++) {
		fprintf(f, "%d\n", i);
		if (i % 997 == 0)
			fflush(f);
	}
	assert_int_equal(fclose(f), 0);
	FILE *back = fopen(path, "r");
	assert_non_null(back);
	int expected = 0, got;
	while (fscanf(back, "%d", &got) == 1)
		assert_int_equal(got, expected++);
	assert_int_equal(expected, 20000);
	fclose(back);
	unlink(path);
	/* A disk that refuses the data makes the close fail: the log is known to be incomplete. */
	f = sq_log_writer_open("/dev/full", NULL, err, sizeof(err));
	assert_non_null(f);
	fputs("x\n", f);
	assert_int_not_equal(fclose(f), 0);
	/* A path that cannot be created is named in the message. */
	assert_null(sq_log_writer_open("/nonexistent-dir/emulator.log", NULL, err, sizeof(err)));
	assert_non_null(strstr(err, "log /nonexistent-dir/emulator.log: cannot create: "));
}

static void test_log_writer_ring_wraps_and_counts(void **state)
{
	(void)state;
	/* More than twice the ring, in writes of every size up to more than the ring
	 * itself: the file holds exactly what was written, in order. */
	char path[32];
	temp_file(path);
	char err[256];
	struct sq_log_writer *w = NULL;
	FILE *f = sq_log_writer_open(path, &w, err, sizeof(err));
	assert_non_null(f);
	assert_non_null(w);
	setvbuf(f, NULL, _IONBF, 0);           /* every fwrite reaches the writer as it is */
	size_t big = SQ_LOG_RING_BYTES + 12345, total = 0;
	char *data = malloc(big);
	assert_non_null(data);
	uint32_t x = 1;
	size_t sizes[] = { 1, 7, 4093, 65536, 1u << 20, SQ_LOG_RING_BYTES - 3, big, 99 };
	for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
		for (size_t i = 0; i < sizes[s]; i++) {
			x = x * 1103515245u + 12345u;
			data[i] = (char)(x >> 16);
		}
		assert_int_equal(fwrite(data, 1, sizes[s], f), sizes[s]);
		total += sizes[s];
	}
	struct sq_log_writer_stats st;
	sq_log_writer_stats(w, &st);
	assert_int_equal(st.ring_bytes, SQ_LOG_RING_BYTES);
	assert_true(st.max_fill_bytes <= SQ_LOG_RING_BYTES);
	assert_true(st.max_fill_bytes >= SQ_LOG_RING_BYTES - 3);
	assert_int_equal(fclose(f), 0);
	FILE *back = fopen(path, "rb");
	assert_non_null(back);
	x = 1;
	size_t seen = 0;
	for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
		assert_int_equal(fread(data, 1, sizes[s], back), sizes[s]);
		for (size_t i = 0; i < sizes[s]; i++) {
			x = x * 1103515245u + 12345u;
			if (data[i] != (char)(x >> 16))
				fail_msg("byte %zu differs", seen + i);
		}
		seen += sizes[s];
	}
	assert_int_equal(fgetc(back), EOF);
	assert_int_equal(seen, total);
	fclose(back);
	free(data);
	unlink(path);
}

static void test_lateness_quantiles(void **state)
{
	(void)state;
	struct sq_lateness *l = malloc(sizeof(*l));
	sq_lateness_init(l);
	assert_int_equal(sq_lateness_quantile_us(l, 0.5), 0);
	for (int i = 1; i <= 100; i++)
		sq_lateness_add(l, i * 1000 + 999);   /* 1..100 µs, sub-µs parts dropped */
	sq_lateness_add(l, -5000);                 /* early: counted as 0 */
	assert_int_equal(l->count, 101);
	assert_int_equal(l->early, 1);
	assert_int_equal(sq_lateness_quantile_us(l, 0.5), 50);
	assert_int_equal(sq_lateness_quantile_us(l, 0.99), 99);
	assert_int_equal(sq_lateness_max_us(l), 100);
	/* Large values keep < 0.2 % error and never exceed the maximum. */
	sq_lateness_init(l);
	sq_lateness_add(l, 1234567000);
	uint64_t q = sq_lateness_quantile_us(l, 0.5);
	assert_true(q <= 1234567 && q >= 1234567 - 1234567 / 500);
	sq_lateness_add(l, INT64_MAX);
	assert_int_equal(l->count, 2);
	free(l);
}

static char *read_all(const char *path)
{
	FILE *f = fopen(path, "r");
	assert_non_null(f);
	char *buf = calloc(1, 1 << 16);
	size_t n = fread(buf, 1, (1 << 16) - 1, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

static void test_file_layout(void **state)
{
	(void)state;
	char path[] = "/tmp/squall-test-log-XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	struct sq_emu_config *cfg = malloc(sizeof(*cfg));
	sq_config_init(cfg);
	static const char *const text = "token = 00000000000000aa\nlog = x\nseed = 9\nreplication = 2\n"
		"[channel]\ngood = fixed(1s)\nbad = fixed(1s)\n"
		"[down]\nmtu = 576B\nbandwidth = 64kbit\ndelay = 1ms\nsend_buffer = 1000B\n"
		"[up]\nmtu = 576B\nbandwidth = 64kbit\ndelay = 1ms\nsend_buffer = 1000B\n";
	char err[256];
	assert_true(sq_config_parse(cfg, "c", text, strlen(text), err, sizeof(err)));
	struct sq_event_log log;
	assert_true(sq_event_log_open(&log, path, err, sizeof(err)));
	sq_event_log_prestart(&log, 1000000, "router up 127.0.0.1:1");
	sq_event_log_prestart(&log, 1999999, "mobile up 127.0.0.1:2");
	sq_event_log_header(&log, cfg, true, 2000000, 1795312345678901);
	struct sq_log_record r = { .t = 0, .event = "start", .note = "1795312345678901" };
	sq_event_log_write(&log, &r);
	struct sq_lateness *lat = malloc(sizeof(*lat));
	sq_lateness_init(lat);
	sq_lateness_add(lat, 12000);
	struct sq_log_totals totals = { .end_us = 777, .pending = 1, .lateness = lat, .end_reason = "stop" };
	totals.counters[SQ_DOWN][SQ_EV_IN] = 3;
	totals.rejected[SQ_REJ_BAD_TOKEN] = 4;
	sq_event_log_trailer(&log, &totals);
	assert_true(sq_event_log_close(&log, err, sizeof(err)));
	char *content = read_all(path);
	const char *expected_start =
		"# squall-emulator event log\n# format 1\n# seed 9\n# replication 2\n# started yes\n"
		"# start_realtime_us 1795312345678901\n# config listen = 0.0.0.0:5300\n";
	assert_memory_equal(content, expected_start, strlen(expected_start));
	assert_non_null(strstr(content, "# config down.bandwidth = 64000bit\n"));
	assert_non_null(strstr(content, "# config token = <redacted>\n"));   /* never the token */
	assert_null(strstr(content, "00000000000000aa"));
	assert_non_null(strstr(content, "# columns time_us event dir pkt_id"));
	assert_non_null(strstr(content, "\n-1000\tpeer\t-"));
	assert_non_null(strstr(content, "\n-1\tpeer\t-"));   /* 1 ns before t = 0 is -1 µs */
	assert_non_null(strstr(content, "\n0\tstart\t-"));
	assert_non_null(strstr(content, "\n# end time_us 777 reason stop\n# counters down in 3 enqueue 0 "));
	assert_non_null(strstr(content, "\n# pending 1\n"));
	assert_non_null(strstr(content, " bad_token 4 "));
	assert_non_null(strstr(content, "\n# lateness_us n 1 p50 12 p99 12 max 12 early 0\n"));
	assert_true(strstr(content, "\n-1000\tpeer") < strstr(content, "\n0\tstart"));
	free(content);
	free(lat);
	free(cfg);
	unlink(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_packet_event_line),
		cmocka_unit_test(test_enqueue_has_no_attempt_and_udp_no_tcp_fields),
		cmocka_unit_test(test_state_and_peer_lines),
		cmocka_unit_test(test_tcp_flags_and_truncation),
		cmocka_unit_test(test_cached_identity_gives_the_same_line),
		cmocka_unit_test(test_negative_time_and_ipv6_identity),
		cmocka_unit_test(test_log_writer_keeps_order_and_reports_failure),
		cmocka_unit_test(test_log_writer_ring_wraps_and_counts),
		cmocka_unit_test(test_lateness_quantiles),
		cmocka_unit_test(test_file_layout),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
