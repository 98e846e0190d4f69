/* The whole emulator process on loopback (no root): a forked sq_event_loop_run() with
 * this test playing the two NPAs and the runner over UDP. Asserts what users rely
 * on: registration, exact delivery times in the log, run control, rejected
 * datagrams, lost peers and exit codes. Times asserted are model times, never
 * wall-clock limits. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/udp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "config_file.h"
#include "event_loop.h"
#include "test_packets.h"
#include "wire.h"

#define TOKEN 0x0123456789abcdefULL

/* The running emulator, so a failed test does not leave it behind. */
static pid_t running_child;

static int kill_leftover(void **state)
{
	(void)state;
	if (running_child > 0) {
		kill(running_child, SIGKILL);
		waitpid(running_child, NULL, 0);
		running_child = 0;
	}
	return 0;
}

struct emu {
	pid_t pid;
	struct sockaddr_in addr;
	char log_path[64];
	char control_path[64];
};

static int udp_socket(void)
{
	int fd = socket(AF_INET, SOCK_DGRAM, 0);
	assert_true(fd >= 0);
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	struct timeval tv = { .tv_sec = 3 };
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	return fd;
}

/* A port nobody uses right now (the emulator binds it right after). */
static uint16_t free_port(void)
{
	int fd = udp_socket();
	struct sockaddr_in a;
	socklen_t len = sizeof(a);
	getsockname(fd, (struct sockaddr *)&a, &len);
	close(fd);
	return ntohs(a.sin_port);
}

static void start_emulator(struct emu *e, const char *link_text)
{
	snprintf(e->log_path, sizeof(e->log_path), "/tmp/squall-loopback-%d.log", (int)getpid());
	snprintf(e->control_path, sizeof(e->control_path), "/tmp/squall-loopback-%d.sock", (int)getpid());
	unlink(e->control_path);
	uint16_t port = free_port();
	char text[2048];
	snprintf(text, sizeof(text), "listen = 127.0.0.1:%u\ntoken = 0123456789abcdef\nlog = %s\nseed = 1\n"
		 "control = %s\n%s", port, e->log_path, e->control_path, link_text);
	struct sq_emu_config *cfg = malloc(sizeof(*cfg));
	sq_config_init(cfg);
	char err[512];
	if (!sq_config_parse(cfg, "loopback.conf", text, strlen(text), err, sizeof(err)))
		fail_msg("%s", err);
	fflush(NULL);
	e->pid = fork();
	assert_true(e->pid >= 0);
	if (e->pid == 0)
		_exit(sq_event_loop_run(cfg));
	running_child = e->pid;
	free(cfg);
	e->addr = (struct sockaddr_in){ .sin_family = AF_INET, .sin_port = htons(port),
					.sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
}

#define EXIT_WAIT_MS 30000

/* The emulator's exit status; an emulator that has not ended within EXIT_WAIT_MS is killed
 * and the test fails (a test that waits for ever would hold up the whole suite). */
static int wait_exit(struct emu *e)
{
	int status = 0;
	pid_t got = 0;
	for (int waited_ms = 0; waited_ms < EXIT_WAIT_MS; waited_ms += 10) {
		got = waitpid(e->pid, &status, WNOHANG);
		if (got != 0)
			break;
		usleep(10 * 1000);
	}
	if (got == 0) {
		kill(e->pid, SIGKILL);
		waitpid(e->pid, &status, 0);
		running_child = 0;
		fail_msg("the emulator did not exit within %d ms", EXIT_WAIT_MS);
	}
	assert_int_equal(got, e->pid);
	running_child = 0;
	assert_true(WIFEXITED(status));
	return WEXITSTATUS(status);
}

/* A message of a cell's host (the header's host: 0 for host 1, as every NPA sends it). */
static void send_hosted(int fd, const struct emu *e, uint8_t type, uint8_t role, uint16_t host, uint8_t flags,
			uint64_t token, const uint8_t *payload, uint16_t len)
{
	uint8_t buf[SQ_WIRE_HEADER_LEN + 1500];
	struct sq_wire_header h = { .version = SQ_WIRE_VERSION, .type = type, .role = role, .flags = flags,
				    .token = token, .length = len, .host = host };
	sq_wire_encode(buf, &h);
	if (len)
		memcpy(buf + SQ_WIRE_HEADER_LEN, payload, len);
	assert_true(sendto(fd, buf, SQ_WIRE_HEADER_LEN + len, 0, (const struct sockaddr *)&e->addr,
			   sizeof(e->addr)) > 0);
}

static void send_flagged(int fd, const struct emu *e, uint8_t type, uint8_t role, uint8_t flags, uint64_t token,
			 const uint8_t *payload, uint16_t len)
{
	send_hosted(fd, e, type, role, 0, flags, token, payload, len);
}

static void send_msg(int fd, const struct emu *e, uint8_t type, uint8_t role, uint64_t token,
		     const uint8_t *payload, uint16_t len)
{
	send_flagged(fd, e, type, role, 0, token, payload, len);
}

/* Connects to the emulator's control socket (retrying while it starts up); -1 if it never
 * appears. */
static int control_connect(const struct emu *e)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	strcpy(a.sun_path, e->control_path);
	for (int attempt = 0; attempt < 100; attempt++) {
		int fd = socket(AF_UNIX, SOCK_STREAM, 0);
		assert_true(fd >= 0);
		if (connect(fd, (struct sockaddr *)&a, sizeof(a)) == 0) {
			struct timeval tv = { .tv_sec = 3 };
			setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
			return fd;
		}
		close(fd);
		usleep(20000);
	}
	return -1;
}

/* One command on the control socket; returns its answer line (without \n) in answer. */
static void control(const struct emu *e, const char *command, char *answer, size_t cap)
{
	int fd = control_connect(e);
	assert_true(fd >= 0);
	char line[32];
	int len = snprintf(line, sizeof(line), "%s\n", command);
	assert_int_equal(send(fd, line, (size_t)len, 0), len);
	size_t got = 0;
	ssize_t n;
	while (got + 1 < cap && (n = recv(fd, answer + got, cap - 1 - got, 0)) > 0)
		got += (size_t)n;
	answer[got] = '\0';
	char *nl = strchr(answer, '\n');
	assert_non_null(nl);
	*nl = '\0';
	close(fd);
}

/* Receives until a message of type arrives (the SP's keepalives are skipped);
 * copies its payload; returns its length. */
static size_t receive(int fd, uint8_t type, uint8_t *payload, size_t cap)
{
	uint8_t buf[SQ_WIRE_MAX_DATAGRAM];
	for (;;) {
		ssize_t n = recv(fd, buf, sizeof(buf), 0);
		if (n < 0)
			fail_msg("no %s from the emulator", sq_msg_type_name(type));
		struct sq_wire_header h;
		assert_int_equal(sq_wire_decode(buf, (size_t)n, &h), SQ_WIRE_OK);
		assert_int_equal(h.role, SQ_ROLE_SP);
		assert_true(h.token == TOKEN);
		if (h.type != type)
			continue;
		size_t len = h.length < cap ? h.length : cap;
		memcpy(payload, buf + SQ_WIRE_HEADER_LEN, len);
		return h.length;
	}
}

