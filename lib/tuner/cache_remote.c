/* The tuner cache's Redis tier (include/stc/tuner_remote.h, README "Fleet
 * cache (Redis)").
 *
 * In: a redis:// or unix: url, opaque bytes of a kind (tuning records;
 * stc-run's compiled objects, authenticated by stc/object_remote.h) keyed by
 * the SHA-256 hex digest of their key. Out: the same bytes read back, leases
 * (records only), and the text of the latest fault.
 *
 * hiredis is loaded with dlopen the first time the tier is used, so that
 * nothing links against it: the few entry points and the two structs that
 * are read (redisContext's leading err/errstr, redisReply) are declared here
 * as hiredis 0.14 lays them out, and only that ABI's soname is opened by
 * default. Every command runs blocking on one shared connection under
 * socket timeouts (SO_RCVTIMEO/SO_SNDTIMEO set by redisSetTimeout), with
 * SIGPIPE blocked in the calling thread, so a server that died or hangs
 * costs at most timeout_ms, once: a transport failure closes the connection
 * and the tier stays quiet for backoff_ms.
 *
 * Leases: "SET lease token NX PX lease_ms". The holder tunes; its put gives
 * the lease back (a Lua compare-and-delete, so an expired lease re-taken by
 * another process is not removed). A process that finds the lease held
 * remembers that for poll_ms (a direct-mapped table of digests), so its
 * later calls cost no round trip until then. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "stc/hash.h"
#include "stc/tuner_remote.h"

#include <dlfcn.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#define STC_REMOTE_DEFAULT_LIBRARY "libhiredis.so.0.14"
#define STC_REMOTE_PREFIX "stc:v1:"
#define STC_REMOTE_POLL_SLOTS 256

/* ---- hiredis 0.14, as much as is used ----------------------------------- */

enum {
  HIREDIS_REPLY_STRING = 1,
  HIREDIS_REPLY_ARRAY = 2,
  HIREDIS_REPLY_INTEGER = 3,
  HIREDIS_REPLY_NIL = 4,
  HIREDIS_REPLY_STATUS = 5,
  HIREDIS_REPLY_ERROR = 6,
};

typedef struct hiredis_reply {
  int type;
  long long integer;
  size_t len;
  char *str;
  size_t elements;
  struct hiredis_reply **element;
} hiredis_reply;

/* Only the leading fields; the rest is never touched. */
typedef struct hiredis_context {
  int err;
  char errstr[128];
} hiredis_context;

typedef struct hiredis_api {
  void *library;
  hiredis_context *(*connect_tcp)(const char *host, int port,
                                  const struct timeval tv);
  hiredis_context *(*connect_unix)(const char *path, const struct timeval tv);
  int (*set_timeout)(hiredis_context *context, const struct timeval tv);
  void *(*command_argv)(hiredis_context *context, int argc, const char **argv,
                        const size_t *lengths);
  void (*free_reply)(void *reply);
  void (*free_context)(hiredis_context *context);
} hiredis_api;

/* ---- the handle --------------------------------------------------------- */

typedef struct poll_slot {
  uint64_t tag;     /* first 16 hex digits of the digest, 0: empty */
  int64_t until_ms; /* another holds the lease: do not look before this */
} poll_slot;

struct stc_remote_cache {
  char *url;
  char *host; /* NULL for a unix socket */
  char *path; /* the socket, NULL for tcp */
  int port;
  unsigned db;
  stc_remote_options options;
  char *library_name;
  char token[96]; /* this process's lease value */

  pthread_mutex_t connection_lock; /* taken with trylock by the tuner */
  hiredis_api api;                 /* loaded on first use */
  bool api_loaded;
  hiredis_context *context; /* NULL: not connected */

  pthread_mutex_t state_lock; /* guards what follows; never held long */
  int64_t quiet_until_ms;     /* backing off until then */
  poll_slot polls[STC_REMOTE_POLL_SLOTS];
  char last_fault[512];
  uint64_t faults;
};

static int64_t monotonic_ms(void) {
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return (int64_t)now.tv_sec * 1000 + now.tv_nsec / 1000000;
}

/* ---- options ------------------------------------------------------------ */

