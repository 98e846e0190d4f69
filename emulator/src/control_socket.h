/* Run control on a Unix stream socket (emulator/PROTOCOL.md, "Run control"): START and
 * STOP reach the emulator only through a 0600 socket file on its own host, from a process
 * of its own user or root, never over the network. One command per connection, a line
 * ("start", "stop", "state"); the answer is one line, then the connection is closed. */
#ifndef SQ_CONTROL_SOCKET_H
#define SQ_CONTROL_SOCKET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

enum sq_control_command { SQ_CONTROL_START, SQ_CONTROL_STOP, SQ_CONTROL_STATE };

/* Who sent a command: the peer's credentials when it connected (SO_PEERCRED) and its
 * command name (/proc/PID/comm, "?" when gone). */
struct sq_control_peer {
	pid_t pid;
	uid_t uid;
	char comm[32];
};

struct sq_control_request {
	enum sq_control_command command;
	int conn;                        /* answer it with sq_control_reply */
	struct sq_control_peer peer;
};

/* What the trailer's `# control` line counts. */
struct sq_control_counts {
	uint64_t start, stop;
	uint64_t refused;                /* a peer of another user, or no free connection */
	uint64_t bad_command;            /* anything but "start", "stop" or "state" (not counted) */
};

struct sq_control;

/* Creates the socket at path (mode 0600; the path must not exist). NULL and a message. */
struct sq_control *sq_control_open(const char *path, char *err, size_t errlen);
/* The descriptor to watch for input (an epoll set of its own sockets). */
int sq_control_fd(const struct sq_control *c);
/* Accepts and reads what is ready; true with the next command in req, false when nothing
 * more is ready. Refused peers and bad commands are answered, counted and closed here. */
bool sq_control_next(struct sq_control *c, struct sq_control_request *req);
/* Sends line (ending in \n) on the request's connection and closes it. */
void sq_control_reply(struct sq_control *c, int conn, const char *line);
const struct sq_control_counts *sq_control_counts(const struct sq_control *c);
/* Closes every connection and the socket, and removes the socket file. NULL is fine. */
void sq_control_close(struct sq_control *c);

/* The peer of that pid and uid, its command name read now (also a signal's sender). */
void sq_control_peer_of(pid_t pid, uid_t uid, struct sq_control_peer *p);
/* "pid 4242 (python3, uid 0)" */
void sq_control_peer_text(const struct sq_control_peer *p, char *out, size_t outlen);

#endif
