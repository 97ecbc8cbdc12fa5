/* Unit tests of the fleet cache's remote tier (include/stc/tuner_remote.h)
 * and of the tuner's use of it (leases, remote hits, rejected records).
 *
 * A real Redis is what test/remote-cache exercises; here a small RESP server
 * in a thread of this process (GET, SET [NX] [PX], EXISTS, DEL, the lease
 * release EVAL, SELECT) stands in for it, so these tests need neither
 * redis-server nor the network; only hiredis 0.14 (skipped without it). */
#define _XOPEN_SOURCE 700

#include "stc_test.h"

#include "stc/hash.h"
#include "stc/object_remote.h"
#include "stc/tuner.h"
#include "stc/tuner_cache.h"
#include "stc/tuner_remote.h"

#include <arpa/inet.h>
#include <dlfcn.h>
#include <ftw.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* ---- a fake Redis ------------------------------------------------------- */

#define FAKE_KEYS 64
#define FAKE_CLIENTS 8

typedef struct fake_redis {
  int listener;
  int port;
  pthread_t thread;
  atomic_bool stop;
  atomic_uint commands; /* every command received */
  pthread_mutex_t lock; /* guards the store (tests peek into it) */
  char *keys[FAKE_KEYS];
  char *values[FAKE_KEYS];
  size_t lengths[FAKE_KEYS];
} fake_redis;

static int fake_find(fake_redis *f, const char *key) {
  for (int i = 0; i < FAKE_KEYS; i++)
    if (f->keys[i] && strcmp(f->keys[i], key) == 0)
      return i;
  return -1;
}

static void fake_del(fake_redis *f, int i) {
  free(f->keys[i]);
  free(f->values[i]);
  f->keys[i] = f->values[i] = NULL;
}

static void fake_set(fake_redis *f, const char *key, const char *value,
                     size_t length) {
  int i = fake_find(f, key);
  if (i < 0)
    for (i = 0; i < FAKE_KEYS && f->keys[i]; i++)
      ;
  if (i == FAKE_KEYS)
    return;
  if (f->keys[i])
    fake_del(f, i);
  f->keys[i] = strdup(key);
  f->values[i] = malloc(length + 1);
  memcpy(f->values[i], value, length);
  f->values[i][length] = 0;
  f->lengths[i] = length;
}

static void fake_send(int fd, const char *data, size_t length) {
  while (length > 0) {
    ssize_t sent = send(fd, data, length, MSG_NOSIGNAL);
    if (sent <= 0)
      return;
    data += sent;
    length -= (size_t)sent;
  }
}

static void fake_bulk(int fd, const char *data, size_t length) {
  char head[32];
  int n = snprintf(head, sizeof head, "$%zu\r\n", length);
  fake_send(fd, head, (size_t)n);
  fake_send(fd, data, length);
  fake_send(fd, "\r\n", 2);
}

static void fake_integer(int fd, long value) {
  char text[32];
  int n = snprintf(text, sizeof text, ":%ld\r\n", value);
  fake_send(fd, text, (size_t)n);
}

/* Answers one parsed command (argv NUL-terminated, lengths given). */
static void fake_answer(fake_redis *f, int fd, int argc, char **argv,
                        size_t *lengths) {
  atomic_fetch_add(&f->commands, 1);
  pthread_mutex_lock(&f->lock);
  const char *name = argv[0];
  if (strcasecmp(name, "PING") == 0) {
    fake_send(fd, "+PONG\r\n", 7);
  } else if (strcasecmp(name, "SELECT") == 0) {
    fake_send(fd, "+OK\r\n", 5);
  } else if (strcasecmp(name, "GET") == 0 && argc == 2) {
    int i = fake_find(f, argv[1]);
    if (i < 0)
      fake_send(fd, "$-1\r\n", 5);
    else
      fake_bulk(fd, f->values[i], f->lengths[i]);
  } else if (strcasecmp(name, "SET") == 0 && argc >= 3) {
    bool nx = false;
    for (int a = 3; a < argc; a++)
      nx |= strcasecmp(argv[a], "NX") == 0;
    if (nx && fake_find(f, argv[1]) >= 0) {
      fake_send(fd, "$-1\r\n", 5);
    } else {
      fake_set(f, argv[1], argv[2], lengths[2]);
      fake_send(fd, "+OK\r\n", 5);
    }
  } else if (strcasecmp(name, "EXISTS") == 0 && argc == 2) {
    fake_integer(fd, fake_find(f, argv[1]) >= 0);
  } else if (strcasecmp(name, "DEL") == 0 && argc == 2) {
    int i = fake_find(f, argv[1]);
    if (i >= 0)
      fake_del(f, i);
    fake_integer(fd, i >= 0);
  } else if (strcasecmp(name, "EVAL") == 0 && argc == 5) {
    /* The lease release: delete KEYS[1] if it holds ARGV[1]. */
    int i = fake_find(f, argv[3]);
    bool mine = i >= 0 && strcmp(f->values[i], argv[4]) == 0;
    if (mine)
      fake_del(f, i);
    fake_integer(fd, mine);
  } else {
    fake_send(fd, "-ERR unknown command\r\n", 22);
  }
  pthread_mutex_unlock(&f->lock);
}