/* HELLO until WELCOME (the emulator may still be starting) for a cell's host; returns the MTU. */
static uint16_t register_host(int fd, const struct emu *e, uint8_t role, uint16_t host)
{
	struct timeval quick = { .tv_usec = 100000 }, normal = { .tv_sec = 3 };
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &quick, sizeof(quick));
	uint8_t buf[SQ_WIRE_MAX_DATAGRAM];
	for (int attempt = 0; attempt < 50; attempt++) {
		send_hosted(fd, e, SQ_MSG_HELLO, role, host, 0, TOKEN, NULL, 0);
		ssize_t n = recv(fd, buf, sizeof(buf), 0);
		struct sq_wire_header h;
		if (n > 0 && sq_wire_decode(buf, (size_t)n, &h) == SQ_WIRE_OK && h.type == SQ_MSG_WELCOME) {
			setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &normal, sizeof(normal));
			assert_int_equal(h.length, 2);
			return (uint16_t)(buf[SQ_WIRE_HEADER_LEN] << 8 | buf[SQ_WIRE_HEADER_LEN + 1]);
		}
	}
	fail_msg("the emulator never answered HELLO");
	return 0;
}

static uint16_t register_npa(int fd, const struct emu *e, uint8_t role)
{
	return register_host(fd, e, role, 0);
}

static size_t udp_packet(uint8_t *p, uint16_t ip_id, size_t total)
{
	size_t len = tp_ipv4(p, 17, 0, tp_udp(p + 20, total - 28));
	tp_put16(p + 4, ip_id);
	return len;
}

/* A UDP packet from 198.19.0.src to 198.19.0.dst, ip id as given. */
static size_t addressed_packet(uint8_t *p, uint16_t ip_id, size_t total, uint8_t src, uint8_t dst)
{
	size_t len = udp_packet(p, ip_id, total);
	const uint8_t s[4] = { 198, 19, 0, src }, d[4] = { 198, 19, 0, dst };
	memcpy(p + 12, s, 4);
	memcpy(p + 16, d, 4);
	return len;
}

static char *read_log(const struct emu *e)
{
	FILE *f = fopen(e->log_path, "r");
	assert_non_null(f);
	char *buf = calloc(1, 1 << 20);
	size_t n = fread(buf, 1, (1 << 20) - 1, f);
	buf[n] = '\0';
	fclose(f);
	unlink(e->log_path);
	return buf;
}

/* The time of the `event` line of packet `pkt_id`, or -1. */
static long long event_time(const char *log, const char *event, unsigned pkt_id)
{
	for (const char *line = log; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
		long long t;
		unsigned id;
		char ev[32], dir[8];
		if (line[0] == '#' || sscanf(line, "%lld\t%31s\t%7s\t%u", &t, ev, dir, &id) != 4)
			continue;
		if (strcmp(ev, event) == 0 && id == pkt_id)
			return t;
	}
	return -1;
}

static const char *const LINK =
	"autostart = peers\n"
	"[channel]\ngood = fixed(1000s)\nbad = fixed(1s)\n"
	"[down]\nmtu = 576B\nbandwidth = 64kbit\ndelay = 200ms\nsend_buffer = 9600B\n"
	"[up]\nmtu = 1500B\nbandwidth = 32kbit\ndelay = 100ms\nsend_buffer = 9600B\n";

static void test_registration_delivery_and_stop(void **state)
{
	(void)state;
	struct emu e;
	start_emulator(&e, LINK);
	int router = udp_socket(), mobile = udp_socket(), stranger = udp_socket();
	uint8_t pkt[1500], got[1500];
	char state_line[96];
	control(&e, "state", state_line, sizeof(state_line));   /* before the run: nothing, no time */
	assert_string_equal(state_line, "state pending 0 last_us -1 now_us -1");
	assert_int_equal(register_npa(router, &e, SQ_ROLE_ROUTER), 1500);   /* it receives up */
	/* DATA before the run starts is dropped: the mobile NPA is not there yet. */
	send_msg(router, &e, SQ_MSG_DATA, SQ_ROLE_ROUTER, TOKEN, pkt, (uint16_t)udp_packet(pkt, 1, 100));
	assert_int_equal(register_npa(router, &e, SQ_ROLE_ROUTER), 1500);   /* a repeated HELLO */
	assert_int_equal(register_npa(mobile, &e, SQ_ROLE_MOBILE), 576);    /* it receives down */
	/* Rejected: wrong token, DATA from a port that did not register. */
	send_msg(router, &e, SQ_MSG_DATA, SQ_ROLE_ROUTER, TOKEN + 1, pkt, (uint16_t)udp_packet(pkt, 2, 100));
	send_msg(stranger, &e, SQ_MSG_DATA, SQ_ROLE_ROUTER, TOKEN, pkt, (uint16_t)udp_packet(pkt, 3, 100));
	/* With the token, a second socket can neither take the mobile role from the live NPA
	 * nor stop the run with a datagram: both are refused, unanswered, and counted. */
	send_msg(stranger, &e, SQ_MSG_HELLO, SQ_ROLE_MOBILE, TOKEN, NULL, 0);
	send_msg(stranger, &e, SQ_MSG_STOP, SQ_ROLE_CONTROL, TOKEN, NULL, 0);
	struct timeval brief = { .tv_usec = 200000 };
	setsockopt(stranger, SOL_SOCKET, SO_RCVTIMEO, &brief, sizeof(brief));
	assert_true(recv(stranger, got, sizeof(got), 0) < 0);   /* no WELCOME, no BYE */
	/* Two packets down (to the real mobile NPA), one up. */
	size_t len = udp_packet(pkt, 10, 100);
	send_msg(router, &e, SQ_MSG_DATA, SQ_ROLE_ROUTER, TOKEN, pkt, (uint16_t)len);
	assert_int_equal(receive(mobile, SQ_MSG_DATA, got, sizeof(got)), len);
	assert_memory_equal(got, pkt, len);
	/* STATE: the link is empty again, its last packet went out 212.5 ms after it came in. */
	control(&e, "state", state_line, sizeof(state_line));
	unsigned long pending;
	long long last_us, now_us;
	assert_int_equal(sscanf(state_line, "state pending %lu last_us %lld now_us %lld", &pending, &last_us, &now_us), 3);
	assert_int_equal(pending, 0);
	assert_true(last_us >= 212500 && now_us >= last_us);
	send_msg(router, &e, SQ_MSG_DATA, SQ_ROLE_ROUTER, TOKEN, pkt, (uint16_t)udp_packet(pkt, 11, 300));
	assert_int_equal(receive(mobile, SQ_MSG_DATA, got, sizeof(got)), 300);
	send_msg(mobile, &e, SQ_MSG_DATA, SQ_ROLE_MOBILE, TOKEN, pkt, (uint16_t)udp_packet(pkt, 12, 100));
	assert_int_equal(receive(router, SQ_MSG_DATA, got, sizeof(got)), 100);
	/* KEEPALIVE is answered. */
	send_msg(mobile, &e, SQ_MSG_KEEPALIVE, SQ_ROLE_MOBILE, TOKEN, NULL, 0);
	receive(mobile, SQ_MSG_KEEPALIVE, got, sizeof(got));
	/* STOP on the control socket is answered once the log is complete; the NPAs get BYE. */
	char answer[64];
	control(&e, "stop", answer, sizeof(answer));
	assert_string_equal(answer, "stopped");
	receive(router, SQ_MSG_BYE, got, sizeof(got));
	assert_int_equal(wait_exit(&e), SQ_EXIT_OK);
	assert_int_equal(access(e.control_path, F_OK), -1);   /* the socket file is gone */
	char *log = read_log(&e);
	/* 100 B at 64 kbit/s = 12.5 ms + 200 ms; 300 B = 37.5 ms + 200 ms; up: 100 B at 32 kbit/s + 100 ms. */
	assert_int_equal(event_time(log, "out", 1) - event_time(log, "in", 1), 212500);
	assert_int_equal(event_time(log, "out", 2) - event_time(log, "in", 2), 237500);
	assert_int_equal(event_time(log, "out", 3) - event_time(log, "in", 3), 125000);
	assert_non_null(strstr(log, "# started yes\n"));
	assert_non_null(strstr(log, "\tpeer\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-\trouter up 127.0.0.1:"));
	assert_null(strstr(strstr(log, "router up") + 1, "router up"));   /* the repeated HELLO is no event */
	assert_non_null(strstr(log, "\n0\tstart\t"));
	assert_non_null(strstr(log, " bad_token 1 "));
	assert_non_null(strstr(log, " unknown_source 1 "));
	assert_non_null(strstr(log, " prestart 1 "));
	assert_non_null(strstr(log, " role_taken 1 udp_control 1\n"));
	assert_non_null(strstr(log, "\n# end time_us "));
	assert_non_null(strstr(log, " reason stop by_pid "));
	assert_non_null(strstr(log, "\n# control start 0 stop 1 refused 0 bad_command 0\n"));
	assert_non_null(strstr(log, "\n# lateness_us n 3 "));
	free(log);
	close(router);
	close(mobile);
	close(stranger);
}

