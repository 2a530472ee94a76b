// A complete hookpoint guest (guest interface version 1) in C, without libc: the same hook as
// allow.wat. On a payload whose "status" is "pending" it answers {"payload": ...} with the
// status "allowed"; on any other payload it answers nothing (= {}, the payload is left).
//
//   clang --target=wasm32 -O2 -nostdlib -fno-builtin -Wl,--no-entry -o allow.wasm allow.c
//
// (Debian: apt-get install clang lld.)
#include <stdint.h>

#define EXPORT(name) __attribute__((export_name(name)))

// The input buffer: the host writes the input JSON here. 64 KiB is plenty for this hook's
// payloads; a larger input gets no buffer (the call then fails with a clear error).
static unsigned char buffer[64 * 1024];

EXPORT("hookpoint_alloc") unsigned char *hookpoint_alloc(int32_t len) {
    return len <= (int32_t)sizeof buffer ? buffer : 0;
}

// The index of `needle` in the `n` bytes at `hay`, or -1.
static int32_t find(const unsigned char *hay, int32_t n, const char *needle) {
    int32_t m = 0;
    while (needle[m]) m++;
    for (int32_t i = 0; i + m <= n; i++) {
        int32_t j = 0;
        while (j < m && hay[i + j] == (unsigned char)needle[j]) j++;
        if (j == m) return i;
    }
    return -1;
}

// One call: the input {"point": ..., "extension": ..., "payload": {...}} is at in[0..len]; the
// answer is (address << 32) | length of the output JSON.
EXPORT("hookpoint_call") int64_t hookpoint_call(unsigned char *in, int32_t len) {
    int32_t p = find(in, len, "\"payload\":");  // the input's last key
    if (p < 0) return 0;
    int32_t s = find(in + p, len - p, "\"status\":\"pending\"");
    if (s < 0) return 0;
    const char *allowed = "allowed";
    for (int i = 0; i < 7; i++) in[p + s + 10 + i] = (unsigned char)allowed[i];
    // The comma before "payload" becomes "{": {"payload":{...}} is the input's tail.
    unsigned char *out = in + p - 1;
    *out = '{';
    return ((int64_t)(uintptr_t)out << 32) | (int64_t)(len - (p - 1));
}