void stc_remote_options_init(stc_remote_options *options) {
  options->timeout_ms = 100;
  options->backoff_ms = 30000;
  options->lease_ms = 30000;
  options->poll_ms = 250;
  options->library = NULL;
}

static bool parse_ms(const char *text, uint32_t minimum, uint32_t *out) {
  if (!text[0] || text[0] == '-' || text[0] == '+')
    return false;
  char *end;
  errno = 0;
  unsigned long long value = strtoull(text, &end, 10);
  if (errno || *end || value < minimum || value > 86400000ull)
    return false;
  *out = (uint32_t)value;
  return true;
}

stc_status stc_remote_options_from_environment(stc_remote_options *options,
                                               stc_error *err) {
  static const struct {
    const char *name;
    size_t offset;
    uint32_t minimum;
  } fields[] = {
      {"STC_CACHE_REMOTE_TIMEOUT_MS", offsetof(stc_remote_options, timeout_ms),
       1},
      {"STC_CACHE_REMOTE_BACKOFF_MS", offsetof(stc_remote_options, backoff_ms),
       0},
      {"STC_CACHE_REMOTE_LEASE_MS", offsetof(stc_remote_options, lease_ms), 1},
      {"STC_CACHE_REMOTE_POLL_MS", offsetof(stc_remote_options, poll_ms), 0},
  };
  stc_status status = STC_OK;
  for (size_t i = 0; i < sizeof fields / sizeof *fields; i++) {
    const char *text = getenv(fields[i].name);
    uint32_t *field = (uint32_t *)((char *)options + fields[i].offset);
    if (text && !parse_ms(text, fields[i].minimum, field) &&
        status == STC_OK) {
      stc_error_set(err, NULL, 0, 0,
                    "%s='%.60s' is not a number of milliseconds in %u..86400000",
                    fields[i].name, text, fields[i].minimum);
      status = STC_ERR_INVALID;
    }
  }
  const char *library = getenv("STC_CACHE_REMOTE_LIBRARY");
  if (library && library[0])
    options->library = library;
  return status;
}

/* ---- url ---------------------------------------------------------------- */

static bool parse_db(const char *text, unsigned *out) {
  if (!text[0] || (text[0] == '0' && text[1]))
    return false;
  unsigned value = 0;
  for (const char *c = text; *c; c++) {
    if (*c < '0' || *c > '9' || value > 100000)
      return false;
    value = value * 10 + (unsigned)(*c - '0');
  }
  *out = value;
  return value <= 100000;
}

static stc_status parse_url(stc_remote_cache *r, const char *url,
                            stc_error *err) {
  if (strncmp(url, "unix:", 5) == 0) {
    const char *path = url + 5;
    while (path[0] == '/' && path[1] == '/') /* unix:///run/x.sock */
      path++;
    const char *query = strchr(path, '?');
    size_t length = query ? (size_t)(query - path) : strlen(path);
    if (length == 0 || path[0] != '/') {
      stc_error_set(err, NULL, 0, 0,
                    "remote cache '%.200s': a unix: url needs an absolute "
                    "socket path (unix:/run/redis.sock[?db=N])",
                    url);
      return STC_ERR_INVALID;
    }
    if (query && (strncmp(query, "?db=", 4) != 0 || !parse_db(query + 4, &r->db))) {
      stc_error_set(err, NULL, 0, 0,
                    "remote cache '%.200s': the only query is ?db=N", url);
      return STC_ERR_INVALID;
    }
    r->path = strndup(path, length);
    return r->path ? STC_OK : STC_ERR_NOMEM;
  }
  if (strncmp(url, "redis://", 8) != 0) {
    stc_error_set(err, NULL, 0, 0,
                  "remote cache '%.200s': expected redis://HOST[:PORT][/DB] "
                  "or unix:/PATH[?db=N]",
                  url);
    return STC_ERR_INVALID;
  }
  const char *host = url + 8, *end;
  if (strchr(host, '@')) {
    stc_error_set(err, NULL, 0, 0,
                  "remote cache '%.200s': credentials in the url are not "
                  "supported",
                  url);
    return STC_ERR_INVALID;
  }
  size_t host_length;
  if (host[0] == '[') {
    end = strchr(host, ']');
    if (!end) {
      stc_error_set(err, NULL, 0, 0, "remote cache '%.200s': unclosed '['",
                    url);
      return STC_ERR_INVALID;
    }
    host++;
    host_length = (size_t)(end - host);
    end++;
  } else {
    end = host + strcspn(host, ":/");
    host_length = (size_t)(end - host);
  }
  r->port = 6379;
  if (*end == ':') {
    char *after;
    errno = 0;
    long port = strtol(end + 1, &after, 10);
    if (errno || after == end + 1 || port < 1 || port > 65535 ||
        (*after && *after != '/')) {
      stc_error_set(err, NULL, 0, 0, "remote cache '%.200s': bad port", url);
      return STC_ERR_INVALID;
    }
    r->port = (int)port;
    end = after;
  }
  if (*end == '/' && end[1] && !parse_db(end + 1, &r->db)) {
    stc_error_set(err, NULL, 0, 0,
                  "remote cache '%.200s': the path must be a database number",
                  url);
    return STC_ERR_INVALID;
  }
  if (*end && *end != '/') {
    stc_error_set(err, NULL, 0, 0, "remote cache '%.200s': malformed", url);
    return STC_ERR_INVALID;
  }
  if (host_length == 0) {
    stc_error_set(err, NULL, 0, 0, "remote cache '%.200s': no host", url);
    return STC_ERR_INVALID;
  }
  r->host = strndup(host, host_length);
  return r->host ? STC_OK : STC_ERR_NOMEM;
}