static void test_start_command_and_lost_peer(void **state)
{
	(void)state;
	struct emu e;
	/* peer_timeout leaves room for a busy machine between the registrations and START: NPAs
	 * lost before START would leave a started run that nothing ends */
	start_emulator(&e, "keepalive = 100ms\npeer_timeout = 1s\n"
			   "[channel]\ngood = fixed(1000s)\nbad = fixed(1s)\n"
			   "[down]\nmtu = 576B\nbandwidth = 64kbit\ndelay = 0s\nsend_buffer = 9600B\n"
			   "[up]\nmtu = 576B\nbandwidth = 64kbit\ndelay = 0s\nsend_buffer = 9600B\n");
	int router = udp_socket(), mobile = udp_socket(), stranger = udp_socket();
	register_npa(router, &e, SQ_ROLE_ROUTER);
	register_npa(mobile, &e, SQ_ROLE_MOBILE);
	char first[64], second[64];
	control(&e, "start", first, sizeof(first));
	control(&e, "start", second, sizeof(second));
	assert_string_equal(first, second);   /* a repeated START does not restart */
	unsigned long long t0 = 0;
	assert_int_equal(sscanf(first, "started %llu", &t0), 1);
	struct timespec now;
	clock_gettime(CLOCK_REALTIME, &now);
	assert_true(t0 > 1000000000ULL * 1000000ULL && t0 <= (unsigned long long)now.tv_sec * 1000000ULL + 1000000ULL);
	/* Both NPAs fall silent: the first one found lost ends the run with exit code 3. */
	assert_int_equal(wait_exit(&e), SQ_EXIT_PEER_LOST);
	char *log = read_log(&e);
	assert_true(strstr(log, "\tmobile lost\n") || strstr(log, "\trouter lost\n"));
	assert_true(strstr(log, " reason mobile_lost\n") || strstr(log, " reason router_lost\n"));
	char start_note[32];
	snprintf(start_note, sizeof(start_note), "\t%llu\n", t0);
	assert_non_null(strstr(log, start_note));   /* the start line carries t = 0 */
	assert_non_null(strstr(log, "\n-"));        /* registrations before t = 0 */
	free(log);
	close(router);
	close(mobile);
	close(stranger);
}

static void test_sigterm_before_start(void **state)
{
	(void)state;
	struct emu e;
	start_emulator(&e, "[channel]\ngood = fixed(1000s)\nbad = fixed(1s)\n"
			   "[down]\nmtu = 576B\nbandwidth = 64kbit\ndelay = 0s\nsend_buffer = 9600B\n"
			   "[up]\nmtu = 576B\nbandwidth = 64kbit\ndelay = 0s\nsend_buffer = 9600B\n");
	int router = udp_socket();
	register_npa(router, &e, SQ_ROLE_ROUTER);   /* also: the emulator is up */
	kill(e.pid, SIGTERM);
	assert_int_equal(wait_exit(&e), SQ_EXIT_OK);
	uint8_t got[8];
	receive(router, SQ_MSG_BYE, got, sizeof(got));
	char *log = read_log(&e);
	assert_non_null(strstr(log, "# started no\n"));
	assert_non_null(strstr(log, "\trouter up 127.0.0.1:"));
	char by[64];
	snprintf(by, sizeof(by), " reason sigterm by_pid %d by_uid %u by_comm ", (int)getpid(), (unsigned)getuid());
	assert_non_null(strstr(log, by));   /* who sent the signal */
	assert_non_null(strstr(log, "\n# lateness_us n 0 "));
	free(log);
	close(router);
}

/* The control socket is 0600; a peer of another user (were the mode changed) and anything
 * but start/stop are refused, answered with an error and counted. */
