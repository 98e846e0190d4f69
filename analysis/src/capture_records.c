/* squall-capture-records: reads a pcap or pcapng file with libpcap and writes one
 * fixed-size header record per frame (packet_record.h) for analysis/read/pcap.py.
 *
 *   squall-capture-records CAPTURE [OUTPUT]      OUTPUT defaults to stdout
 *
 * Exit 0 on success; 1 with a message naming the file, the frame number and the byte
 * offset on a truncated or corrupt capture (records before it have been written). */
#include <errno.h>
#include <pcap/pcap.h>
#include <stdio.h>
#include <string.h>

#include "gz_input.h"
#include "packet_parse.h"
#include "records_args.h"
#include "packet_record.h"

static const char usage_text[] =
	"usage: squall-capture-records CAPTURE [OUTPUT]\n"
	"Writes one fixed-size header record per frame of a pcap or pcapng capture\n"
	"to OUTPUT or stdout: what the analysis reads (analysis/README.md).\n";

/* Byte offsets in messages count the decompressed bytes of a .pcap.gz. */
static const char *offset_kind = "byte offset";

static pcap_t *open_capture(const char *path)
{
	char err[PCAP_ERRBUF_SIZE] = "";
	int compressed = sq_is_gzip(path);
	if (compressed < 0) {
		fprintf(stderr, "%s: cannot open: %s\n", path, strerror(errno));
		return NULL;
	}
	pcap_t *p;
	if (compressed) {
		offset_kind = "decompressed byte offset";
		FILE *f = sq_gz_fopen(path);
		if (!f) {
			fprintf(stderr, "%s: cannot open: %s\n", path, strerror(errno));
			return NULL;
		}
		p = pcap_fopen_offline_with_tstamp_precision(f, PCAP_TSTAMP_PRECISION_MICRO, err);
		if (!p)
			fclose(f);
	} else {
		p = pcap_open_offline_with_tstamp_precision(path, PCAP_TSTAMP_PRECISION_MICRO, err);
	}
	if (!p)
		fprintf(stderr, "%s: cannot read as pcap or pcapng (at %s 0): %s\n", path, offset_kind, err);
	return p;
}

static int write_all(FILE *out, const void *buf, size_t len, const char *out_name)
{
	if (fwrite(buf, 1, len, out) == len)
		return 0;
	fprintf(stderr, "%s: write failed: %s\n", out_name, strerror(errno));
	return -1;
}

static int write_stream_header(FILE *out, int linktype, const char *out_name)
{
	struct sq_stream_header h = {
		.magic = SQ_RECORD_MAGIC,
		.version = SQ_RECORD_VERSION,
		.record_size = sizeof(struct sq_packet_record),
		.linktype = (uint32_t)linktype,
	};
	return write_all(out, &h, sizeof h, out_name);
}

static long file_offset(pcap_t *p)
{
	FILE *f = pcap_file(p);
	return f ? ftell(f) : -1;
}

/* Returns 0 at a clean end of file, -1 after reporting an error. */
static int convert(pcap_t *p, const char *path, FILE *out, const char *out_name)
{
	int linktype = pcap_datalink(p);
	if (!sq_linktype_supported(linktype)) {
		fprintf(stderr, "%s: link type %d (%s) is not supported; expected Ethernet, raw IP, "
			"Linux cooked (SLL/SLL2) or BSD loopback\n", path, linktype,
			pcap_datalink_val_to_name(linktype) ? pcap_datalink_val_to_name(linktype) : "?");
		return -1;
	}
	if (write_stream_header(out, linktype, out_name))
		return -1;
	struct sq_packet_record rec;
	struct pcap_pkthdr *hdr;
	const u_char *data;
	for (uint32_t frame = 1;; frame++) {
		long offset = file_offset(p);
		int rc = pcap_next_ex(p, &hdr, &data);
		if (rc == PCAP_ERROR_BREAK)
			return 0;
		if (rc != 1) {
			fprintf(stderr, "%s: frame %u at %s %ld: %s\n", path, frame, offset_kind, offset,
				pcap_geterr(p));
			return -1;
		}
		sq_parse_frame(linktype, data, hdr->caplen, &rec);
		rec.ts_us = (int64_t)hdr->ts.tv_sec * 1000000 + hdr->ts.tv_usec;
		rec.frame_no = frame;
		rec.wire_len = hdr->len;
		rec.cap_len = hdr->caplen;
		if (write_all(out, &rec, sizeof rec, out_name))
			return -1;
	}
}

int main(int argc, char **argv)
{
	int answered = sq_records_args(argc, argv, "squall-capture-records", usage_text);
	if (answered >= 0)
		return answered;
	const char *path = argv[1];
	const char *out_name = argc == 3 ? argv[2] : "stdout";
	pcap_t *p = open_capture(path);
	if (!p)
		return 1;
	FILE *out = argc == 3 ? fopen(out_name, "wb") : stdout;
	if (!out) {
		fprintf(stderr, "%s: cannot create output: %s\n", out_name, strerror(errno));
		pcap_close(p);
		return 1;
	}
	static char buf[1 << 20];
	setvbuf(out, buf, _IOFBF, sizeof buf);
	int rc = convert(p, path, out, out_name);
	if (fflush(out) != 0 && rc == 0) {
		fprintf(stderr, "%s: write failed: %s\n", out_name, strerror(errno));
		rc = -1;
	}
	if (out != stdout)
		fclose(out);
	pcap_close(p);
	return rc == 0 ? 0 : 1;
}