/* Parses whole commands at the start of buffer; returns bytes consumed. */
static size_t fake_parse(fake_redis *f, int fd, char *buffer, size_t used) {
  size_t at = 0;
  for (;;) {
    size_t pos = at;
    if (pos >= used || buffer[pos] != '*')
      return at;
    char *end;
    long argc = strtol(buffer + pos + 1, &end, 10);
    if (end >= buffer + used || *end != '\r' || argc < 1 || argc > 16)
      return at;
    pos = (size_t)(end - buffer) + 2;
    char *argv[16];
    size_t lengths[16];
    int got = 0;
    for (; got < argc; got++) {
      if (pos >= used || buffer[pos] != '$')
        break;
      long length = strtol(buffer + pos + 1, &end, 10);
      if (end >= buffer + used || *end != '\r')
        break;
      pos = (size_t)(end - buffer) + 2;
      if (pos + (size_t)length + 2 > used)
        break;
      argv[got] = buffer + pos;
      lengths[got] = (size_t)length;
      pos += (size_t)length + 2;
    }
    if (got < argc)
      return at;
    for (int a = 0; a < argc; a++)
      argv[a][lengths[a]] = 0; /* overwrites the '\r' after it */
    fake_answer(f, fd, (int)argc, argv, lengths);
    at = pos;
  }
}

static void *fake_main(void *arg) {
  fake_redis *f = arg;
  struct pollfd fds[1 + FAKE_CLIENTS];
  char *buffers[FAKE_CLIENTS] = {0};
  size_t used[FAKE_CLIENTS] = {0};
  int clients = 0;
  fds[0].fd = f->listener;
  fds[0].events = POLLIN;
  while (!atomic_load(&f->stop)) {
    if (poll(fds, (nfds_t)(1 + clients), 20) <= 0)
      continue;
    if ((fds[0].revents & POLLIN) && clients < FAKE_CLIENTS) {
      int fd = accept(f->listener, NULL, NULL);
      if (fd >= 0) {
        fds[1 + clients].fd = fd;
        fds[1 + clients].events = POLLIN;
        buffers[clients] = malloc(1 << 20);
        used[clients] = 0;
        clients++;
      }
    }
    for (int c = 0; c < clients; c++) {
      if (!(fds[1 + c].revents & (POLLIN | POLLHUP)))
        continue;
      ssize_t got = recv(fds[1 + c].fd, buffers[c] + used[c],
                         (1 << 20) - used[c], 0);
      if (got <= 0) {
        close(fds[1 + c].fd);
        free(buffers[c]);
        fds[1 + c] = fds[clients];
        buffers[c] = buffers[clients - 1];
        used[c] = used[clients - 1];
        clients--;
        c--;
        continue;
      }
      used[c] += (size_t)got;
      size_t consumed = fake_parse(f, fds[1 + c].fd, buffers[c], used[c]);
      memmove(buffers[c], buffers[c] + consumed, used[c] - consumed);
      used[c] -= consumed;
    }
  }
  for (int c = 0; c < clients; c++) {
    close(fds[1 + c].fd);
    free(buffers[c]);
  }
  return NULL;
}

static fake_redis *fake_start(void) {
  fake_redis *f = calloc(1, sizeof *f);
  f->listener = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in address = {0};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t size = sizeof address;
  if (bind(f->listener, (struct sockaddr *)&address, sizeof address) != 0 ||
      listen(f->listener, 16) != 0 ||
      getsockname(f->listener, (struct sockaddr *)&address, &size) != 0) {
    close(f->listener);
    free(f);
    return NULL;
  }
  f->port = ntohs(address.sin_port);
  pthread_mutex_init(&f->lock, NULL);
  pthread_create(&f->thread, NULL, fake_main, f);
  return f;
}