static void test_control_socket_refuses_others_and_bad_commands(void **state)
{
	(void)state;
	struct emu e;
	start_emulator(&e, "[channel]\ngood = fixed(1000s)\nbad = fixed(1s)\n"
			   "[down]\nmtu = 576B\nbandwidth = 64kbit\ndelay = 0s\nsend_buffer = 9600B\n"
			   "[up]\nmtu = 576B\nbandwidth = 64kbit\ndelay = 0s\nsend_buffer = 9600B\n");
	char answer[96];
	control(&e, "reboot", answer, sizeof(answer));
	assert_string_equal(answer, "error unknown command (expected start, stop or state)");
	struct stat st;
	assert_int_equal(stat(e.control_path, &st), 0);
	assert_true(S_ISSOCK(st.st_mode));
	assert_int_equal(st.st_mode & 0777, 0600);
	bool as_root = geteuid() == 0;
	if (as_root) {
		assert_int_equal(chmod(e.control_path, 0666), 0);
		fflush(NULL);
		pid_t child = fork();
		assert_true(child >= 0);
		if (child == 0) {
			/* No cmocka asserts in the child: plain calls, the verdict as exit code. */
			if (setgid(65534) != 0 || setuid(65534) != 0)
				_exit(3);
			struct sockaddr_un a = { .sun_family = AF_UNIX };
			strcpy(a.sun_path, e.control_path);
			int fd = socket(AF_UNIX, SOCK_STREAM, 0);
			if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a)) != 0)
				_exit(4);
			char refused[96] = "";
			/* The emulator may answer and close before the command is sent: no SIGPIPE. */
			ssize_t sent = send(fd, "stop\n", 5, MSG_NOSIGNAL);
			(void)sent;
			if (recv(fd, refused, sizeof(refused) - 1, 0) <= 0)
				_exit(5);
			_exit(strcmp(refused, "error not allowed\n") == 0 ? 0 : 6);
		}
		int status;
		assert_int_equal(waitpid(child, &status, 0), child);
		assert_true(WIFEXITED(status));
		assert_int_equal(WEXITSTATUS(status), 0);
	}
	control(&e, "stop", answer, sizeof(answer));
	assert_string_equal(answer, "stopped");
	assert_int_equal(wait_exit(&e), SQ_EXIT_OK);
	char *log = read_log(&e);
	char counts[96];
	snprintf(counts, sizeof(counts), "\n# control start 0 stop 1 refused %d bad_command 1\n", as_root ? 1 : 0);
	assert_non_null(strstr(log, counts));
	free(log);
}

/* Without a control socket only autostart = peers could start the run: refused at start-up. */
static void test_no_way_to_start_is_refused(void **state)
{
	(void)state;
	static const char text[] = "listen = 127.0.0.1:0\ntoken = 0123456789abcdef\nlog = /dev/null\nseed = 1\n"
		"[channel]\ngood = fixed(1000s)\nbad = fixed(1s)\n"
		"[down]\nmtu = 576B\nbandwidth = 64kbit\ndelay = 0s\nsend_buffer = 9600B\n"
		"[up]\nmtu = 576B\nbandwidth = 64kbit\ndelay = 0s\nsend_buffer = 9600B\n";
	struct sq_emu_config *cfg = malloc(sizeof(*cfg));
	sq_config_init(cfg);
	char err[256];
	assert_true(sq_config_parse(cfg, "c.conf", text, strlen(text), err, sizeof(err)));
	fflush(NULL);
	pid_t child = fork();
	assert_true(child >= 0);
	if (child == 0)
		_exit(sq_event_loop_run(cfg));
	int status;
	assert_int_equal(waitpid(child, &status, 0), child);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), SQ_EXIT_RUNTIME);
	free(cfg);
}

static uint16_t ipv4_checksum(const uint8_t *h)
{
	uint32_t sum = 0;
	for (int i = 0; i < 20; i += 2)
		sum += (uint32_t)(h[i] << 8 | h[i + 1]);
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

static size_t count(const char *haystack, const char *needle)
{
	size_t n = 0;
	for (const char *p = strstr(haystack, needle); p; p = strstr(p + 1, needle))
		n++;
	return n;
}

/* The router stage's ECN marks reach the mobile NPA as CE with a valid checksum. */
static void test_router_marks_ce(void **state)
{
	(void)state;
	struct emu e;
	start_emulator(&e, "autostart = peers\n"
			   "[channel]\ngood = fixed(1000s)\nbad = fixed(1s)\n"
			   "[down]\nmtu = 1500B\nbandwidth = 64kbit\ndelay = 10ms\nsend_buffer = 1500B\n"
			   "[down.router]\ndefault = BE\n"
			   "[down.router.class.BE]\ndiscipline = red\nlimit = 30000B\nred.min = 1000B\n"
			   "red.max = 4000B\nred.avpkt = 500B\nred.max_p = 1\nred.w_q = 0.5\nred.ecn = true\n"
			   "[up]\nmtu = 1500B\nbandwidth = 64kbit\ndelay = 10ms\nsend_buffer = 1500B\n");
	int router = udp_socket(), mobile = udp_socket(), stranger = udp_socket();
	register_npa(router, &e, SQ_ROLE_ROUTER);
	register_npa(mobile, &e, SQ_ROLE_MOBILE);
	uint8_t pkt[600], got[600];
	for (uint16_t i = 0; i < 20; i++) {
		size_t len = tp_ipv4(pkt, 17, 0x02, tp_udp(pkt + 20, 472));   /* ECT(0) */
		tp_put16(pkt + 4, i);
		tp_put16(pkt + 10, ipv4_checksum(pkt));
		send_msg(router, &e, SQ_MSG_DATA, SQ_ROLE_ROUTER, TOKEN, pkt, (uint16_t)len);
	}
	size_t marked = 0;
	for (int i = 0; i < 20; i++) {
		assert_int_equal(receive(mobile, SQ_MSG_DATA, got, sizeof(got)), 500);
		assert_int_equal(ipv4_checksum(got), 0);
		marked += (got[1] & 3) == 3;
	}
	char answer[64];
	control(&e, "stop", answer, sizeof(answer));
	assert_string_equal(answer, "stopped");
	assert_int_equal(wait_exit(&e), SQ_EXIT_OK);
	char *log = read_log(&e);
	assert_true(marked > 0);
	assert_int_equal(count(log, "\tecn_mark\tdown\t"), marked);
	assert_non_null(strstr(log, "# config down.router.class.BE.red.ecn = true\n"));
	char line[128];
	snprintf(line, sizeof(line), "\n# router down BE arrivals 20 enqueued 20 drops 0 tail_drops 0 red_drops 0 dequeue_drops 0 marks %zu ",
		 marked);
	assert_non_null(strstr(log, line));
	free(log);
	close(router);
	close(mobile);
	close(stranger);
}

/* --- UDP GSO in, UDP GRO out ------------------------------------------------------- */

static const char *const UNLIMITED_LINK =
	"autostart = peers\n"
	"[channel]\ngood = fixed(1000s)\nbad = fixed(1s)\n"
	"[down]\nmtu = 1500B\nbandwidth = unlimited\ndelay = 50ms\nsend_buffer = 100000B\n"
	"[up]\nmtu = 1500B\nbandwidth = unlimited\ndelay = 50ms\nsend_buffer = 100000B\n";

#define GSO_PACKETS 5
#define GSO_IP_LEN 200
#define GSO_SEGMENT (SQ_WIRE_HEADER_LEN + GSO_IP_LEN)

/* One UDP GSO send of GSO_PACKETS DATA messages (ip ids 20, 21, ...), as the
 * NPA sends a batch of equal-size packets; false if the kernel refuses GSO. */
static bool send_gso_batch(int fd, const struct emu *e, uint8_t segments[GSO_PACKETS][GSO_SEGMENT])
{
	struct iovec iov[GSO_PACKETS];
	for (int i = 0; i < GSO_PACKETS; i++) {
		struct sq_wire_header h = { .version = SQ_WIRE_VERSION, .type = SQ_MSG_DATA, .role = SQ_ROLE_ROUTER,
					    .token = TOKEN, .seq = (uint32_t)i, .length = GSO_IP_LEN };
		sq_wire_encode(segments[i], &h);
		udp_packet(segments[i] + SQ_WIRE_HEADER_LEN, (uint16_t)(20 + i), GSO_IP_LEN);
		iov[i] = (struct iovec){ .iov_base = segments[i], .iov_len = GSO_SEGMENT };
	}
	union { char buf[CMSG_SPACE(sizeof(uint16_t))]; struct cmsghdr align; } control;
	struct msghdr m = { .msg_name = (void *)&e->addr, .msg_namelen = sizeof(e->addr), .msg_iov = iov,
			    .msg_iovlen = GSO_PACKETS, .msg_control = control.buf, .msg_controllen = sizeof(control.buf) };
	struct cmsghdr *c = CMSG_FIRSTHDR(&m);
	c->cmsg_level = SOL_UDP;
	c->cmsg_type = UDP_SEGMENT;
	c->cmsg_len = CMSG_LEN(sizeof(uint16_t));
	uint16_t size = GSO_SEGMENT;
	memcpy(CMSG_DATA(c), &size, sizeof(size));
	return sendmsg(fd, &m, 0) == GSO_PACKETS * GSO_SEGMENT;
}

/* Receives one message; returns its length and the GRO segment size (0: none). */
static size_t receive_gro(int fd, uint8_t *buf, size_t cap, int *segment)
{
	struct iovec iov = { .iov_base = buf, .iov_len = cap };
	union { char buf[CMSG_SPACE(sizeof(int))]; struct cmsghdr align; } control;
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = control.buf,
			    .msg_controllen = sizeof(control.buf) };
	ssize_t n = recvmsg(fd, &m, 0);
	assert_true(n > 0);
	*segment = 0;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c))
		if (c->cmsg_level == SOL_UDP && c->cmsg_type == UDP_GRO)
			memcpy(segment, CMSG_DATA(c), sizeof(*segment));
	return (size_t)n;
}

