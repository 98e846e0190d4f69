/* squall-hostbpf: attaches a host profile's sock_ops program (host_2004.bpf.c) for the TCP
 * sockets of the network namespace it is started in, and keeps it attached until signalled.
 *
 *   squall-hostbpf OBJECT [syn_rto_ms=N] [delack_max_ms=N]
 *
 * Prints `attached pid=P program=I netns_cookie=C` once the program is attached and exits 0;
 * its child P holds the attachment (a bpf_link on the cgroup v2 root) and drops it when it
 * receives SIGTERM, SIGINT or SIGHUP or is killed: the attachment never outlives the process,
 * so a lane's teardown (which kills every process of its namespaces) removes it too. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "host_config.h"
#include "squall_version.h"

#ifndef SO_NETNS_COOKIE
#define SO_NETNS_COOKIE 71
#endif
#define PROGRAM_NAME "host_2004"
#define MAX_MS 60000u

/* The failure goes to the parent through the pipe: its stderr is the caller's. */
static int fail(int report, const char *format, ...)
{
	char text[512];
	va_list args;

	va_start(args, format);
	vsnprintf(text, sizeof(text), format, args);
	va_end(args);
	dprintf(report, "squall-hostbpf: %s\n", text);
	return 1;
}

static int parse_setting(const char *arg, struct host_config *config)
{
	static const struct { const char *key; size_t offset; } keys[] = {
		{"syn_rto_ms=", offsetof(struct host_config, syn_rto_ms)},
		{"delack_max_ms=", offsetof(struct host_config, delack_max_ms)},
	};
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		size_t n = strlen(keys[i].key);
		if (strncmp(arg, keys[i].key, n) != 0)
			continue;
		char *end;
		errno = 0;
		unsigned long value = strtoul(arg + n, &end, 10);
		if (errno || end == arg + n || *end || value > MAX_MS)
			return -1;
		*(__u32 *)((char *)config + keys[i].offset) = (__u32)value;
		return 0;
	}
	return -1;
}

static int netns_cookie(__u64 *cookie)
{
	socklen_t len = sizeof(*cookie);
	int fd = socket(AF_INET, SOCK_DGRAM, 0);
	int rc = fd < 0 ? -1 : getsockopt(fd, SOL_SOCKET, SO_NETNS_COOKIE, cookie, &len);

	if (fd >= 0)
		close(fd);
	return rc;
}

/* A directory fd of the first cgroup v2 mount in /proc/self/mounts, or -1 (none, or no access). */
static int mounted_cgroup2(void)
{
	char line[1024], mount_point[512], type[64];
	FILE *mounts = fopen("/proc/self/mounts", "r");
	int fd = -1;

	if (!mounts)
		return -1;
	while (fd < 0 && fgets(line, sizeof(line), mounts)) {
		if (sscanf(line, "%*s %511s %63s", mount_point, type) == 2 && strcmp(type, "cgroup2") == 0)
			fd = open(mount_point, O_RDONLY | O_DIRECTORY);
	}
	fclose(mounts);
	return fd;
}

/* The cgroup v2 root (a directory fd), or -1. `ip netns exec` runs us in a private mount
 * namespace with a fresh /sys, so the machine's cgroup2 mount is hidden: then one is mounted
 * on a temporary directory of that private namespace just long enough to open it. */
static int cgroup_root(void)
{
	char dir[] = "/tmp/squall-hostbpf-XXXXXX";
	int fd = mounted_cgroup2();

	if (fd >= 0 || !mkdtemp(dir))
		return fd;
	if (mount("cgroup2", dir, "cgroup2", 0, NULL) == 0) {
		fd = open(dir, O_RDONLY | O_DIRECTORY);
		umount2(dir, MNT_DETACH);
	}
	rmdir(dir);
	return fd;
}

/* Writes config into the object's .rodata (its only read-only global). */
static int set_config(struct bpf_object *object, const struct host_config *config)
{
	struct bpf_map *map;

	bpf_object__for_each_map(map, object) {
		const char *name = bpf_map__name(map);
		size_t size = 0, n = strlen(name);
		if (!bpf_map__is_internal(map) || n < 7 || strcmp(name + n - 7, ".rodata") != 0)
			continue;
		if (!bpf_map__initial_value(map, &size) || size != sizeof(*config))
			return -1;
		return bpf_map__set_initial_value(map, config, sizeof(*config));
	}
	return -1;
}