static void fake_stop(fake_redis *f) {
  if (!f)
    return;
  atomic_store(&f->stop, true);
  pthread_join(f->thread, NULL);
  close(f->listener);
  for (int i = 0; i < FAKE_KEYS; i++)
    if (f->keys[i])
      fake_del(f, i);
  pthread_mutex_destroy(&f->lock);
  free(f);
}

static size_t fake_count(fake_redis *f, const char *prefix) {
  size_t count = 0;
  pthread_mutex_lock(&f->lock);
  for (int i = 0; i < FAKE_KEYS; i++)
    count += f->keys[i] && strncmp(f->keys[i], prefix, strlen(prefix)) == 0;
  pthread_mutex_unlock(&f->lock);
  return count;
}

static void fake_url(const fake_redis *f, char url[64]) {
  snprintf(url, 64, "redis://127.0.0.1:%d", f->port);
}

static bool have_hiredis(void) {
  void *library = dlopen("libhiredis.so.0.14", RTLD_NOW | RTLD_LOCAL);
  if (library)
    dlclose(library);
  return library != NULL;
}

/* The tests that talk to a server need the client library. */
#define SKIP_WITHOUT_HIREDIS()                                                \
  do {                                                                        \
    if (!have_hiredis())                                                      \
      STC_SKIP("libhiredis.so.0.14 is not installed (apt-get install "        \
               "libhiredis-dev)");                                            \
  } while (0)

/* A loopback port where nothing listens (bound, then closed). */
static int closed_port(void) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in address = {0};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t size = sizeof address;
  bind(fd, (struct sockaddr *)&address, sizeof address);
  getsockname(fd, (struct sockaddr *)&address, &size);
  close(fd);
  return ntohs(address.sin_port);
}

static const char digest_a[] =
    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";

/* ---- url and options ------------------------------------------------------ */

STC_TEST(remote_url_forms) {
  static const char *const good[] = {
      "redis://127.0.0.1",          "redis://127.0.0.1:6380",
      "redis://cache.local:6380/3", "redis://[::1]:7000/2",
      "redis://h/",                 "unix:/run/redis.sock",
      "unix:///run/redis.sock?db=5"};
  for (size_t i = 0; i < sizeof good / sizeof *good; i++) {
    stc_remote_cache *remote = NULL;
    stc_error err;
    stc_error_clear(&err);
    STC_CHECK_EQ_INT(stc_remote_cache_open(good[i], NULL, &remote, &err),
                     STC_OK);
    STC_CHECK_STR_EQ(stc_remote_cache_url(remote), good[i]);
    stc_remote_cache_close(remote);
  }
  static const char *const bad[] = {
      "",          "http://h",        "redis://",       "redis://h:0",
      "redis://h:70000", "redis://h:12x", "redis://u:p@h", "redis://h/abc",
      "redis://h/01", "redis://[::1", "unix:relative.sock", "unix:/x?foo=1",
      "unix:/x?db=", "redis:/h"};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    stc_remote_cache *remote = (stc_remote_cache *)1;
    stc_error err;
    stc_error_clear(&err);
    STC_CHECK_EQ_INT(stc_remote_cache_open(bad[i], NULL, &remote, &err),
                     STC_ERR_INVALID);
    STC_CHECK(remote == NULL);
    STC_CHECK(err.message[0] != 0);
  }
}

STC_TEST(remote_options_from_environment) {
  stc_remote_options options;
  stc_remote_options_init(&options);
  STC_CHECK_EQ_U64(options.timeout_ms, 100);
  setenv("STC_CACHE_REMOTE_TIMEOUT_MS", "40", 1);
  setenv("STC_CACHE_REMOTE_LEASE_MS", "-5", 1);
  setenv("STC_CACHE_REMOTE_POLL_MS", "0", 1);
  stc_error err;
  stc_error_clear(&err);
  stc_status status = stc_remote_options_from_environment(&options, &err);
  unsetenv("STC_CACHE_REMOTE_TIMEOUT_MS");
  unsetenv("STC_CACHE_REMOTE_LEASE_MS");
  unsetenv("STC_CACHE_REMOTE_POLL_MS");
  STC_CHECK_EQ_INT(status, STC_ERR_INVALID);
  STC_CHECK_CONTAINS(err.message, "STC_CACHE_REMOTE_LEASE_MS='-5'");
  STC_CHECK_EQ_U64(options.timeout_ms, 40);
  STC_CHECK_EQ_U64(options.lease_ms, 30000); /* the bad one kept its value */
  STC_CHECK_EQ_U64(options.poll_ms, 0);
}