static void test_gso_batch_in_and_out(void **state)
{
	(void)state;
	struct emu e;
	start_emulator(&e, UNLIMITED_LINK);
	int router = udp_socket(), mobile = udp_socket(), stranger = udp_socket();
	int on = 1;
	if (setsockopt(mobile, SOL_UDP, UDP_GRO, &on, sizeof(on)) != 0)
		skip();   /* a kernel without UDP GRO (before 5.0) */
	register_npa(router, &e, SQ_ROLE_ROUTER);
	register_npa(mobile, &e, SQ_ROLE_MOBILE);
	static uint8_t sent[GSO_PACKETS][GSO_SEGMENT];
	if (!send_gso_batch(router, &e, sent))
		skip();   /* a kernel without UDP GSO (before 4.18) */
	/* Arrived together, due together: they leave as one GSO send that the
	 * mobile side, with UDP_GRO, receives as one message of five datagrams. */
	static uint8_t got[SQ_WIRE_MAX_DATAGRAM];
	int segment;
	size_t n;
	do
		n = receive_gro(mobile, got, sizeof(got), &segment);
	while (n == SQ_WIRE_HEADER_LEN);   /* a keepalive */
	assert_int_equal(n, GSO_PACKETS * GSO_SEGMENT);
	assert_int_equal(segment, GSO_SEGMENT);
	for (int i = 0; i < GSO_PACKETS; i++) {
		struct sq_wire_header h;
		assert_int_equal(sq_wire_decode(got + i * GSO_SEGMENT, GSO_SEGMENT, &h), SQ_WIRE_OK);
		assert_int_equal(h.type, SQ_MSG_DATA);
		assert_memory_equal(got + i * GSO_SEGMENT + SQ_WIRE_HEADER_LEN, sent[i] + SQ_WIRE_HEADER_LEN, GSO_IP_LEN);
	}
	char answer[64];
	control(&e, "stop", answer, sizeof(answer));
	assert_string_equal(answer, "stopped");
	assert_int_equal(wait_exit(&e), SQ_EXIT_OK);
	char *log = read_log(&e);
	for (unsigned id = 1; id <= GSO_PACKETS; id++) {
		assert_int_equal(event_time(log, "in", id), event_time(log, "in", 1));
		assert_int_equal(event_time(log, "out", id) - event_time(log, "in", id), 50000);
	}
	assert_non_null(strstr(log, "\n# lateness_us n 5 "));
	assert_non_null(strstr(log, " undeliverable down 0 up 0 send_errors 0\n"));
	free(log);
	close(router);
	close(mobile);
	close(stranger);
}

/* --- the shared clock: arrival at the NPA's TUN read time ------------------------------- */

static int64_t mono_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* HELLO with the clock offer until WELCOME; returns the WELCOME's flags. */
static uint8_t register_host_with_offer(int fd, const struct emu *e, uint8_t role, uint16_t host,
					const char *boot_id)
{
	struct timeval quick = { .tv_usec = 100000 }, normal = { .tv_sec = 3 };
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &quick, sizeof(quick));
	uint8_t buf[SQ_WIRE_MAX_DATAGRAM], offer[SQ_WIRE_CLOCK_OFFER_LEN];
	for (int attempt = 0; attempt < 50; attempt++) {
		sq_wire_clock_offer_encode(offer, mono_now_ns(), boot_id);
		send_hosted(fd, e, SQ_MSG_HELLO, role, host, SQ_WIRE_FLAG_CLOCK, TOKEN, offer, sizeof(offer));
		ssize_t n = recv(fd, buf, sizeof(buf), 0);
		struct sq_wire_header h;
		if (n > 0 && sq_wire_decode(buf, (size_t)n, &h) == SQ_WIRE_OK && h.type == SQ_MSG_WELCOME) {
			setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &normal, sizeof(normal));
			return h.flags;
		}
	}
	fail_msg("the emulator never answered HELLO");
	return 0;
}

static uint8_t register_with_offer(int fd, const struct emu *e, uint8_t role, const char *boot_id)
{
	return register_host_with_offer(fd, e, role, 0, boot_id);
}

