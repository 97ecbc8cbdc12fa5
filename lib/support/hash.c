/* Hashing (see include/stc/hash.h).
 *
 * In: byte ranges. Out: a 64-bit FNV-1a value (region ids, in-memory keys)
 * or a SHA-256 digest (cache file names and record checksums, where a
 * collision would silently return another problem's tuning decision), or an
 * HMAC-SHA256 (RFC 2104: the fleet cache's authenticated objects).
 * SHA-256 follows FIPS 180-4; it is written here so that the core depends on
 * nothing beyond libc. On x86-64 processors with the SHA extensions the
 * compression function runs on them (sha256rnds2, sha256msg1/2: the cache
 * hashes each record and its key on every site's first call in a process,
 * and the portable rounds were a third of that warm path); the portable
 * rounds stay the reference, and test_hash checks both agree. Pure
 * functions; the only state is which of the two runs (found once, racing
 * finders agree): thread-safe. */
#include "stc/hash.h"

#include <stdatomic.h>
#include <string.h>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define STC_SHA256_X86 1
#include <cpuid.h>
#include <immintrin.h>
#if defined(__has_include)
#if __has_include(<sys/platform/x86.h>)
#include <sys/platform/x86.h> /* glibc 2.33+: its own CPUID answers */
#endif
#endif
#endif

#define STC_FNV_PRIME UINT64_C(0x100000001b3)

uint64_t stc_hash64(const void *data, size_t size, uint64_t seed) {
  const unsigned char *bytes = data;
  uint64_t hash = seed;
  for (size_t i = 0; i < size; ++i) {
    hash ^= bytes[i];
    hash *= STC_FNV_PRIME;
  }
  return hash;
}

/* ---- XXH64 (xxHash's specification, XXH64 section) ---- */

#define XXH_P1 UINT64_C(0x9E3779B185EBCA87)
#define XXH_P2 UINT64_C(0xC2B2AE3D27D4EB4F)
#define XXH_P3 UINT64_C(0x165667B19E3779F9)
#define XXH_P4 UINT64_C(0x85EBCA77C2B2AE63)
#define XXH_P5 UINT64_C(0x27D4EB2F165667C5)

static uint64_t xxh_rotl(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }

/* Little-endian loads, whatever the host. */
static uint64_t xxh_read64(const unsigned char *p) {
  uint64_t v;
  memcpy(&v, p, sizeof v);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
  v = __builtin_bswap64(v);
#endif
  return v;
}

static uint32_t xxh_read32(const unsigned char *p) {
  uint32_t v;
  memcpy(&v, p, sizeof v);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
  v = __builtin_bswap32(v);
#endif
  return v;
}

static uint64_t xxh_round(uint64_t acc, uint64_t input) {
  return xxh_rotl(acc + input * XXH_P2, 31) * XXH_P1;
}

static uint64_t xxh_merge(uint64_t acc, uint64_t value) {
  return (acc ^ xxh_round(0, value)) * XXH_P1 + XXH_P4;
}

uint64_t stc_xxh64(const void *data, size_t size, uint64_t seed) {
  const unsigned char *p = data, *end = p + size;
  uint64_t h;
  if (size >= 32) {
    uint64_t v1 = seed + XXH_P1 + XXH_P2, v2 = seed + XXH_P2, v3 = seed,
             v4 = seed - XXH_P1;
    for (; end - p >= 32; p += 32) {
      v1 = xxh_round(v1, xxh_read64(p));
      v2 = xxh_round(v2, xxh_read64(p + 8));
      v3 = xxh_round(v3, xxh_read64(p + 16));
      v4 = xxh_round(v4, xxh_read64(p + 24));
    }
    h = xxh_rotl(v1, 1) + xxh_rotl(v2, 7) + xxh_rotl(v3, 12) +
        xxh_rotl(v4, 18);
    h = xxh_merge(h, v1);
    h = xxh_merge(h, v2);
    h = xxh_merge(h, v3);
    h = xxh_merge(h, v4);
  } else {
    h = seed + XXH_P5;
  }
  h += (uint64_t)size;
  for (; end - p >= 8; p += 8)
    h = xxh_rotl(h ^ xxh_round(0, xxh_read64(p)), 27) * XXH_P1 + XXH_P4;
  if (end - p >= 4) {
    h = xxh_rotl(h ^ (uint64_t)xxh_read32(p) * XXH_P1, 23) * XXH_P2 + XXH_P3;
    p += 4;
  }
  for (; p < end; p++)
    h = xxh_rotl(h ^ *p * XXH_P5, 11) * XXH_P1;
  h ^= h >> 33;
  h *= XXH_P2;
  h ^= h >> 29;
  h *= XXH_P3;
  h ^= h >> 32;
  return h;
}