/* ---- faults ----------------------------------------------------------------- */

/* What an unavailable tier does after its first failure: a claim is
 * granted (no fleet to ask: tune here), and the one fault recorded says
 * why. Closes remote. */
static void check_unavailable_once(stc_remote_cache *remote,
                                   const char *reason) {
  bool granted = false;
  stc_remote_cache_claim(remote, digest_a, &granted);
  STC_CHECK(granted);
  char why[512];
  uint64_t faults = 0;
  STC_CHECK(stc_remote_cache_last_fault(remote, why, sizeof why, &faults));
  STC_CHECK_CONTAINS(why, reason);
  STC_CHECK_EQ_U64(faults, 1);
  stc_remote_cache_close(remote);
}

STC_TEST(remote_missing_library_is_one_fault) {
  stc_remote_options options;
  stc_remote_options_init(&options);
  options.library = "libstc-no-such-hiredis.so.0.14";
  stc_remote_cache *remote;
  STC_CHECK_EQ_INT(
      stc_remote_cache_open("redis://127.0.0.1", &options, &remote, NULL),
      STC_OK);
  char *data = NULL;
  size_t size = 0;
  for (int i = 0; i < 3; i++)
    STC_CHECK_EQ_INT(
        stc_remote_cache_get(remote, STC_REMOTE_RECORD, digest_a, &data, &size),
        STC_ERR_UNAVAILABLE);
  check_unavailable_once(remote, "cannot load libstc-no-such-hiredis.so.0.14");
}

STC_TEST(remote_refused_connection_backs_off) {
  SKIP_WITHOUT_HIREDIS();
  char url[64];
  snprintf(url, sizeof url, "redis://127.0.0.1:%d", closed_port());
  stc_remote_cache *remote;
  STC_CHECK_EQ_INT(stc_remote_cache_open(url, NULL, &remote, NULL), STC_OK);
  char *data = NULL;
  size_t size = 0;
  STC_CHECK_EQ_INT(
      stc_remote_cache_get(remote, STC_REMOTE_RECORD, digest_a, &data, &size),
      STC_ERR_UNAVAILABLE);
  /* Backing off: no second attempt, no second fault. */
  STC_CHECK_EQ_INT(
      stc_remote_cache_put(remote, STC_REMOTE_RECORD, digest_a, "x", 1, 1000),
      STC_ERR_UNAVAILABLE);
  check_unavailable_once(remote, "cannot connect: Connection refused");
}

/* ---- operations and leases against the fake --------------------------------- */