/* DATA with the stamp in front of the packet (ip id); to 198.19.0.dst when dst is not 0. */
static void send_stamped_to(int fd, const struct emu *e, uint8_t role, int64_t stamp_ns, uint16_t ip_id,
			    uint8_t dst)
{
	uint8_t payload[SQ_WIRE_STAMP_LEN + 100];
	sq_wire_put_time(payload, stamp_ns);
	size_t n = dst ? addressed_packet(payload + SQ_WIRE_STAMP_LEN, ip_id, 100, 9, dst)
		       : udp_packet(payload + SQ_WIRE_STAMP_LEN, ip_id, 100);
	send_flagged(fd, e, SQ_MSG_DATA, role, SQ_WIRE_FLAG_CLOCK, TOKEN, payload,
		     (uint16_t)(SQ_WIRE_STAMP_LEN + n));
}

static void send_stamped(int fd, const struct emu *e, uint8_t role, int64_t stamp_ns, uint16_t ip_id)
{
	send_stamped_to(fd, e, role, stamp_ns, ip_id, 0);
}

static void test_shared_clock_arrival(void **state)
{
	(void)state;
	char boot_id[SQ_WIRE_BOOT_ID_LEN + 1] = "";
	FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");
	if (f == NULL || fread(boot_id, 1, SQ_WIRE_BOOT_ID_LEN, f) != SQ_WIRE_BOOT_ID_LEN)
		skip();   /* no boot id: the emulator offers no shared clock either */
	fclose(f);
	struct emu e;
	start_emulator(&e, UNLIMITED_LINK);
	int router = udp_socket(), mobile = udp_socket();
	uint8_t pkt[200];
	/* Another kernel's boot id: no agreement (the lab's NPAs on other machines). */
	char other[SQ_WIRE_BOOT_ID_LEN + 1];
	memcpy(other, boot_id, sizeof(other));
	other[0] = other[0] == '0' ? '1' : '0';
	assert_int_equal(register_with_offer(router, &e, SQ_ROLE_ROUTER, other), 0);
	/* This kernel's: the WELCOME agrees. The mobile NPA offers nothing. */
	assert_int_equal(register_with_offer(router, &e, SQ_ROLE_ROUTER, boot_id), SQ_WIRE_FLAG_CLOCK);
	assert_int_equal(register_npa(mobile, &e, SQ_ROLE_MOBILE), 1500);
	usleep(50 * 1000);                            /* the run started when both registered */
	/* 1: read from the TUN 20 ms ago; 2: no stamp, arrives now */
	send_stamped(router, &e, SQ_ROLE_ROUTER, mono_now_ns() - 20 * 1000 * 1000, 1);
	send_msg(router, &e, SQ_MSG_DATA, SQ_ROLE_ROUTER, TOKEN, pkt, (uint16_t)udp_packet(pkt, 2, 100));
	usleep(20 * 1000);
	/* 3: a stamp from the future (not one clock): the receive time, 20 ms after 2's */
	send_stamped(router, &e, SQ_ROLE_ROUTER, mono_now_ns() + 1000LL * 1000 * 1000, 3);
	usleep(5 * 1000);
	/* 4: a stamp before what the model has already seen: raised to it */
	send_stamped(router, &e, SQ_ROLE_ROUTER, mono_now_ns() - 30 * 1000 * 1000, 4);
	/* the mobile NPA did not agree: its stamped DATA is refused */
	send_stamped(mobile, &e, SQ_ROLE_MOBILE, mono_now_ns(), 5);
	usleep(100 * 1000);                           /* all out after 50 ms */
	char answer[64];
	control(&e, "stop", answer, sizeof(answer));
	assert_string_equal(answer, "stopped");
	assert_int_equal(wait_exit(&e), SQ_EXIT_OK);
	char *log = read_log(&e);
	long long in1 = event_time(log, "in", 1), in2 = event_time(log, "in", 2);
	long long in3 = event_time(log, "in", 3), in4 = event_time(log, "in", 4);
	assert_true(in1 >= 0);
	if (in2 - in1 < 19000 || in2 - in1 > 30000)
		fail_msg("the stamped packet entered %lld us before the unstamped one, expected about 20 000", in2 - in1);
	/* its receive time, not a second later nor the model's time (in2): a loaded machine may
	 * receive 2 late, so only half the 20 ms is asked for */
	assert_true(in3 >= in2 + 10000 && in3 < in2 + 500000);
	assert_int_equal(in4, in3);                   /* nothing in between moved the model */
	for (unsigned id = 1; id <= 4; id++)
		assert_int_equal(event_time(log, "out", id) - event_time(log, "in", id), 50000);
	assert_int_equal(event_time(log, "in", 5), -1);
	assert_non_null(strstr(log, "\n# arrival received 1 stamped 1 raised 1 lowered 1\n"));
	assert_non_null(strstr(log, " bad_payload 1 "));
	free(log);
	close(router);
	close(mobile);
}

/* --- release at the NPA: decided packets sent ahead with their release time -------------- */

static bool read_boot_id(char boot_id[SQ_WIRE_BOOT_ID_LEN + 1])
{
	memset(boot_id, 0, SQ_WIRE_BOOT_ID_LEN + 1);
	FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");
	if (f == NULL)
		return false;
	bool ok = fread(boot_id, 1, SQ_WIRE_BOOT_ID_LEN, f) == SQ_WIRE_BOOT_ID_LEN;
	fclose(f);
	return ok;
}

/* The next DATA: its flags, when it was received, and its payload. */
static size_t receive_data(int fd, uint8_t *flags, int64_t *at_ns, uint8_t *payload, size_t cap)
{
	uint8_t buf[SQ_WIRE_MAX_DATAGRAM];
	for (;;) {
		ssize_t n = recv(fd, buf, sizeof(buf), 0);
		*at_ns = mono_now_ns();
		if (n < 0)
			fail_msg("no DATA from the emulator");
		struct sq_wire_header h;
		assert_int_equal(sq_wire_decode(buf, (size_t)n, &h), SQ_WIRE_OK);
		if (h.type != SQ_MSG_DATA)
			continue;
		*flags = h.flags;
		assert_true(h.length <= cap);
		memcpy(payload, buf + SQ_WIRE_HEADER_LEN, h.length);
		return h.length;
	}
}

/* STOP, a clean exit, and the whole log. */
static char *stop_and_read_log(struct emu *e)
{
	char answer[64];
	control(e, "stop", answer, sizeof(answer));
	assert_string_equal(answer, "stopped");
	assert_int_equal(wait_exit(e), SQ_EXIT_OK);
	return read_log(e);
}

static const char *const AHEAD_LINK =
	"release_ahead = 10ms\n"
	"autostart = peers\n"
	"[channel]\ngood = fixed(1000s)\nbad = fixed(1s)\n"
	"[down]\nmtu = 1500B\nbandwidth = unlimited\ndelay = 50ms\nsend_buffer = 100000B\n"
	"[up]\nmtu = 1500B\nbandwidth = unlimited\ndelay = 50ms\nsend_buffer = 100000B\n";

