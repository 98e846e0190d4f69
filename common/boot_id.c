#include "boot_id.h"

#include <fcntl.h>
#include <unistd.h>

bool sq_boot_id(char out[SQ_WIRE_BOOT_ID_LEN])
{
	int fd = open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	ssize_t n = read(fd, out, SQ_WIRE_BOOT_ID_LEN);
	close(fd);
	return n == SQ_WIRE_BOOT_ID_LEN;
}