STC_TEST(remote_round_trip_and_leases) {
  SKIP_WITHOUT_HIREDIS();
  fake_redis *fake = fake_start();
  STC_CHECK(fake != NULL);
  char url[64];
  fake_url(fake, url);
  stc_remote_options options;
  stc_remote_options_init(&options);
  options.poll_ms = 60000; /* only the record's arrival ends the wait */
  stc_remote_cache *first, *second;
  STC_CHECK_EQ_INT(stc_remote_cache_open(url, &options, &first, NULL), STC_OK);
  STC_CHECK_EQ_INT(stc_remote_cache_open(url, &options, &second, NULL),
                   STC_OK);
  char *data = NULL;
  size_t size = 0;
  bool granted = false;
  STC_CHECK_EQ_INT(
      stc_remote_cache_get(first, STC_REMOTE_RECORD, digest_a, &data, &size),
      STC_ERR_NOT_FOUND);
  stc_remote_cache_claim(first, digest_a, &granted);
  STC_CHECK(granted);
  stc_remote_cache_claim(second, digest_a, &granted);
  STC_CHECK(!granted);
  /* The second now knows the lease is held: no round trip until poll_ms. */
  unsigned before = atomic_load(&fake->commands);
  STC_CHECK_EQ_INT(
      stc_remote_cache_get(second, STC_REMOTE_RECORD, digest_a, &data, &size),
      STC_ERR_NOT_FOUND);
  stc_remote_cache_claim(second, digest_a, &granted);
  STC_CHECK(!granted);
  STC_CHECK_EQ_U64(atomic_load(&fake->commands), before);
  /* The holder stores its record; that gives the lease back. */
  STC_CHECK_EQ_INT(stc_remote_cache_put(first, STC_REMOTE_RECORD, digest_a,
                                        "rec\0ord", 7, 60000),
                   STC_OK);
  STC_CHECK_EQ_U64(fake_count(fake, "stc:v1:lease:"), 0);
  STC_CHECK_EQ_U64(fake_count(fake, "stc:v1:rec:"), 1);
  STC_CHECK_EQ_INT(
      stc_remote_cache_get(first, STC_REMOTE_RECORD, digest_a, &data, &size),
      STC_OK);
  STC_CHECK_EQ_U64(size, 7);
  STC_CHECK(memcmp(data, "rec\0ord", 7) == 0);
  free(data);
  /* A claim that wins the lease after the record arrived is refused. */
  stc_remote_options_init(&options);
  stc_remote_cache *third;
  STC_CHECK_EQ_INT(stc_remote_cache_open(url, &options, &third, NULL), STC_OK);
  stc_remote_cache_claim(third, digest_a, &granted);
  STC_CHECK(!granted);
  STC_CHECK_EQ_U64(fake_count(fake, "stc:v1:lease:"), 0);
  STC_CHECK_EQ_INT(stc_remote_cache_delete(third, STC_REMOTE_RECORD, digest_a),
                   STC_OK);
  STC_CHECK_EQ_U64(fake_count(fake, "stc:v1:rec:"), 0);
  STC_CHECK(!stc_remote_cache_last_fault(first, (char[8]){0}, 8, NULL));
  stc_remote_cache_close(first);
  stc_remote_cache_close(second);
  stc_remote_cache_close(third);
  fake_stop(fake);
}

/* ---- the tuner with a remote tier ------------------------------------------ */

/* Two tuners' cache directories, a and b, under a fresh root (a mkdtemp
 * template, rewritten). */
static bool fleet_dirs(char *root, char dir_a[128], char dir_b[128]) {
  if (!mkdtemp(root))
    return false;
  snprintf(dir_a, 128, "%s/a", root);
  snprintf(dir_b, 128, "%s/b", root);
  return true;
}

/* What the fleet tests tune: "fast" wins unless it computes wrong. */
static const stc_candidate fleet_candidates[2] = {
    {"reference", NULL, true, 0, true, NULL},
    {"fast", NULL, true, 0, true, NULL}};
static const stc_problem fleet_problem = {STC_SCOPE_OPERATOR, "op", "cpu:test",
                                          "w", NULL, true};

typedef struct fleet_runner {
  const char *bad;        /* a candidate whose result is wrong, or NULL */
  const stc_candidate *candidates;
  stc_tuner *other;       /* selected from another thread mid-tune */
  const stc_problem *problem;
  stc_decision_source other_source;
  bool asked_other;
} fleet_runner;

static stc_status fleet_validate(void *user, size_t reference,
                                 size_t candidate,
                                 const stc_tolerance *tolerance,
                                 stc_validation *outcome, char *message,
                                 size_t message_size) {
  (void)reference, (void)tolerance, (void)message, (void)message_size;
  fleet_runner *r = user;
  *outcome = STC_VALIDATION_PASSED;
  if (r->bad && strcmp(r->candidates[candidate].name, r->bad) == 0)
    return STC_ERR_REJECTED;
  return STC_OK;
}

static stc_status fleet_plain_validate(void *user, size_t reference,
                                       size_t candidate,
                                       const stc_tolerance *tolerance,
                                       stc_validation *outcome, char *message,
                                       size_t message_size) {
  (void)user, (void)reference, (void)candidate, (void)tolerance;
  (void)message, (void)message_size;
  *outcome = STC_VALIDATION_PASSED;
  return STC_OK;
}

static stc_status fleet_plain_measure(void *user, size_t candidate,
                                      uint64_t *elapsed_ns, char *message,
                                      size_t message_size) {
  (void)user, (void)message, (void)message_size;
  *elapsed_ns = candidate == 1 ? 500 : 1000;
  return STC_OK;
}

typedef struct other_call {
  fleet_runner *runner;
} other_call;

static void *select_other(void *arg) {
  fleet_runner *r = arg;
  stc_trial_runner plain = {NULL, fleet_plain_validate, fleet_plain_measure, NULL};
  stc_decision decision;
  if (stc_tuner_select(r->other, r->problem, r->candidates, 2, 0, &plain,
                       &decision, NULL) == STC_OK)
    r->other_source = decision.source;
  stc_decision_clear(&decision);
  return NULL;
}

