#include "tun.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/if_tun.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

int npa_tun_create(const char *name, char *err, size_t errlen)
{
	if (if_nametoindex(name) != 0) {
		snprintf(err, errlen, "a device named %s already exists in this network namespace: "
			 "remove it (ip link del %s) or choose another --dev", name, name);
		return -1;
	}
	int fd = open("/dev/net/tun", O_RDWR | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		snprintf(err, errlen, "cannot open /dev/net/tun to create TUN device %s: %s%s", name,
			 strerror(errno), errno == EACCES || errno == EPERM
			 ? " (squall-npa needs root or CAP_NET_ADMIN)" : "");
		return -1;
	}
	struct ifreq ifr;
	memset(&ifr, 0, sizeof(ifr));
	ifr.ifr_flags = IFF_TUN | IFF_NO_PI;
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", name);
	if (ioctl(fd, TUNSETIFF, &ifr) < 0) {
		snprintf(err, errlen, "cannot create TUN device %s (ioctl TUNSETIFF): %s%s", name,
			 strerror(errno), errno == EPERM ? " (needs root or CAP_NET_ADMIN)" : "");
		close(fd);
		return -1;
	}
	return fd;
}
