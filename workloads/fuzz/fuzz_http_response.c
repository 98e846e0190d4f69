/* libFuzzer target: the HTTP response parser fed arbitrary bytes in arbitrary chunks, as
 * pipelined responses over a connection. It must never read out of bounds, never consume
 * more than it is given, and always make progress or stop in a final state. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "../src/http/http_response.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct http_response r; /* large: keep it off the fuzzer's stack */
    http_response_reset(&r);
    size_t pos = 0;
    /* the first byte chooses the chunk size, like reads of varying length */
    size_t chunk = size ? (size_t)data[0] % 17 + 1 : 1;
    while (pos < size) {
        size_t len = size - pos < chunk ? size - pos : chunk;
        size_t used = http_response_feed(&r, data + pos, len);
        if (used > len)
            abort();
        if (r.state == HTTP_RESP_ERROR)
            return 0;
        if (r.state == HTTP_RESP_DONE)
            http_response_reset(&r); /* next pipelined response */
        else if (used == 0)
            abort(); /* neither progress nor a final state */
        pos += used;
    }
    http_response_eof(&r);
    return 0;
}