static stc_status fleet_measure(void *user, size_t candidate,
                                uint64_t *elapsed_ns, char *message,
                                size_t message_size) {
  (void)message, (void)message_size;
  fleet_runner *r = user;
  if (r->other && !r->asked_other) {
    /* Another "machine" asks for the same key while this one tunes. */
    r->asked_other = true;
    pthread_t thread;
    pthread_create(&thread, NULL, select_other, r);
    pthread_join(thread, NULL);
  }
  *elapsed_ns = candidate == 1 ? 500 : 1000;
  return STC_OK;
}

static int remove_entry(const char *path, const struct stat *st, int flag,
                        struct FTW *ftw) {
  (void)st, (void)flag, (void)ftw;
  return remove(path);
}

static stc_tuner *fleet_tuner(const char *directory, const char *url,
                              uint32_t poll_ms) {
  stc_tuner_policy policy;
  stc_tuner_policy_init(&policy);
  policy.warmups = 1;
  policy.samples = 3;
  stc_tuner *tuner = NULL;
  if (stc_tuner_create(&policy, directory, &tuner, NULL) != STC_OK)
    return NULL;
  stc_remote_options options;
  stc_remote_options_init(&options);
  options.poll_ms = poll_ms;
  stc_remote_cache *remote = NULL;
  if (stc_remote_cache_open(url, &options, &remote, NULL) != STC_OK ||
      !stc_tuner_set_remote(tuner, remote)) {
    stc_tuner_destroy(tuner);
    return NULL;
  }
  return tuner;
}

/* The object kind: its own namespace ("stc:v1:obj:", never a record), its
 * own size bound, no lease; an object stored sealed under one fleet key is
 * fetched back byte for byte under it and refused under another. */
STC_TEST(remote_objects_namespace_bound_and_authentication) {
  SKIP_WITHOUT_HIREDIS();
  fake_redis *fake = fake_start();
  STC_CHECK(fake != NULL);
  char url[64];
  fake_url(fake, url);
  stc_remote_cache *remote;
  STC_CHECK_EQ_INT(stc_remote_cache_open(url, NULL, &remote, NULL), STC_OK);
  /* Bounds are checked before the bytes are read. */
  STC_CHECK_EQ_INT(stc_remote_cache_put(remote, STC_REMOTE_RECORD, digest_a,
                                        "x", STC_REMOTE_MAX_RECORD_VALUE + 1,
                                        1000),
                   STC_ERR_INVALID);
  STC_CHECK_EQ_INT(stc_remote_cache_put(remote, STC_REMOTE_OBJECT, digest_a,
                                        "x", STC_REMOTE_MAX_OBJECT_VALUE + 1,
                                        1000),
                   STC_ERR_INVALID);
  STC_CHECK_EQ_INT(stc_remote_cache_put(remote, (stc_remote_kind)7, digest_a,
                                        "x", 1, 1000),
                   STC_ERR_INVALID);

  stc_fleet_key key = {.size = 32}, other = {.size = 32};
  for (int i = 0; i < 32; i++) {
    key.bytes[i] = (uint8_t)(i + 1);
    other.bytes[i] = (uint8_t)(i + 2);
  }
  char object[3000];
  for (size_t i = 0; i < sizeof object; i++)
    object[i] = (char)(i * 11);
  const int64_t now = 1700000000;
  stc_object_entry entry = {.key = "object key\nopt 2\n",
                            .created = now - 10,
                            .meta = "meta",
                            .meta_size = 4,
                            .object = object,
                            .object_size = sizeof object};
  STC_CHECK_EQ_INT(stc_object_remote_store(remote, &key, &entry, now, 3600),
                   STC_OK);
  STC_CHECK_EQ_U64(fake_count(fake, "stc:v1:obj:"), 1);
  STC_CHECK_EQ_U64(fake_count(fake, "stc:v1:rec:"), 0);
  STC_CHECK_EQ_U64(fake_count(fake, "stc:v1:lease:"), 0);
  /* The same digest as a record: another namespace, a miss. */
  char digest[65];
  stc_sha256_hex(entry.key, strlen(entry.key), digest);
  char *data = NULL;
  size_t size = 0;
  STC_CHECK_EQ_INT(
      stc_remote_cache_get(remote, STC_REMOTE_RECORD, digest, &data, &size),
      STC_ERR_NOT_FOUND);

  stc_object_entry out;
  const char *problem = "unset";
  STC_CHECK_EQ_INT(stc_object_remote_fetch(remote, &key, entry.key, now, 3600,
                                           &out, &problem),
                   STC_OK);
  STC_CHECK_STR_EQ(out.key, entry.key);
  STC_CHECK_EQ_U64((uint64_t)out.created, (uint64_t)(now - 10));
  STC_CHECK_EQ_U64(out.object_size, sizeof object);
  STC_CHECK(memcmp(out.object, object, sizeof object) == 0);
  STC_CHECK_EQ_U64(out.meta_size, 4);
  stc_object_entry_clear(&out);
  /* Another fleet key: refused, with the reason. */
  STC_CHECK_EQ_INT(stc_object_remote_fetch(remote, &other, entry.key, now,
                                           3600, &out, &problem),
                   STC_ERR_NOT_FOUND);
  STC_CHECK_CONTAINS(problem, "fails authentication");
  /* Stale for this reader's time-to-live: a quiet miss. */
  problem = "unset";
  STC_CHECK_EQ_INT(stc_object_remote_fetch(remote, &key, entry.key, now, 5,
                                           &out, &problem),
                   STC_ERR_NOT_FOUND);
  STC_CHECK(problem == NULL);
  /* An entry already stale is not stored. */
  STC_CHECK_EQ_INT(stc_object_remote_store(remote, &key, &entry, now, 10),
                   STC_ERR_INVALID);
  /* A key never stored: a quiet miss. */
  STC_CHECK_EQ_INT(stc_object_remote_fetch(remote, &key, "absent", now, 3600,
                                           &out, &problem),
                   STC_ERR_NOT_FOUND);
  STC_CHECK(problem == NULL);
  STC_CHECK_EQ_INT(stc_remote_cache_delete(remote, STC_REMOTE_OBJECT, digest),
                   STC_OK);
  STC_CHECK_EQ_U64(fake_count(fake, "stc:v1:obj:"), 0);
  STC_CHECK(!stc_remote_cache_last_fault(remote, (char[8]){0}, 8, NULL));
  stc_remote_cache_close(remote);
  fake_stop(fake);
}