/* ---- open / close ------------------------------------------------------- */

stc_status stc_remote_cache_open(const char *url,
                                 const stc_remote_options *options,
                                 stc_remote_cache **out, stc_error *err) {
  if (!out)
    return STC_ERR_INVALID;
  *out = NULL;
  if (!url || !url[0]) {
    stc_error_set(err, NULL, 0, 0, "remote cache: empty url");
    return STC_ERR_INVALID;
  }
  stc_remote_cache *r = calloc(1, sizeof *r);
  if (!r)
    return STC_ERR_NOMEM;
  if (options)
    r->options = *options;
  else
    stc_remote_options_init(&r->options);
  r->url = strdup(url);
  r->library_name = strdup(r->options.library ? r->options.library
                                              : STC_REMOTE_DEFAULT_LIBRARY);
  r->options.library = r->library_name;
  stc_status status =
      r->url && r->library_name ? parse_url(r, url, err) : STC_ERR_NOMEM;
  if (status == STC_OK && (pthread_mutex_init(&r->connection_lock, NULL) ||
                           pthread_mutex_init(&r->state_lock, NULL)))
    status = STC_ERR_NOMEM;
  if (status != STC_OK) {
    free(r->url);
    free(r->host);
    free(r->path);
    free(r->library_name);
    free(r);
    return status;
  }
  char host[64] = "";
  gethostname(host, sizeof host - 1);
  struct timespec now;
  clock_gettime(CLOCK_REALTIME, &now);
  snprintf(r->token, sizeof r->token, "%.63s:%ld:%lx", host, (long)getpid(),
           (unsigned long)(now.tv_nsec ^ ((unsigned long)now.tv_sec << 20) ^
                           (unsigned long)(uintptr_t)r));
  *out = r;
  return STC_OK;
}

void stc_remote_cache_close(stc_remote_cache *remote) {
  if (!remote)
    return;
  if (remote->context)
    remote->api.free_context(remote->context);
  if (remote->api.library)
    dlclose(remote->api.library);
  pthread_mutex_destroy(&remote->connection_lock);
  pthread_mutex_destroy(&remote->state_lock);
  free(remote->url);
  free(remote->host);
  free(remote->path);
  free(remote->library_name);
  free(remote);
}

const char *stc_remote_cache_url(const stc_remote_cache *remote) {
  return remote ? remote->url : NULL;
}

/* ---- faults ------------------------------------------------------------- */

/* Keeps the fault text; with quiet, also starts a backoff. */
static void note_fault(stc_remote_cache *r, bool quiet, const char *format,
                       ...) __attribute__((format(printf, 3, 4)));