uint64_t stc_hash64_str(const char *text, uint64_t seed) {
  if (!text)
    return seed;
  return stc_hash64(text, strlen(text), seed);
}

/* ---- SHA-256 ----------------------------------------------------------- */

typedef struct stc_sha256_state {
  uint32_t h[8];
  unsigned char block[64];
  size_t block_used;
  uint64_t total_bytes;
} stc_sha256_state;

static const uint32_t stc_sha256_k[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1,
    0x923f82a4, 0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3,
    0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786,
    0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147,
    0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
    0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
    0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a,
    0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208,
    0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

static uint32_t stc_rotr32(uint32_t x, unsigned n) {
  return (x >> n) | (x << (32 - n));
}

static void stc_sha256_compress(uint32_t h[8], const unsigned char *block) {
  uint32_t w[64];
  for (int i = 0; i < 16; ++i)
    w[i] = (uint32_t)block[4 * i] << 24 | (uint32_t)block[4 * i + 1] << 16 |
           (uint32_t)block[4 * i + 2] << 8 | (uint32_t)block[4 * i + 3];
  for (int i = 16; i < 64; ++i) {
    uint32_t s0 = stc_rotr32(w[i - 15], 7) ^ stc_rotr32(w[i - 15], 18) ^
                  (w[i - 15] >> 3);
    uint32_t s1 = stc_rotr32(w[i - 2], 17) ^ stc_rotr32(w[i - 2], 19) ^
                  (w[i - 2] >> 10);
    w[i] = w[i - 16] + s0 + w[i - 7] + s1;
  }
  uint32_t a = h[0], b = h[1], c = h[2], d = h[3];
  uint32_t e = h[4], f = h[5], g = h[6], hh = h[7];
  for (int i = 0; i < 64; ++i) {
    uint32_t s1 = stc_rotr32(e, 6) ^ stc_rotr32(e, 11) ^ stc_rotr32(e, 25);
    uint32_t ch = (e & f) ^ (~e & g);
    uint32_t t1 = hh + s1 + ch + stc_sha256_k[i] + w[i];
    uint32_t s0 = stc_rotr32(a, 2) ^ stc_rotr32(a, 13) ^ stc_rotr32(a, 22);
    uint32_t maj = (a & b) ^ (a & c) ^ (b & c);
    uint32_t t2 = s0 + maj;
    hh = g;
    g = f;
    f = e;
    e = d + t1;
    d = c;
    c = b;
    b = a;
    a = t1 + t2;
  }
  h[0] += a;
  h[1] += b;
  h[2] += c;
  h[3] += d;
  h[4] += e;
  h[5] += f;
  h[6] += g;
  h[7] += hh;
}

#ifdef STC_SHA256_X86
/* The compression of `blocks` 64-byte blocks with the SHA extensions
 * (Intel SDM, SHA256RNDS2/SHA256MSG1/SHA256MSG2). The state is kept as
 * the instructions want it: one register holding A, B, E, F and one holding
 * C, D, G, H. Each 4-round group g adds its message words to K[4g..4g+3]
 * and runs two double rounds; meanwhile the words of later groups are made
 * from earlier ones (msg1 starts W[t] for group g + 3, msg2 finishes group
 * g + 1's). */
__attribute__((target("sha,sse4.1,ssse3"))) static void
stc_sha256_compress_x86(uint32_t h[8], const unsigned char *data,
                        size_t blocks) {
  const __m128i byte_swap =
      _mm_set_epi64x(0x0c0d0e0f08090a0bLL, 0x0405060700010203LL);
  __m128i low = _mm_loadu_si128((const __m128i *)&h[0]);  /* A B C D */
  __m128i high = _mm_loadu_si128((const __m128i *)&h[4]); /* E F G H */
  low = _mm_shuffle_epi32(low, 0xB1);                     /* B A D C */
  high = _mm_shuffle_epi32(high, 0x1B);                   /* H G F E */
  __m128i abef = _mm_alignr_epi8(low, high, 8);           /* F E B A */
  __m128i cdgh = _mm_blend_epi16(high, low, 0xF0);        /* H G D C */
  for (; blocks > 0; blocks--, data += 64) {
    __m128i abef_before = abef, cdgh_before = cdgh;
    __m128i m[4];
    for (int g = 0; g < 16; g++) {
      if (g < 4)
        m[g] = _mm_shuffle_epi8(
            _mm_loadu_si128((const __m128i *)(data + 16 * g)), byte_swap);
      __m128i words = _mm_add_epi32(
          m[g % 4], _mm_loadu_si128((const __m128i *)&stc_sha256_k[4 * g]));
      cdgh = _mm_sha256rnds2_epu32(cdgh, abef, words);
      if (g >= 3 && g < 15) {
        __m128i *next = &m[(g + 1) % 4];
        *next = _mm_add_epi32(
            *next, _mm_alignr_epi8(m[g % 4], m[(g + 3) % 4], 4));
        *next = _mm_sha256msg2_epu32(*next, m[g % 4]);
      }
      abef = _mm_sha256rnds2_epu32(abef, cdgh,
                                   _mm_shuffle_epi32(words, 0x0E));
      if (g >= 1 && g < 13)
        m[(g + 3) % 4] = _mm_sha256msg1_epu32(m[(g + 3) % 4], m[g % 4]);
    }
    abef = _mm_add_epi32(abef, abef_before);
    cdgh = _mm_add_epi32(cdgh, cdgh_before);
  }
  __m128i feba = _mm_shuffle_epi32(abef, 0x1B);
  __m128i dchg = _mm_shuffle_epi32(cdgh, 0xB1);
  _mm_storeu_si128((__m128i *)&h[0], _mm_blend_epi16(feba, dchg, 0xF0));
  _mm_storeu_si128((__m128i *)&h[4], _mm_alignr_epi8(dchg, feba, 8));
}

/* 0: not known yet, 1: the SHA extensions, 2: the portable rounds. */
static atomic_int stc_sha256_engine;

static bool stc_sha256_x86_usable(void) {
  int engine = atomic_load_explicit(&stc_sha256_engine, memory_order_relaxed);
  if (engine == 0) {
    /* Under a hypervisor every CPUID instruction is a trap (about 7 us
     * each measured on a KVM guest, more than the SHA-NI saves on one
     * process's records): glibc ran them at start-up and answers from
     * what it keeps. Elsewhere three leaves, each asked once: the highest
     * leaf, then SSSE3 and SSE 4.1, then SHA. */
    bool usable = false;
#ifdef CPU_FEATURE_ACTIVE
    usable = CPU_FEATURE_ACTIVE(SSSE3) && CPU_FEATURE_ACTIVE(SSE4_1) &&
             CPU_FEATURE_ACTIVE(SHA);
#else
    unsigned a, b, c, d, features = 0;
    __cpuid(0, a, b, c, d);
    if (a >= 7) {
      __cpuid(1, a, b, features, d);
      __cpuid_count(7, 0, a, b, c, d);
      usable = (features & bit_SSSE3) && (features & bit_SSE4_1) &&
               (b & bit_SHA);
    }
#endif
    engine = usable ? 1 : 2;
    atomic_store_explicit(&stc_sha256_engine, engine, memory_order_relaxed);
  }
  return engine == 1;
}
#endif

bool stc__sha256_accelerated(bool portable) {
#ifdef STC_SHA256_X86
  if (portable) {
    atomic_store_explicit(&stc_sha256_engine, 2, memory_order_relaxed);
    return false;
  }
  atomic_store_explicit(&stc_sha256_engine, 0, memory_order_relaxed);
  return stc_sha256_x86_usable();
#else
  (void)portable;
  return false;
#endif
}

/* Compresses `blocks` whole blocks at data. */
static void stc_sha256_blocks(uint32_t h[8], const unsigned char *data,
                              size_t blocks) {
#ifdef STC_SHA256_X86
  if (stc_sha256_x86_usable()) {
    stc_sha256_compress_x86(h, data, blocks);
    return;
  }
#endif
  for (; blocks > 0; blocks--, data += 64)
    stc_sha256_compress(h, data);
}

static void stc_sha256_init(stc_sha256_state *state) {
  static const uint32_t initial[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372,
                                      0xa54ff53a, 0x510e527f, 0x9b05688c,
                                      0x1f83d9ab, 0x5be0cd19};
  memcpy(state->h, initial, sizeof initial);
  state->block_used = 0;
  state->total_bytes = 0;
}

static void stc_sha256_update(stc_sha256_state *state, const void *data,
                              size_t size) {
  const unsigned char *bytes = data;
  state->total_bytes += size;
  while (size > 0) {
    if (state->block_used == 0 && size >= 64) {
      /* Whole blocks straight from the input. */
      size_t whole = size / 64;
      stc_sha256_blocks(state->h, bytes, whole);
      bytes += whole * 64;
      size -= whole * 64;
      continue;
    }
    size_t take = 64 - state->block_used;
    if (take > size)
      take = size;
    memcpy(state->block + state->block_used, bytes, take);
    state->block_used += take;
    bytes += take;
    size -= take;
    if (state->block_used == 64) {
      stc_sha256_blocks(state->h, state->block, 1);
      state->block_used = 0;
    }
  }
}

static void stc_sha256_final(stc_sha256_state *state, uint8_t out[32]) {
  uint64_t bit_length = state->total_bytes * 8;
  /* Padding: a 1 bit, zeros up to 56 mod 64, then the 64-bit big-endian
   * message length. */
  unsigned char pad[72] = {0x80};
  size_t pad_size = (state->block_used < 56 ? 56 : 120) - state->block_used;
  for (int i = 0; i < 8; ++i)
    pad[pad_size + i] = (unsigned char)(bit_length >> (56 - 8 * i));
  stc_sha256_update(state, pad, pad_size + 8);
  for (int i = 0; i < 8; ++i) {
    out[4 * i] = (uint8_t)(state->h[i] >> 24);
    out[4 * i + 1] = (uint8_t)(state->h[i] >> 16);
    out[4 * i + 2] = (uint8_t)(state->h[i] >> 8);
    out[4 * i + 3] = (uint8_t)state->h[i];
  }
}

void stc_sha256(const void *data, size_t size, uint8_t out[32]) {
  stc_sha256_state state;
  stc_sha256_init(&state);
  if (size > 0)
    stc_sha256_update(&state, data, size);
  stc_sha256_final(&state, out);
}

void stc_sha256_hex(const void *data, size_t size, char out[65]) {
  static const char digits[] = "0123456789abcdef";
  uint8_t digest[32];
  stc_sha256(data, size, digest);
  for (int i = 0; i < 32; ++i) {
    out[2 * i] = digits[digest[i] >> 4];
    out[2 * i + 1] = digits[digest[i] & 15];
  }
  out[64] = 0;
}

/* ---- HMAC-SHA256 (RFC 2104) -------------------------------------------- */

void stc_hmac_sha256_parts(const void *key, size_t key_size,
                           const stc_hmac_part *parts, size_t count,
                           uint8_t out[32]) {
  /* K0: the key, hashed when longer than a block, zero-padded to 64. */
  unsigned char block_key[64] = {0};
  if (key_size > sizeof block_key)
    stc_sha256(key, key_size, block_key);
  else if (key_size > 0)
    memcpy(block_key, key, key_size);
  unsigned char pad[64];
  stc_sha256_state state;
  uint8_t inner[32];
  for (int i = 0; i < 64; ++i)
    pad[i] = block_key[i] ^ 0x36;
  stc_sha256_init(&state);
  stc_sha256_update(&state, pad, sizeof pad);
  for (size_t i = 0; i < count; ++i)
    if (parts[i].size > 0)
      stc_sha256_update(&state, parts[i].data, parts[i].size);
  stc_sha256_final(&state, inner);
  for (int i = 0; i < 64; ++i)
    pad[i] = block_key[i] ^ 0x5c;
  stc_sha256_init(&state);
  stc_sha256_update(&state, pad, sizeof pad);
  stc_sha256_update(&state, inner, sizeof inner);
  stc_sha256_final(&state, out);
  /* The key's traces do not outlive the call. */
  volatile unsigned char *wipe = block_key;
  for (size_t i = 0; i < sizeof block_key; ++i)
    wipe[i] = 0;
  wipe = pad;
  for (size_t i = 0; i < sizeof pad; ++i)
    wipe[i] = 0;
}

void stc_hmac_sha256(const void *key, size_t key_size, const void *data,
                     size_t size, uint8_t out[32]) {
  stc_hmac_part part = {data, size};
  stc_hmac_sha256_parts(key, key_size, &part, 1, out);
}

bool stc_bytes_equal_constant_time(const void *a, const void *b, size_t size) {
  const volatile unsigned char *x = a, *y = b;
  unsigned char difference = 0;
  for (size_t i = 0; i < size; ++i)
    difference |= (unsigned char)(x[i] ^ y[i]);
  return difference == 0;
}

bool stc_is_sha256_hex(const char *text) {
  if (!text || strlen(text) != 64)
    return false;
  for (int i = 0; i < 64; i++)
    if (!((text[i] >= '0' && text[i] <= '9') ||
          (text[i] >= 'a' && text[i] <= 'f')))
      return false;
  return true;
}