STC_TEST_THREADED(remote_two_tuners_tune_a_key_once) {
  SKIP_WITHOUT_HIREDIS();
  fake_redis *fake = fake_start();
  STC_CHECK(fake != NULL);
  char url[64], root[] = "/tmp/stc-remote-test.XXXXXX";
  fake_url(fake, url);
  char dir_a[128], dir_b[128];
  STC_CHECK(fleet_dirs(root, dir_a, dir_b));
  /* B re-polls at once (poll_ms 0) so that its second call finds A's
   * record; its first call comes while A holds the lease. */
  stc_tuner *a = fleet_tuner(dir_a, url, 250);
  stc_tuner *b = fleet_tuner(dir_b, url, 0);
  STC_CHECK(a && b);
  const stc_candidate *candidates = fleet_candidates;
  stc_problem problem = fleet_problem;
  fleet_runner runner = {NULL, candidates, b, &problem, STC_SOURCE_TUNED,
                         false};
  stc_trial_runner trials = {&runner, fleet_validate, fleet_measure, NULL};
  stc_decision decision;
  STC_CHECK_EQ_INT(stc_tuner_select(a, &problem, candidates, 2, 0, &trials,
                                    &decision, NULL),
                   STC_OK);
  STC_CHECK_EQ_INT(decision.source, STC_SOURCE_TUNED);
  STC_CHECK_STR_EQ(decision.name, "fast");
  stc_decision_clear(&decision);
  STC_CHECK(runner.asked_other);
  STC_CHECK_EQ_INT(runner.other_source, STC_SOURCE_BUSY);
  STC_CHECK_EQ_U64(fake_count(fake, "stc:v1:rec:"), 1);
  STC_CHECK_EQ_U64(fake_count(fake, "stc:v1:lease:"), 0);

  /* B's next call takes A's record from the fake, validates it once, and
   * keeps it on its own disk. */
  stc_trial_runner plain = {NULL, fleet_plain_validate, fleet_plain_measure, NULL};
  STC_CHECK_EQ_INT(stc_tuner_select(b, &problem, candidates, 2, 0, &plain,
                                    &decision, NULL),
                   STC_OK);
  STC_CHECK_EQ_INT(decision.source, STC_SOURCE_DISK_CACHE);
  STC_CHECK_STR_EQ(decision.name, "fast");
  stc_decision_clear(&decision);
  stc_tuner_stats stats;
  stc_tuner_stats_get(b, &stats);
  STC_CHECK_EQ_U64(stats.tunes, 0);
  stc_tuner_stats_get(a, &stats);
  STC_CHECK_EQ_U64(stats.tunes, 1);
  char why[256];
  STC_CHECK(!stc_tuner_remote_fault(a, why, sizeof why));
  STC_CHECK(!stc_tuner_remote_fault(b, why, sizeof why));
  stc_tuner_destroy(a);
  stc_tuner_destroy(b);

  /* A third tuner on b's disk finds it there, with the fake gone. */
  fake_stop(fake);
  stc_tuner *c = fleet_tuner(dir_b, url, 0);
  STC_CHECK(c != NULL);
  STC_CHECK_EQ_INT(stc_tuner_select(c, &problem, candidates, 2, 0, &plain,
                                    &decision, NULL),
                   STC_OK);
  STC_CHECK_EQ_INT(decision.source, STC_SOURCE_DISK_CACHE);
  stc_decision_clear(&decision);
  stc_tuner_destroy(c);
  nftw(root, remove_entry, 8, FTW_DEPTH | FTW_PHYS);
}