static void note_fault(stc_remote_cache *r, bool quiet, const char *format,
                       ...) {
  char text[sizeof r->last_fault - 220];
  va_list ap;
  va_start(ap, format);
  vsnprintf(text, sizeof text, format, ap);
  va_end(ap);
  pthread_mutex_lock(&r->state_lock);
  snprintf(r->last_fault, sizeof r->last_fault, "%.200s: %s", r->url, text);
  r->faults++;
  if (quiet)
    r->quiet_until_ms = monotonic_ms() + (int64_t)r->options.backoff_ms;
  pthread_mutex_unlock(&r->state_lock);
}

bool stc_remote_cache_last_fault(stc_remote_cache *remote, char *buffer,
                                 size_t size, uint64_t *count) {
  if (count)
    *count = 0;
  if (!remote || !buffer || size == 0)
    return false;
  pthread_mutex_lock(&remote->state_lock);
  bool have = remote->last_fault[0] != 0;
  snprintf(buffer, size, "%s", remote->last_fault);
  if (count)
    *count = remote->faults;
  pthread_mutex_unlock(&remote->state_lock);
  return have;
}

/* ---- connection --------------------------------------------------------- */

static bool load_api(stc_remote_cache *r) {
  if (r->api_loaded)
    return r->api.library != NULL;
  r->api_loaded = true;
  void *library = dlopen(r->library_name, RTLD_NOW | RTLD_LOCAL);
  if (!library) {
    const char *why = dlerror();
    note_fault(r, false,
               "cannot load %.100s (%.200s); install libhiredis0.14 to use "
               "the remote cache",
               r->library_name, why ? why : "unknown error");
    return false;
  }
  hiredis_api api = {library,
                     (void *)dlsym(library, "redisConnectWithTimeout"),
                     (void *)dlsym(library, "redisConnectUnixWithTimeout"),
                     (void *)dlsym(library, "redisSetTimeout"),
                     dlsym(library, "redisCommandArgv"),
                     dlsym(library, "freeReplyObject"),
                     (void *)dlsym(library, "redisFree")};
  if (!api.connect_tcp || !api.connect_unix || !api.set_timeout ||
      !api.command_argv || !api.free_reply || !api.free_context) {
    note_fault(r, false, "%.100s lacks the hiredis 0.14 functions",
               r->library_name);
    dlclose(library);
    return false;
  }
  r->api = api;
  return true;
}

static struct timeval timeout_of(const stc_remote_cache *r) {
  struct timeval tv = {(time_t)(r->options.timeout_ms / 1000),
                       (suseconds_t)(r->options.timeout_ms % 1000) * 1000};
  return tv;
}

/* SIGPIPE from writing to a server that went away would kill the process:
 * blocked in this thread around every command, and a pending one consumed
 * (unless the caller had blocked it already: then it is theirs). */
typedef struct pipe_guard {
  sigset_t old_mask;
  bool blocked;
} pipe_guard;

static void pipe_guard_begin(pipe_guard *guard) {
  sigset_t pipe_signal;
  sigemptyset(&pipe_signal);
  sigaddset(&pipe_signal, SIGPIPE);
  guard->blocked =
      pthread_sigmask(SIG_BLOCK, &pipe_signal, &guard->old_mask) == 0;
}

static void pipe_guard_end(pipe_guard *guard) {
  if (!guard->blocked)
    return;
  sigset_t pipe_signal, pending;
  sigemptyset(&pipe_signal);
  sigaddset(&pipe_signal, SIGPIPE);
  if (!sigismember(&guard->old_mask, SIGPIPE) && sigpending(&pending) == 0 &&
      sigismember(&pending, SIGPIPE)) {
    struct timespec no_wait = {0, 0};
    while (sigtimedwait(&pipe_signal, NULL, &no_wait) == SIGPIPE)
      ;
  }
  pthread_sigmask(SIG_SETMASK, &guard->old_mask, NULL);
}

static void disconnect(stc_remote_cache *r) {
  if (r->context)
    r->api.free_context(r->context);
  r->context = NULL;
}