#define AHEAD_PACKETS 3

/* The router sends packet `id` (to 198.19.0.dst; the default addresses if 0) stamped with
 * its read time S; the mobile NPA `mobile` gets it ahead, flagged with its release time
 * S + 50 ms (the link's delay, to the us below), at most release_ahead (10 ms) before it. */
static void expect_sent_ahead(int router, const struct emu *e, int mobile, uint16_t id, uint8_t dst)
{
	int64_t read_ns = mono_now_ns();
	send_stamped_to(router, e, SQ_ROLE_ROUTER, read_ns, id, dst);
	uint8_t flags, got[SQ_WIRE_STAMP_LEN + 200];
	int64_t at_ns;
	size_t n = receive_data(mobile, &flags, &at_ns, got, sizeof(got));
	assert_int_equal(flags, SQ_WIRE_FLAG_CLOCK);
	assert_int_equal(n, SQ_WIRE_STAMP_LEN + 100);
	assert_int_equal(got[SQ_WIRE_STAMP_LEN + 4] << 8 | got[SQ_WIRE_STAMP_LEN + 5], id);
	int64_t release = sq_wire_get_time(got);
	int64_t due = read_ns + 50 * 1000 * 1000;
	if (release > due || release <= due - 1000)
		fail_msg("packet %u: release %lld ns, expected %lld ns (to the us below)", id,
			 (long long)release, (long long)due);
	if (at_ns >= release || release - at_ns > 10 * 1000 * 1000)
		fail_msg("packet %u received %lld ns before its release, expected (0, 10 ms]", id,
			 (long long)(release - at_ns));
	usleep(60 * 1000);                    /* its out has passed */
}

/* Both NPAs on this clock: the router's stamped packets (read at S) go out 50 ms later, so
 * their release time is S + 50 ms (to the µs of the model); each reaches the mobile NPA
 * before it, at most release_ahead before it, and the log is as without the option. */
static void test_release_ahead(void **state)
{
	(void)state;
	char boot_id[SQ_WIRE_BOOT_ID_LEN + 1];
	if (!read_boot_id(boot_id))
		skip();   /* no boot id: the emulator offers no shared clock either */
	struct emu e;
	start_emulator(&e, AHEAD_LINK);
	int router = udp_socket(), mobile = udp_socket();
	assert_int_equal(register_with_offer(router, &e, SQ_ROLE_ROUTER, boot_id), SQ_WIRE_FLAG_CLOCK);
	assert_int_equal(register_with_offer(mobile, &e, SQ_ROLE_MOBILE, boot_id), SQ_WIRE_FLAG_CLOCK);
	usleep(50 * 1000);                            /* the run started when both registered */
	for (uint16_t id = 1; id <= AHEAD_PACKETS; id++)
		expect_sent_ahead(router, &e, mobile, id, 0);
	usleep(200 * 1000);                           /* even on a busy machine */
	char *log = stop_and_read_log(&e);
	for (unsigned id = 1; id <= AHEAD_PACKETS; id++)
		assert_int_equal(event_time(log, "out", id) - event_time(log, "in", id), 50000);
	assert_int_equal(count(log, "\tout\t"), AHEAD_PACKETS);
	assert_non_null(strstr(log, "\n# sent_ahead down 3 up 0\n"));
	assert_non_null(strstr(log, "\n# lateness_us n 0 "));   /* the emulator sent none at its out */
	free(log);
	close(router);
	close(mobile);
}

/* In a cell, each host's mobile NPA on this clock gets its own host's decided packets ahead
 * with their release times (the down direction of every host). */
static void test_release_ahead_in_a_cell(void **state)
{
	(void)state;
	char boot_id[SQ_WIRE_BOOT_ID_LEN + 1];
	if (!read_boot_id(boot_id))
		skip();   /* no boot id: the emulator offers no shared clock either */
	struct emu e;
	char link[1024];
	snprintf(link, sizeof link, "%s[cell]\nhosts = 2\naddresses = 198.19.0.2, 198.19.0.3\n", AHEAD_LINK);
	start_emulator(&e, link);
	int router = udp_socket(), mobile1 = udp_socket(), mobile2 = udp_socket();
	assert_int_equal(register_with_offer(router, &e, SQ_ROLE_ROUTER, boot_id), SQ_WIRE_FLAG_CLOCK);
	assert_int_equal(register_host_with_offer(mobile1, &e, SQ_ROLE_MOBILE, 1, boot_id), SQ_WIRE_FLAG_CLOCK);
	assert_int_equal(register_host_with_offer(mobile2, &e, SQ_ROLE_MOBILE, 2, boot_id), SQ_WIRE_FLAG_CLOCK);
	usleep(50 * 1000);                            /* the run started when all three registered */
	expect_sent_ahead(router, &e, mobile2, 1, 3);   /* to host 2's address */
	expect_sent_ahead(router, &e, mobile1, 2, 2);   /* to host 1's */
	usleep(200 * 1000);
	char *log = stop_and_read_log(&e);
	assert_non_null(strstr(log, "\n# sent_ahead down 2 up 0\n"));
	free(log);
	close(router);
	close(mobile1);
	close(mobile2);
}

/* An NPA that does not share the clock gets each packet at its out, without a release time. */
static void test_no_release_ahead_without_the_shared_clock(void **state)
{
	(void)state;
	struct emu e;
	start_emulator(&e, AHEAD_LINK);
	int router = udp_socket(), mobile = udp_socket();
	assert_int_equal(register_npa(router, &e, SQ_ROLE_ROUTER), 1500);
	assert_int_equal(register_npa(mobile, &e, SQ_ROLE_MOBILE), 1500);
	usleep(50 * 1000);
	uint8_t pkt[200], got[200], flags;
	int64_t at_ns;
	send_msg(router, &e, SQ_MSG_DATA, SQ_ROLE_ROUTER, TOKEN, pkt, (uint16_t)udp_packet(pkt, 7, 100));
	assert_int_equal(receive_data(mobile, &flags, &at_ns, got, sizeof(got)), 100);
	assert_int_equal(flags, 0);
	char *log = stop_and_read_log(&e);
	assert_non_null(strstr(log, "\n# sent_ahead down 0 up 0\n"));
	assert_non_null(strstr(log, "\n# lateness_us n 1 "));
	assert_non_null(strstr(log, "\n# config release_ahead = 10000us\n"));
	free(log);
	close(router);
	close(mobile);
}

/* The last column (a cell's host) of the `event` line of packet pkt_id; "" if none. */
static void host_of(const char *log, const char *event, unsigned pkt_id, char *out, size_t cap)
{
	out[0] = '\0';
	for (const char *line = log; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
		long long t;
		unsigned id;
		char ev[32], dir[8];
		if (line[0] == '#' || sscanf(line, "%lld\t%31s\t%7s\t%u", &t, ev, dir, &id) != 4 ||
		    strcmp(ev, event) != 0 || id != pkt_id)
			continue;
		const char *end = strchr(line, '\n'), *tab = end;
		while (tab > line && tab[-1] != '\t')
			tab--;
		snprintf(out, cap, "%.*s", (int)(end - tab), tab);
		return;
	}
}