static void wait_for_signal(void)
{
	sigset_t stop;
	int sig;

	sigemptyset(&stop);
	sigaddset(&stop, SIGTERM);
	sigaddset(&stop, SIGINT);
	sigaddset(&stop, SIGHUP);
	sigprocmask(SIG_BLOCK, &stop, NULL);
	sigwait(&stop, &sig);
}

/* The child: attaches, reports on `report`, holds the attachment until signalled. */
static int hold(const char *path, struct host_config config, int report)
{
	struct bpf_object *object;
	struct bpf_program *program;
	struct bpf_link *link;
	struct bpf_prog_info info = {0};
	__u32 info_len = sizeof(info);
	int root, null;

	if (netns_cookie(&config.netns_cookie) != 0)
		return fail(report, "cannot read this network namespace's cookie: %s", strerror(errno));
	root = cgroup_root();
	if (root < 0)
		return fail(report, "no cgroup v2 hierarchy mounted, and none could be mounted: %s", strerror(errno));
	object = bpf_object__open_file(path, NULL);
	if (!object)
		return fail(report, "%s: cannot open the BPF object: %s", path, strerror(errno));
	if (set_config(object, &config) != 0)
		return fail(report, "%s: no .rodata of %zu bytes (struct host_config)", path, sizeof(config));
	if (bpf_object__load(object) != 0)
		return fail(report, "%s: the kernel refused the program (see the libbpf messages above): %s",
			    path, strerror(errno));
	program = bpf_object__find_program_by_name(object, PROGRAM_NAME);
	if (!program)
		return fail(report, "%s: no program named %s", path, PROGRAM_NAME);
	link = bpf_program__attach_cgroup(program, root);
	if (!link)
		return fail(report, "cannot attach %s to the cgroup v2 root: %s", PROGRAM_NAME, strerror(errno));
	bpf_obj_get_info_by_fd(bpf_program__fd(program), &info, &info_len);
	null = open("/dev/null", O_RDWR);
	dup2(null, 0), dup2(null, 1), dup2(null, 2);
	dprintf(report, "attached pid=%d program=%u netns_cookie=%llu\n", (int)getpid(), info.id,
		(unsigned long long)config.netns_cookie);
	close(report);
	wait_for_signal();
	bpf_link__destroy(link);
	return 0;
}

int main(int argc, char **argv)
{
	struct host_config config = {0};
	char text[1024];
	int report[2];
	ssize_t n, got = 0;

	if (sq_version_asked(argc, argv, "squall-hostbpf"))
		return 0;
	if (argc == 2 && strcmp(argv[1], "--help") == 0) {
		printf("usage: squall-hostbpf OBJECT [syn_rto_ms=N] [delack_max_ms=N] (N <= %u) | --help | --version\n",
		       MAX_MS);
		return 0;
	}
	if (argc < 2) {
		fprintf(stderr, "usage: squall-hostbpf OBJECT [syn_rto_ms=N] [delack_max_ms=N] (N <= %u) | --help | --version\n",
			MAX_MS);
		return 2;
	}
	for (int i = 2; i < argc; i++) {
		if (parse_setting(argv[i], &config) != 0) {
			fprintf(stderr, "squall-hostbpf: %s: expected syn_rto_ms=N or delack_max_ms=N, "
				"N milliseconds from 0 to %u\n", argv[i], MAX_MS);
			return 2;
		}
	}
	if (pipe(report) != 0)
		return perror("squall-hostbpf: pipe"), 1;
	pid_t child = fork();
	if (child < 0)
		return perror("squall-hostbpf: fork"), 1;
	if (child == 0) {
		close(report[0]);
		setsid();
		return hold(argv[1], config, report[1]);
	}
	close(report[1]);
	while (got < (ssize_t)sizeof(text) - 1 && (n = read(report[0], text + got, sizeof(text) - 1 - got)) > 0)
		got += n;
	text[got] = '\0';
	if (strncmp(text, "attached ", 9) == 0) {
		fputs(text, stdout);
		return 0;
	}
	fputs(got ? text : "squall-hostbpf: the attaching process ended without a word\n", stderr);
	waitpid(child, NULL, 0);
	return 1;
}