/* A transport failure: say why, drop the connection, back off. */
static void transport_failure(stc_remote_cache *r, const char *what) {
  const char *why = r->context && r->context->errstr[0]
                        ? r->context->errstr
                        : "connection lost";
  if (strstr(why, "temporarily unavailable") || strstr(why, "timed out"))
    note_fault(r, true, "%s: no reply within %u ms", what,
               r->options.timeout_ms);
  else
    note_fault(r, true, "%s: %.200s", what, why);
  disconnect(r);
}

static hiredis_reply *command(stc_remote_cache *r, const char *what, int argc,
                              const char **argv, const size_t *lengths);

static bool connect_now(stc_remote_cache *r) {
  if (!load_api(r))
    return false;
  struct timeval tv = timeout_of(r);
  pipe_guard guard;
  pipe_guard_begin(&guard);
  r->context = r->path ? r->api.connect_unix(r->path, tv)
                       : r->api.connect_tcp(r->host, r->port, tv);
  if (r->context && !r->context->err &&
      r->api.set_timeout(r->context, tv) != 0 && !r->context->err)
    r->context->err = 1;
  pipe_guard_end(&guard);
  if (!r->context || r->context->err) {
    transport_failure(r, "cannot connect");
    return false;
  }
  if (r->db) {
    char db[16];
    snprintf(db, sizeof db, "%u", r->db);
    const char *argv[] = {"SELECT", db};
    size_t lengths[] = {6, strlen(db)};
    hiredis_reply *reply = command(r, "SELECT", 2, argv, lengths);
    if (!reply)
      return false;
    bool ok = reply->type == HIREDIS_REPLY_STATUS;
    if (!ok)
      note_fault(r, true, "SELECT %u: %.200s", r->db,
                 reply->type == HIREDIS_REPLY_ERROR ? reply->str
                                                    : "unexpected reply");
    r->api.free_reply(reply);
    if (!ok) {
      disconnect(r);
      return false;
    }
  }
  return true;
}

/* Runs one command on the connection (connection_lock held). NULL after a
 * transport failure (noted, connection dropped, backing off). An error
 * reply is returned to the caller. */
static hiredis_reply *command(stc_remote_cache *r, const char *what, int argc,
                              const char **argv, const size_t *lengths) {
  pipe_guard guard;
  pipe_guard_begin(&guard);
  hiredis_reply *reply = r->api.command_argv(r->context, argc, argv, lengths);
  pipe_guard_end(&guard);
  if (!reply)
    transport_failure(r, what);
  return reply;
}

/* A reply of a shape the command never gives: the peer is not a Redis
 * server we understand. Treated as a transport failure. */
static void unexpected_reply(stc_remote_cache *r, const char *what,
                             hiredis_reply *reply) {
  if (reply->type == HIREDIS_REPLY_ERROR)
    note_fault(r, false, "%s: %.200s", what, reply->str ? reply->str : "");
  else
    note_fault(r, true, "%s: unexpected reply (type %d)", what, reply->type);
  if (reply->type != HIREDIS_REPLY_ERROR)
    disconnect(r);
  r->api.free_reply(reply);
}

typedef enum acquire_result { ACQUIRED, BUSY, QUIET } acquire_result;

/* Takes the connection (connecting when needed). wait: block for the lock
 * (tools) instead of giving up at once (the tuner). */
static acquire_result acquire(stc_remote_cache *r, bool wait) {
  if (wait ? pthread_mutex_lock(&r->connection_lock)
           : pthread_mutex_trylock(&r->connection_lock))
    return BUSY;
  if (!r->context) {
    pthread_mutex_lock(&r->state_lock);
    bool quiet = monotonic_ms() < r->quiet_until_ms ||
                 (r->api_loaded && !r->api.library);
    pthread_mutex_unlock(&r->state_lock);
    if (quiet || !connect_now(r)) {
      pthread_mutex_unlock(&r->connection_lock);
      return QUIET;
    }
  }
  return ACQUIRED;
}

static void release(stc_remote_cache *r) {
  pthread_mutex_unlock(&r->connection_lock);
}

/* ---- leases seen ---------------------------------------------------------- */

