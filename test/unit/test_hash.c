/* Unit tests for lib/support/hash.c: XXH64's known answers, and
 * HMAC-SHA256 (RFC 2104): every test case of RFC 4231 section 4 (keys
 * shorter than, equal to after hashing, and longer than the 64-byte block;
 * case 5 compares the truncated 128 bits), a message split into parts
 * equals the message whole, and the constant-time compare finds a
 * difference in any byte. */
#include "stc_test.h"

#include "stc/hash.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void hex_of(const uint8_t *bytes, size_t size, char *out) {
  for (size_t i = 0; i < size; ++i)
    snprintf(out + 2 * i, 3, "%02x", bytes[i]);
}

typedef struct hmac_vector {
  uint8_t key_byte; /* 0: the key 0x01..0x19 of case 4, else repeated */
  size_t key_size;
  const char *data; /* NULL: data_byte repeated data_size times */
  uint8_t data_byte;
  size_t data_size;
  const char *expected; /* hex; case 5 gives the first 128 bits only */
} hmac_vector;

/* XXH64's published answers (xxHash's and python-xxhash's): the empty,
 * short (tail-only) and 39-byte (one 32-byte stripe, then a tail) inputs,
 * and a seed; every length up to 64 agrees with itself split nowhere (no
 * out-of-bounds read under ASan). */
STC_TEST(xxh64_known_answers) {
  STC_CHECK_EQ_U64(stc_xxh64("", 0, 0), UINT64_C(0xef46db3751d8e999));
  STC_CHECK_EQ_U64(stc_xxh64("a", 1, 0), UINT64_C(0xd24ec4f1a98c6e5b));
  STC_CHECK_EQ_U64(stc_xxh64("abc", 3, 0), UINT64_C(0x44bc2cf5ad770999));
  const char *text = "Nobody inspects the spammish repetition";
  STC_CHECK_EQ_U64(stc_xxh64(text, strlen(text), 0),
                   UINT64_C(0xfbcea83c8a378bf1));
  STC_CHECK_EQ_U64(stc_xxh64("xxhash", 6, 20141025),
                   UINT64_C(0xb559b98d844e0635));
  char bytes[64];
  for (size_t i = 0; i < sizeof bytes; i++)
    bytes[i] = (char)(i * 31 + 7);
  for (size_t n = 0; n <= sizeof bytes; n++) {
    char *copy = malloc(n ? n : 1); /* exactly n bytes: ASan sees overreads */
    STC_CHECK(copy);
    memcpy(copy, bytes, n);
    STC_CHECK_EQ_U64(stc_xxh64(copy, n, 1), stc_xxh64(bytes, n, 1));
    free(copy);
  }
}

STC_TEST(hmac_sha256_rfc4231_test_cases) {
  static const hmac_vector vectors[] = {
      {0x0b, 20, "Hi There", 0, 0,
       "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"},
      {'J', 4, "what do ya want for nothing?", 0, 0,
       "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"},
      {0xaa, 20, NULL, 0xdd, 50,
       "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe"},
      {0, 25, NULL, 0xcd, 50,
       "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b"},
      {0x0c, 20, "Test With Truncation", 0, 0,
       "a3b6167473100ee06e0c796c2955552b"},
      {0xaa, 131, "Test Using Larger Than Block-Size Key - Hash Key First", 0,
       0, "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"},
      {0xaa, 131,
       "This is a test using a larger than block-size key and a larger than "
       "block-size data. The key needs to be hashed before being used by the "
       "HMAC algorithm.",
       0, 0,
       "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2"},
  };
  for (size_t v = 0; v < sizeof vectors / sizeof *vectors; ++v) {
    uint8_t key[131], data[64];
    for (size_t i = 0; i < vectors[v].key_size; ++i)
      key[i] = vectors[v].key_byte ? vectors[v].key_byte : (uint8_t)(i + 1);
    if (vectors[v].key_byte == 'J')
      memcpy(key, "Jefe", 4);
    const void *message = vectors[v].data;
    size_t size = message ? strlen(vectors[v].data) : vectors[v].data_size;
    if (!message) {
      memset(data, vectors[v].data_byte, size);
      message = data;
    }
    uint8_t mac[32];
    char hex[65];
    stc_hmac_sha256(key, vectors[v].key_size, message, size, mac);
    hex_of(mac, 32, hex);
    hex[strlen(vectors[v].expected)] = 0; /* case 5: truncated */
    STC_CHECK_STR_EQ(hex, vectors[v].expected);
  }
}

STC_TEST(hmac_sha256_parts_equal_the_whole_message) {
  char message[300];
  for (size_t i = 0; i < sizeof message; ++i)
    message[i] = (char)(i * 7 + 3);
  const char key[] = "a fleet key of more than thirty-two bytes, say";
  uint8_t whole[32], split[32];
  stc_hmac_sha256(key, sizeof key - 1, message, sizeof message, whole);
  /* Every split point, including empty parts and block boundaries. */
  for (size_t cut = 0; cut <= sizeof message; cut += 1) {
    stc_hmac_part parts[] = {
        {message, cut}, {NULL, 0}, {message + cut, sizeof message - cut}};
    stc_hmac_sha256_parts(key, sizeof key - 1, parts, 3, split);
    STC_CHECK(memcmp(whole, split, 32) == 0);
  }
  /* Another key or one flipped bit of the message: another MAC. */
  stc_hmac_sha256(key, sizeof key - 2, message, sizeof message, split);
  STC_CHECK(memcmp(whole, split, 32) != 0);
  message[150] ^= 1;
  stc_hmac_sha256(key, sizeof key - 1, message, sizeof message, split);
  STC_CHECK(memcmp(whole, split, 32) != 0);
}

