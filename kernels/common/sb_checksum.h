/* FNV-1a 64 over little-endian bytes: the checksum of every record. */
#ifndef SB_CHECKSUM_H
#define SB_CHECKSUM_H

#include <stddef.h>
#include <stdint.h>

#define SB_FNV_OFFSET UINT64_C(0xcbf29ce484222325)
#define SB_FNV_PRIME UINT64_C(0x100000001b3)

/* Continues hash `h` over n raw bytes. */
static inline uint64_t sb_fnv1a64_bytes(uint64_t h, const void *data, size_t n) {
    const unsigned char *b = (const unsigned char *)data;
    for (size_t i = 0; i < n; i++) {
        h ^= b[i];
        h *= SB_FNV_PRIME;
    }
    return h;
}

/* Hash of uint32 values as little-endian, independent of the host byte order. */
static inline uint64_t sb_fnv1a64_u32le(const uint32_t *v, size_t n) {
    uint64_t h = SB_FNV_OFFSET;
    for (size_t i = 0; i < n; i++)
        for (int k = 0; k < 4; k++) {
            h ^= (v[i] >> (8 * k)) & 0xffu;
            h *= SB_FNV_PRIME;
        }
    return h;
}

/* Hash of one uint64 as little-endian (the π checksum input). */
static inline uint64_t sb_fnv1a64_u64le(uint64_t v) {
    uint64_t h = SB_FNV_OFFSET;
    for (int k = 0; k < 8; k++) {
        h ^= (v >> (8 * k)) & 0xffu;
        h *= SB_FNV_PRIME;
    }
    return h;
}

#endif /* SB_CHECKSUM_H */