static uint64_t digest_tag(const char *digest) {
  uint64_t tag = 0;
  for (int i = 0; i < 16 && digest[i]; i++) {
    char c = digest[i];
    tag = tag << 4 | (uint64_t)(c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10);
  }
  return tag ? tag : 1;
}

static bool lease_seen(stc_remote_cache *r, const char *digest) {
  uint64_t tag = digest_tag(digest);
  poll_slot *slot = &r->polls[tag % STC_REMOTE_POLL_SLOTS];
  pthread_mutex_lock(&r->state_lock);
  bool seen = slot->tag == tag && monotonic_ms() < slot->until_ms;
  pthread_mutex_unlock(&r->state_lock);
  return seen;
}

static void lease_mark(stc_remote_cache *r, const char *digest, bool held) {
  uint64_t tag = digest_tag(digest);
  poll_slot *slot = &r->polls[tag % STC_REMOTE_POLL_SLOTS];
  pthread_mutex_lock(&r->state_lock);
  if (held) {
    slot->tag = tag;
    slot->until_ms = monotonic_ms() + (int64_t)r->options.poll_ms;
  } else if (slot->tag == tag) {
    slot->tag = 0;
  }
  pthread_mutex_unlock(&r->state_lock);
}

/* ---- operations --------------------------------------------------------- */

static void key_of(char out[96], const char *kind, const char *digest) {
  snprintf(out, 96, STC_REMOTE_PREFIX "%s:%s", kind, digest);
}

static bool kind_ok(stc_remote_kind kind) {
  return kind == STC_REMOTE_RECORD || kind == STC_REMOTE_OBJECT;
}

static const char *kind_name(stc_remote_kind kind) {
  return kind == STC_REMOTE_OBJECT ? "obj" : "rec";
}

/* A stored value bigger than this is not ours (for records, the disk
 * cache's bound). */
static size_t kind_max_value(stc_remote_kind kind) {
  return kind == STC_REMOTE_OBJECT ? STC_REMOTE_MAX_OBJECT_VALUE
                                   : STC_REMOTE_MAX_RECORD_VALUE;
}

/* Sends "<verb> stc:v1:<kind>:<digest>" (GET, DEL: one key, nothing more). */
static hiredis_reply *key_command(stc_remote_cache *remote, const char *verb,
                                  stc_remote_kind kind, const char *digest) {
  char key[96];
  key_of(key, kind_name(kind), digest);
  const char *argv[] = {verb, key};
  size_t lengths[] = {strlen(verb), strlen(key)};
  return command(remote, verb, 2, argv, lengths);
}

stc_status stc_remote_cache_get(stc_remote_cache *remote, stc_remote_kind kind,
                                const char *digest, char **data, size_t *size) {
  if (!remote || !kind_ok(kind) || !stc_is_sha256_hex(digest) || !data ||
      !size)
    return STC_ERR_INVALID;
  bool record = kind == STC_REMOTE_RECORD;
  if (record && lease_seen(remote, digest))
    return STC_ERR_NOT_FOUND;
  if (acquire(remote, false) != ACQUIRED)
    return STC_ERR_UNAVAILABLE;
  hiredis_reply *reply = key_command(remote, "GET", kind, digest);
  stc_status status = STC_ERR_IO;
  if (reply && reply->type == HIREDIS_REPLY_NIL) {
    status = STC_ERR_NOT_FOUND;
  } else if (reply && reply->type == HIREDIS_REPLY_STRING) {
    /* Too big for its kind: a miss, like an oversized disk file. */
    status = STC_ERR_NOT_FOUND;
    char *copy =
        reply->len <= kind_max_value(kind) ? malloc(reply->len + 1) : NULL;
    if (copy) {
      memcpy(copy, reply->str, reply->len);
      copy[reply->len] = 0;
      *data = copy;
      *size = reply->len;
      status = STC_OK;
    }
  } else if (reply) {
    unexpected_reply(remote, "GET", reply);
    reply = NULL;
  }
  if (reply)
    remote->api.free_reply(reply);
  release(remote);
  if (status == STC_OK && record)
    lease_mark(remote, digest, false);
  return status;
}