STC_TEST(constant_time_compare_finds_any_difference) {
  uint8_t a[32], b[32];
  for (int i = 0; i < 32; ++i)
    a[i] = b[i] = (uint8_t)(i * 13);
  STC_CHECK(stc_bytes_equal_constant_time(a, b, 32));
  STC_CHECK(stc_bytes_equal_constant_time(a, b, 0));
  for (int i = 0; i < 32; ++i) {
    for (int bit = 0; bit < 8; ++bit) {
      b[i] ^= (uint8_t)(1u << bit);
      STC_CHECK(!stc_bytes_equal_constant_time(a, b, 32));
      b[i] ^= (uint8_t)(1u << bit);
    }
  }
}

STC_TEST(sha256_hex_shape_is_recognised) {
  char digest[65];
  stc_sha256_hex("abc", 3, digest);
  STC_CHECK(stc_is_sha256_hex(digest));
  STC_CHECK(!stc_is_sha256_hex(NULL));
  STC_CHECK(!stc_is_sha256_hex(""));
  char copy[66];
  memcpy(copy, digest, 65);
  copy[63] = 0; /* 63 digits */
  STC_CHECK(!stc_is_sha256_hex(copy));
  memcpy(copy, digest, 64);
  copy[64] = '0', copy[65] = 0; /* 65 digits */
  STC_CHECK(!stc_is_sha256_hex(copy));
  memcpy(copy, digest, 65);
  copy[10] = 'A'; /* upper case is not what stc_sha256_hex writes */
  STC_CHECK(!stc_is_sha256_hex(copy));
  copy[10] = 'g';
  STC_CHECK(!stc_is_sha256_hex(copy));
  copy[10] = '/'; /* a path separator must never pass as a digest */
  STC_CHECK(!stc_is_sha256_hex(copy));
}

/* SHA-256 runs on the processor's SHA extensions where it has them, else on
 * the portable rounds: both must give FIPS 180-2's digests (its examples
 * and the million 'a's) and agree on every length around the block and
 * padding boundaries, at every alignment. */
static void sha_hex(const void *data, size_t size, char out[65]) {
  stc_sha256_hex(data, size, out);
}

STC_TEST(sha256_known_answers_on_both_engines) {
  static const struct {
    const char *text;
    const char *expected;
  } vectors[] = {
      {"", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
      {"abc",
       "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
      {"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
       "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"},
      {"abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmn"
       "opjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu",
       "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1"},
  };
  char *million = malloc(1000000);
  STC_CHECK(million != NULL);
  if (!million)
    return;
  memset(million, 'a', 1000000);
  bool accelerated = stc__sha256_accelerated(false);
  printf("SHA extensions %s\n", accelerated ? "in use" : "not available");
  for (int engine = 0; engine < 2; engine++) {
    if (engine == 1)
      STC_CHECK(!stc__sha256_accelerated(true));
    char hex[65];
    for (size_t v = 0; v < sizeof vectors / sizeof *vectors; ++v) {
      sha_hex(vectors[v].text, strlen(vectors[v].text), hex);
      STC_CHECK_STR_EQ(hex, vectors[v].expected);
    }
    sha_hex(million, 1000000, hex);
    STC_CHECK_STR_EQ(
        hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
  }
  stc__sha256_accelerated(false);
  free(million);
}

STC_TEST(sha256_engines_agree_on_every_length_and_alignment) {
  unsigned char data[600];
  uint64_t state = 0x243F6A8885A308D3u;
  for (size_t i = 0; i < sizeof data; ++i) {
    state = state * 6364136223846793005u + 1442695040888963407u;
    data[i] = (unsigned char)(state >> 56);
  }
  size_t compared = 0, differing = 0;
  for (size_t offset = 0; offset < 8; ++offset)
    for (size_t size = 0; size + offset <= 520; ++size) {
      uint8_t fast[32], portable[32];
      stc__sha256_accelerated(false);
      stc_sha256(data + offset, size, fast);
      stc__sha256_accelerated(true);
      stc_sha256(data + offset, size, portable);
      compared++;
      differing += memcmp(fast, portable, 32) != 0;
    }
  stc__sha256_accelerated(false);
  STC_CHECK_EQ_U64(differing, 0);
  STC_CHECK(compared > 4000);
  /* HMAC's streamed parts go through the same blocks: split anywhere. */
  uint8_t whole[32], split[32];
  stc_hmac_sha256("k", 1, data, sizeof data, whole);
  stc__sha256_accelerated(true);
  stc_hmac_part parts[] = {{data, 61}, {data + 61, 200}, {data + 261, 339}};
  stc_hmac_sha256_parts("k", 1, parts, 3, split);
  stc__sha256_accelerated(false);
  STC_CHECK(memcmp(whole, split, 32) == 0);
}
