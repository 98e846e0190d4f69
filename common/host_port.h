/* HOST:PORT as every program writes it: "198.18.0.1:5300", "[2001:db8::1]:5300"
 * (IPv6 in brackets, since its colons would be ambiguous) or "name.example:80".
 * Resolving the host is left to the caller: some accept names, some only
 * numeric addresses. */
#ifndef SQ_HOST_PORT_H
#define SQ_HOST_PORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

/* Splits text into host (without brackets, NUL-terminated, fits host_size) and a
 * decimal port from 1 (0 when allow_port0) to 65535. False if any part is
 * missing, an unbracketed host has a colon, or there is trailing text. */
bool sq_parse_host_port(const char *text, bool allow_port0, char *host, size_t host_size,
			uint16_t *port);

/* ADDR:PORT with a numeric address: IPv4 "198.18.0.1:5300" or IPv6 in brackets
 * "[2001:db8::1]:5300" -> a socket address (names are not resolved). */
bool sq_parse_numeric_endpoint(const char *text, bool allow_port0, struct sockaddr_storage *out,
			       socklen_t *out_len);

/* True when a and b are the same IPv4/IPv6 address and port (how the SP and the NPA
 * tell a registered peer from any other sender). */
bool sq_sockaddr_equal(const struct sockaddr *a, socklen_t alen, const struct sockaddr *b,
		       socklen_t blen);

#endif