/* Gives this process's lease on digest back, if it still holds it. */
static void give_back_lease(stc_remote_cache *r, const char *digest) {
  static const char script[] =
      "if redis.call('get', KEYS[1]) == ARGV[1] then "
      "return redis.call('del', KEYS[1]) end return 0";
  char key[96];
  key_of(key, "lease", digest);
  const char *argv[] = {"EVAL", script, "1", key, r->token};
  size_t lengths[] = {4, sizeof script - 1, 1, strlen(key), strlen(r->token)};
  hiredis_reply *reply = command(r, "EVAL", 5, argv, lengths);
  if (reply && reply->type != HIREDIS_REPLY_INTEGER)
    unexpected_reply(r, "EVAL (lease release)", reply);
  else if (reply)
    r->api.free_reply(reply);
}

stc_status stc_remote_cache_put(stc_remote_cache *remote, stc_remote_kind kind,
                                const char *digest, const char *data,
                                size_t size, uint64_t expire_ms) {
  if (!remote || !kind_ok(kind) || !stc_is_sha256_hex(digest) || !data ||
      !size || size > kind_max_value(kind) || !expire_ms)
    return STC_ERR_INVALID;
  if (acquire(remote, false) != ACQUIRED)
    return STC_ERR_UNAVAILABLE;
  char key[96], expire[32];
  key_of(key, kind_name(kind), digest);
  snprintf(expire, sizeof expire, "%" PRIu64, expire_ms);
  const char *argv[] = {"SET", key, data, "PX", expire};
  size_t lengths[] = {3, strlen(key), size, 2, strlen(expire)};
  hiredis_reply *reply = command(remote, "SET", 5, argv, lengths);
  stc_status status = STC_ERR_IO;
  if (reply && reply->type == HIREDIS_REPLY_STATUS) {
    remote->api.free_reply(reply);
    status = STC_OK;
  } else if (reply) {
    unexpected_reply(remote, "SET", reply); /* "OOM ...": a full server */
  }
  /* Also after a refused SET: others may tune now. */
  if (kind == STC_REMOTE_RECORD && remote->context)
    give_back_lease(remote, digest);
  release(remote);
  return status;
}

stc_status stc_remote_cache_delete(stc_remote_cache *remote,
                                   stc_remote_kind kind, const char *digest) {
  if (!remote || !kind_ok(kind) || !stc_is_sha256_hex(digest))
    return STC_ERR_INVALID;
  if (acquire(remote, false) != ACQUIRED)
    return STC_ERR_UNAVAILABLE;
  hiredis_reply *reply = key_command(remote, "DEL", kind, digest);
  stc_status status = STC_ERR_IO;
  if (reply && reply->type == HIREDIS_REPLY_INTEGER) {
    remote->api.free_reply(reply);
    status = STC_OK;
  } else if (reply) {
    unexpected_reply(remote, "DEL", reply);
  }
  release(remote);
  return status;
}

void stc_remote_cache_claim(stc_remote_cache *remote, const char *digest,
                            bool *granted) {
  *granted = true;
  if (!remote || !stc_is_sha256_hex(digest))
    return;
  if (lease_seen(remote, digest)) {
    *granted = false;
    return;
  }
  acquire_result got = acquire(remote, false);
  if (got != ACQUIRED) {
    /* Quiet: no fleet to coordinate with, tune here. Busy: ask again on
     * a later call rather than wait for the other thread. */
    *granted = got == QUIET;
    return;
  }
  char key[96], expire[32];
  key_of(key, "lease", digest);
  snprintf(expire, sizeof expire, "%" PRIu32, remote->options.lease_ms);
  const char *argv[] = {"SET", key, remote->token, "NX", "PX", expire};
  size_t lengths[] = {3, strlen(key), strlen(remote->token), 2, 2,
                      strlen(expire)};
  hiredis_reply *reply = command(remote, "SET NX (lease)", 6, argv, lengths);
  if (reply && reply->type == HIREDIS_REPLY_NIL) {
    remote->api.free_reply(reply);
    *granted = false;
    lease_mark(remote, digest, true);
  } else if (reply && reply->type == HIREDIS_REPLY_STATUS) {
    remote->api.free_reply(reply);
    /* The holder may have stored its record and given the lease back
     * between our GET and this SET: then there is nothing to tune. */
    char record[96];
    key_of(record, "rec", digest);
    const char *exists[] = {"EXISTS", record};
    size_t exists_lengths[] = {6, strlen(record)};
    reply = command(remote, "EXISTS", 2, exists, exists_lengths);
    if (reply && reply->type == HIREDIS_REPLY_INTEGER) {
      *granted = reply->integer == 0;
      remote->api.free_reply(reply);
      if (!*granted)
        give_back_lease(remote, digest);
    } else if (reply) {
      unexpected_reply(remote, "EXISTS", reply);
    }
  } else if (reply) {
    unexpected_reply(remote, "SET NX (lease)", reply);
  }
  release(remote);
}