/* A cell of two hosts: each mobile NPA says its host; the run starts when all three NPAs
 * are there; uplink packets go to their sender's host (and teach the emulator its address),
 * downlink packets to the host of their destination (host 2's given in the configuration
 * reaches it before it has sent anything), each over its own link (host 2's down delay 50 ms,
 * host 1's 200 ms), to its own NPA; the log names the host of every event. */
static void test_cell_of_two_hosts(void **state)
{
	(void)state;
	struct emu e;
	char link[1024];
	snprintf(link, sizeof link, "%s[cell]\nhosts = 2\naddresses = 198.19.0.12, 198.19.0.13\n"
		 "[host.2.down]\ndelay = 50ms\nmtu = 1000B\n", LINK);
	start_emulator(&e, link);
	int router = udp_socket(), mobile1 = udp_socket(), mobile2 = udp_socket(), stranger = udp_socket();
	uint8_t pkt[1500], got[1500];
	assert_int_equal(register_npa(router, &e, SQ_ROLE_ROUTER), 1500);
	assert_int_equal(register_host(mobile2, &e, SQ_ROLE_MOBILE, 2), 1000);   /* its own down MTU */
	send_hosted(stranger, &e, SQ_MSG_HELLO, SQ_ROLE_MOBILE, 3, 0, TOKEN, NULL, 0);   /* no host 3 */
	assert_int_equal(register_host(mobile1, &e, SQ_ROLE_MOBILE, 1), 576);
	usleep(50 * 1000);
	/* Down to host 2's configured address before it has sent anything: its NPA gets it. */
	size_t first = addressed_packet(pkt, 5, 100, 9, 13);
	send_msg(router, &e, SQ_MSG_DATA, SQ_ROLE_ROUTER, TOKEN, pkt, (uint16_t)first);
	assert_int_equal(receive(mobile2, SQ_MSG_DATA, got, sizeof(got)), first);
	assert_memory_equal(got, pkt, first);
	/* Up from each host, to the router: 198.19.0.2 is host 1's address now, .3 host 2's. */
	send_msg(mobile1, &e, SQ_MSG_DATA, SQ_ROLE_MOBILE, TOKEN, pkt, (uint16_t)addressed_packet(pkt, 1, 100, 2, 9));
	assert_int_equal(receive(router, SQ_MSG_DATA, got, sizeof(got)), 100);
	send_hosted(mobile2, &e, SQ_MSG_DATA, SQ_ROLE_MOBILE, 2, 0, TOKEN, pkt,
		    (uint16_t)addressed_packet(pkt, 2, 100, 3, 9));
	assert_int_equal(receive(router, SQ_MSG_DATA, got, sizeof(got)), 100);
	/* Down to each address: it reaches that host's NPA. */
	size_t len = addressed_packet(pkt, 3, 100, 9, 3);
	send_msg(router, &e, SQ_MSG_DATA, SQ_ROLE_ROUTER, TOKEN, pkt, (uint16_t)len);
	assert_int_equal(receive(mobile2, SQ_MSG_DATA, got, sizeof(got)), len);
	assert_memory_equal(got, pkt, len);
	len = addressed_packet(pkt, 4, 100, 9, 2);
	send_msg(router, &e, SQ_MSG_DATA, SQ_ROLE_ROUTER, TOKEN, pkt, (uint16_t)len);
	assert_int_equal(receive(mobile1, SQ_MSG_DATA, got, sizeof(got)), len);
	assert_memory_equal(got, pkt, len);
	char *log = stop_and_read_log(&e);
	assert_non_null(strstr(log, " payload_len note host\n"));
	assert_non_null(strstr(log, "\tmobile2 up 127.0.0.1:"));
	assert_non_null(strstr(log, "\tmobile up 127.0.0.1:"));
	assert_non_null(strstr(log, " unexpected_role 1 "));
	assert_non_null(strstr(log, "\n# config cell.hosts = 2\n"));
	assert_non_null(strstr(log, "\n# counters down in 3 "));      /* all hosts */
	assert_non_null(strstr(log, "\n# host_counters 1 down in 1 "));
	assert_non_null(strstr(log, "\n# host_counters 2 down in 2 "));
	assert_non_null(strstr(log, "\n# host_counters 1 up in 1 "));
	assert_non_null(strstr(log, "\n# host_counters 2 up in 1 "));
	/* 100 B: 25 ms up at 32 kbit/s + 100 ms; down 12.5 ms + host 2's 50 ms, host 1's 200 ms
	 * (packet ids count from the first down packet) */
	static const struct { unsigned id; const char *host; long long delay; } want[] = {
		{ 1, "2", 62500 }, { 2, "1", 125000 }, { 3, "2", 125000 }, { 4, "2", 62500 }, { 5, "1", 212500 },
	};
	for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
		char in_host[8], out_host[8];
		host_of(log, "in", want[i].id, in_host, sizeof in_host);
		host_of(log, "out", want[i].id, out_host, sizeof out_host);
		assert_string_equal(in_host, want[i].host);
		assert_string_equal(out_host, want[i].host);
		assert_int_equal(event_time(log, "out", want[i].id) - event_time(log, "in", want[i].id), want[i].delay);
	}
	const char *peer_line = strstr(log, "\tmobile2 up ");
	assert_non_null(peer_line);
	assert_memory_equal(strchr(peer_line, '\n') - 2, "\t-", 2);   /* a peer line has no host */
	free(log);
	close(router);
	close(mobile1);
	close(mobile2);
	close(stranger);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_cell_of_two_hosts, kill_leftover),
		cmocka_unit_test_teardown(test_release_ahead_in_a_cell, kill_leftover),
		cmocka_unit_test_teardown(test_registration_delivery_and_stop, kill_leftover),
		cmocka_unit_test_teardown(test_start_command_and_lost_peer, kill_leftover),
		cmocka_unit_test_teardown(test_sigterm_before_start, kill_leftover),
		cmocka_unit_test_teardown(test_control_socket_refuses_others_and_bad_commands, kill_leftover),
		cmocka_unit_test(test_no_way_to_start_is_refused),
		cmocka_unit_test_teardown(test_router_marks_ce, kill_leftover),
		cmocka_unit_test_teardown(test_gso_batch_in_and_out, kill_leftover),
		cmocka_unit_test_teardown(test_shared_clock_arrival, kill_leftover),
		cmocka_unit_test_teardown(test_release_ahead, kill_leftover),
		cmocka_unit_test_teardown(test_no_release_ahead_without_the_shared_clock, kill_leftover),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
