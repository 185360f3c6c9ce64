#include "CStreamingCopy.h"

#include <stdint.h>
#include <string.h>

#if defined(__x86_64__)
#include <emmintrin.h>

void streaming_copy(void *destination, const void *source, size_t count) {
    unsigned char *to = destination;
    const unsigned char *from = source;
    // Short copies gain nothing and the fence would cost more than they do.
    if (count < 256) {
        memcpy(to, from, count);
        return;
    }
    // Streaming stores need 16-byte aligned destinations: copy up to the
    // first aligned address normally.
    size_t head = (16 - ((uintptr_t)to & 15)) & 15;
    memcpy(to, from, head);
    to += head;
    from += head;
    count -= head;
    // 64 bytes (one cache line) per round; the source may be unaligned.
    size_t lines = count / 64;
    for (size_t line = 0; line < lines; line++) {
        __m128i a = _mm_loadu_si128((const __m128i *)(from + 0));
        __m128i b = _mm_loadu_si128((const __m128i *)(from + 16));
        __m128i c = _mm_loadu_si128((const __m128i *)(from + 32));
        __m128i d = _mm_loadu_si128((const __m128i *)(from + 48));
        _mm_stream_si128((__m128i *)(to + 0), a);
        _mm_stream_si128((__m128i *)(to + 16), b);
        _mm_stream_si128((__m128i *)(to + 32), c);
        _mm_stream_si128((__m128i *)(to + 48), d);
        from += 64;
        to += 64;
    }
    memcpy(to, from, count - lines * 64);
    // Streaming stores are weakly ordered: without the fence another thread
    // could see the body marked complete before its last bytes.
    _mm_sfence();
}

#else

void streaming_copy(void *destination, const void *source, size_t count) {
    memcpy(destination, source, count);
}

#endif