stc_status stc_remote_cache_scan(stc_remote_cache *remote, stc_remote_kind kind,
                                 bool (*fn)(void *user,
                                            const stc_remote_entry *entry),
                                 void *user, stc_error *err) {
  if (!remote || !kind_ok(kind) || !fn)
    return STC_ERR_INVALID;
  if (acquire(remote, true) != ACQUIRED) {
    char why[512];
    stc_remote_cache_last_fault(remote, why, sizeof why, NULL);
    stc_error_set(err, NULL, 0, 0, "%s", why);
    return STC_ERR_IO;
  }
  char pattern[32];
  snprintf(pattern, sizeof pattern, STC_REMOTE_PREFIX "%s:*", kind_name(kind));
  const size_t prefix = strlen(pattern) - 1;
  char cursor[32] = "0";
  stc_status status = STC_OK;
  bool more = true;
  do {
    const char *argv[] = {"SCAN", cursor, "MATCH", pattern, "COUNT", "256"};
    size_t lengths[] = {4, strlen(cursor), 5, strlen(pattern), 5, 3};
    hiredis_reply *reply = command(remote, "SCAN", 6, argv, lengths);
    if (!reply) {
      status = STC_ERR_IO;
      break;
    }
    if (reply->type != HIREDIS_REPLY_ARRAY || reply->elements != 2 ||
        reply->element[0]->type != HIREDIS_REPLY_STRING ||
        reply->element[0]->len >= sizeof cursor ||
        reply->element[1]->type != HIREDIS_REPLY_ARRAY) {
      unexpected_reply(remote, "SCAN", reply);
      status = STC_ERR_IO;
      break;
    }
    memcpy(cursor, reply->element[0]->str, reply->element[0]->len);
    cursor[reply->element[0]->len] = 0;
    hiredis_reply *keys = reply->element[1];
    for (size_t i = 0; more && status == STC_OK && i < keys->elements; i++) {
      hiredis_reply *name = keys->element[i];
      if (name->type != HIREDIS_REPLY_STRING || name->len != prefix + 64)
        continue; /* not one of ours */
      char digest[65];
      memcpy(digest, name->str + prefix, 64);
      digest[64] = 0;
      if (!stc_is_sha256_hex(digest))
        continue;
      const char *get[] = {"GET", name->str};
      const char *pttl[] = {"PTTL", name->str};
      size_t get_lengths[] = {3, name->len}, pttl_lengths[] = {4, name->len};
      hiredis_reply *value = command(remote, "GET", 2, get, get_lengths);
      hiredis_reply *ttl =
          value ? command(remote, "PTTL", 2, pttl, pttl_lengths) : NULL;
      if (!value || !ttl) {
        if (value)
          remote->api.free_reply(value);
        status = STC_ERR_IO;
        break;
      }
      if (value->type == HIREDIS_REPLY_STRING &&
          ttl->type == HIREDIS_REPLY_INTEGER) {
        stc_remote_entry entry = {digest, value->str, value->len,
                                  ttl->integer};
        more = fn(user, &entry);
      }
      remote->api.free_reply(value);
      remote->api.free_reply(ttl);
    }
    remote->api.free_reply(reply);
  } while (more && status == STC_OK && strcmp(cursor, "0") != 0);
  release(remote);
  if (status != STC_OK) {
    char why[512];
    stc_remote_cache_last_fault(remote, why, sizeof why, NULL);
    stc_error_set(err, NULL, 0, 0, "%s", why);
  }
  return status;
}
