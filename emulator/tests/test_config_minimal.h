/* The smallest complete configuration file, shared by the configuration tests. Lines
 * appended to it go into [up]; router sections may follow them. */
#ifndef TEST_CONFIG_MINIMAL_H
#define TEST_CONFIG_MINIMAL_H

static const char *const MINIMAL =
	"token = 0123456789abcdef\n"
	"log = run.log\n"
	"seed = 7\n"
	"[channel]\n"
	"good = fixed(10s)\n"
	"bad = fixed(2s)\n"
	"[down]\n"
	"mtu = 576B\n"
	"bandwidth = 64kbit\n"
	"delay = 200ms\n"
	"send_buffer = 9600B\n"
	"[up]\n"
	"mtu = 1500B\n"
	"bandwidth = 32kbit\n"
	"delay = 100ms\n"
	"send_buffer = 4800B\n";

#endif