STC_TEST(remote_record_with_wrong_winner_is_removed) {
  SKIP_WITHOUT_HIREDIS();
  fake_redis *fake = fake_start();
  STC_CHECK(fake != NULL);
  char url[64], root[] = "/tmp/stc-remote-test.XXXXXX";
  fake_url(fake, url);
  char dir_a[128], dir_b[128];
  STC_CHECK(fleet_dirs(root, dir_a, dir_b));
  const stc_candidate *candidates = fleet_candidates;
  stc_problem problem = fleet_problem;
  /* A tunes on a machine where "fast" is right, and shares the record. */
  stc_tuner *a = fleet_tuner(dir_a, url, 0);
  STC_CHECK(a != NULL);
  fleet_runner good = {NULL, candidates, NULL, &problem, STC_SOURCE_TUNED,
                       false};
  stc_trial_runner trials = {&good, fleet_validate, fleet_measure, NULL};
  stc_decision decision;
  STC_CHECK_EQ_INT(stc_tuner_select(a, &problem, candidates, 2, 0, &trials,
                                    &decision, NULL),
                   STC_OK);
  STC_CHECK_STR_EQ(decision.name, "fast");
  stc_decision_clear(&decision);
  stc_tuner_destroy(a);
  STC_CHECK_EQ_U64(fake_count(fake, "stc:v1:rec:"), 1);
  /* On B, "fast" computes a wrong result: the shared record is validated
   * once, rejected and removed from the fake, and B tunes for itself. */
  stc_tuner *b = fleet_tuner(dir_b, url, 0);
  STC_CHECK(b != NULL);
  fleet_runner bad = {"fast", candidates, NULL, &problem, STC_SOURCE_TUNED,
                      false};
  trials.user = &bad;
  unsigned before = atomic_load(&fake->commands);
  STC_CHECK_EQ_INT(stc_tuner_select(b, &problem, candidates, 2, 0, &trials,
                                    &decision, NULL),
                   STC_OK);
  STC_CHECK_EQ_INT(decision.source, STC_SOURCE_TUNED);
  STC_CHECK_STR_EQ(decision.name, "reference");
  stc_decision_clear(&decision);
  STC_CHECK(atomic_load(&fake->commands) > before);
  /* What the fake holds now is B's decision, not the rejected one. */
  STC_CHECK_EQ_U64(fake_count(fake, "stc:v1:rec:"), 1);
  pthread_mutex_lock(&fake->lock);
  bool names_fast = false;
  for (int i = 0; i < FAKE_KEYS; i++)
    if (fake->keys[i] && strncmp(fake->keys[i], "stc:v1:rec:", 11) == 0)
      names_fast = strstr(fake->values[i], "\nwinner 4\nfast\n") != NULL;
  pthread_mutex_unlock(&fake->lock);
  STC_CHECK(!names_fast);
  stc_tuner_destroy(b);
  fake_stop(fake);
  nftw(root, remove_entry, 8, FTW_DEPTH | FTW_PHYS);
}
