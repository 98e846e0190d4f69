/* ECN marks of RED qdiscs. libnl-route parses no RED extended statistics, so this asks
 * the kernel with a raw RTM_GETQDISC dump and reads struct tc_red_xstats.marked. */
#ifndef SQUALL_RED_MARKS_H
#define SQUALL_RED_MARKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RED_MARKS_MAX 64

struct red_mark_count {
	uint32_t handle;
	uint64_t marked;
};

struct red_marks {
	int ifindex;
	size_t count;
	struct red_mark_count entries[RED_MARKS_MAX];
};

struct nl_sock;
struct nlmsghdr;

/* Takes one RTM_NEWQDISC message of a dump: remembers its marks if it is a RED qdisc on
 * marks->ifindex with extended statistics. Returns whether it was taken. */
bool red_marks_take_qdisc(struct red_marks *marks, struct nlmsghdr *hdr);

/* Fills marks with every RED qdisc on marks->ifindex; 0 or a negative libnl error. */
int red_marks_dump(struct nl_sock *sock, struct red_marks *marks);

/* Whether handle was found; its count in *marked. */
bool red_marks_find(const struct red_marks *marks, uint32_t handle, uint64_t *marked);

#endif
