/* object_merge.c - a compile's partition objects merged into one by an
 * external ELF linker (object_merge.h).
 * In: the objects' bytes. Out: the merged object's bytes, or why not. */
#include "object_merge.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

#ifndef STC_RUN_DEFAULT_LINKER
#define STC_RUN_DEFAULT_LINKER ""
#endif

/* Enough for the partitions, the output and the linker's messages. */
#define MERGE_MAX_FILES 16

static const char *search_path(const char *name, char *buffer, size_t size) {
  const char *path = getenv("PATH");
  while (path && *path) {
    const char *end = strchr(path, ':');
    size_t length = end ? (size_t)(end - path) : strlen(path);
    /* An empty element would be the current directory: never that. */
    if (length && path[0] == '/' &&
        (size_t)snprintf(buffer, size, "%.*s/%s", (int)length, path, name) <
            size &&
        access(buffer, X_OK) == 0)
      return buffer;
    path = end ? end + 1 : NULL;
  }
  return NULL;
}

const char *stc_run_object_linker(void) {
  static char found[PATH_MAX];
  const char *setting = getenv("STC_RUN_LINKER");
  if (setting)
    return *setting && strcmp(setting, "none") != 0 ? setting : NULL;
  if (*STC_RUN_DEFAULT_LINKER && access(STC_RUN_DEFAULT_LINKER, X_OK) == 0)
    return STC_RUN_DEFAULT_LINKER;
  return search_path("ld.lld", found, sizeof found);
}

bool stc_run_write_all(int fd, const char *data, size_t size) {
  size_t done = 0;
  while (done < size) {
    ssize_t n = write(fd, data + done, size - done);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return false;
    done += (size_t)n;
  }
  return true;
}

static bool write_file(const char *path, const char *data, size_t size) {
  int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0)
    return false;
  bool written = stc_run_write_all(fd, data, size);
  return close(fd) == 0 && written;
}

/* The file's bytes (malloc'd, NUL-appended), or NULL. */
static char *read_file(const char *path, size_t *size) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  struct stat st;
  char *data = NULL;
  if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
      st.st_size > 0 && (data = malloc((size_t)st.st_size + 1))) {
    size_t done = 0, want = (size_t)st.st_size;
    while (done < want) {
      ssize_t n = read(fd, data + done, want - done);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        break;
      done += (size_t)n;
    }
    if (done == want) {
      data[want] = 0;
      *size = want;
    } else {
      free(data);
      data = NULL;
    }
  }
  if (fd >= 0)
    close(fd);
  return data;
}

/* The first line of the linker's messages, for an error. */
static void first_line(const char *path, char *line, size_t size) {
  size_t length = 0;
  char *text = read_file(path, &length);
  line[0] = 0;
  if (!text)
    return;
  size_t n = strcspn(text, "\n");
  snprintf(line, size, ": %.*s", (int)(n < 300 ? n : 300), text);
  free(text);
}

#define ELF_TYPE_REL 1u
#define ELF_TYPE_DYN 3u

/* Whether linked is an ELF file of type e_type and of the input object's
 * class, byte order and machine (a linker that wrote something else must
 * not reach the JIT or dlopen). */
static bool same_kind_of_object(const char *linked, size_t size,
                                unsigned e_type, const char *input,
                                size_t input_size) {
  /* e_ident[0..6]: magic, class, data, version; e_type and e_machine at
   * 16 and 18, in the file's byte order. */
  if (size <= 20 || input_size <= 20 || memcmp(linked, "\177ELF", 4) != 0 ||
      memcmp(linked, input, 7) != 0 || memcmp(linked + 18, input + 18, 2) != 0)
    return false;
  const unsigned char *type = (const unsigned char *)linked + 16;
  unsigned value = linked[5] == 2 ? (unsigned)type[0] << 8 | type[1]
                                  : (unsigned)type[1] << 8 | type[0];
  return value == e_type;
}

/* Runs argv[0] with stdout and stderr to log; its exit status (-1: it did
 * not run or did not exit). */
static int run_linker(char *const *argv, const char *log) {
  posix_spawn_file_actions_t actions;
  if (posix_spawn_file_actions_init(&actions) != 0)
    return -1;
  int status = -1;
  pid_t pid;
  if (posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY,
                                       0) == 0 &&
      posix_spawn_file_actions_addopen(&actions, 1, log,
                                       O_WRONLY | O_CREAT | O_TRUNC, 0600) ==
          0 &&
      posix_spawn_file_actions_adddup2(&actions, 1, 2) == 0 &&
      posix_spawn(&pid, argv[0], &actions, NULL, argv, environ) == 0) {
    int wstatus;
    pid_t got;
    while ((got = waitpid(pid, &wstatus, 0)) < 0 && errno == EINTR)
      ;
    if (got == pid && WIFEXITED(wstatus))
      status = WEXITSTATUS(wstatus);
  }
  posix_spawn_file_actions_destroy(&actions);
  return status;
}

/* Links count objects with flags (at most MERGE_MAX_FLAGS) into one file
 * of ELF type e_type (partition 0's class, byte order and machine). */
#define MERGE_MAX_FLAGS 24
#define MERGE_MAX_ARCHIVES 4
static stc_status link_objects(const char *linker, const char *const *flags,
                               size_t num_flags, unsigned e_type,
                               const char *const *data, const size_t *size,
                               size_t count, const char *const *archives,
                               size_t num_archives, char **out,
                               size_t *out_size, stc_error *err) {
  *out = NULL;
  *out_size = 0;
  if (count < 1 || count + 2 > MERGE_MAX_FILES || num_flags > MERGE_MAX_FLAGS ||
      num_archives > MERGE_MAX_ARCHIVES) {
    stc_error_set(err, NULL, 0, 0, "cannot link %zu objects", count);
    return STC_ERR_INVALID;
  }
  const char *tmp = getenv("TMPDIR");
  char dir[PATH_MAX - 32];
  if ((size_t)snprintf(dir, sizeof dir, "%s/stc-run-link.XXXXXX",
                       tmp && *tmp ? tmp : "/tmp") >= sizeof dir ||
      !mkdtemp(dir)) {
    stc_error_set(err, NULL, 0, 0, "cannot make a temporary folder: %s",
                  strerror(errno));
    return STC_ERR_IO;
  }
  char files[MERGE_MAX_FILES][PATH_MAX];
  size_t made = 0;
  stc_status status = STC_OK;
  for (; made < count; made++) {
    snprintf(files[made], sizeof files[made], "%s/p%zu.o", dir, made);
    if (!write_file(files[made], data[made], size[made])) {
      stc_error_set(err, NULL, 0, 0, "cannot write '%s': %s", files[made],
                    strerror(errno));
      status = STC_ERR_IO;
      made++; /* may exist, partly written */
      break;
    }
  }
  size_t output = count, log = count + 1;
  snprintf(files[output], sizeof files[output], "%s/out", dir);
  snprintf(files[log], sizeof files[log], "%s/linker.txt", dir);
  if (status == STC_OK) {
    char *argv[MERGE_MAX_FILES + MERGE_MAX_FLAGS + MERGE_MAX_ARCHIVES + 4];
    size_t argc = 0;
    argv[argc++] = (char *)linker;
    for (size_t i = 0; i < num_flags; i++)
      argv[argc++] = (char *)flags[i];
    argv[argc++] = "-o";
    argv[argc++] = files[output];
    for (size_t i = 0; i < count; i++)
      argv[argc++] = files[i];
    for (size_t i = 0; i < num_archives; i++)
      argv[argc++] = (char *)archives[i];
    argv[argc] = NULL;
    int exit_status = run_linker(argv, files[log]);
    if (exit_status != 0) {
      char line[400];
      first_line(files[log], line, sizeof line);
      if (exit_status < 0)
        stc_error_set(err, NULL, 0, 0, "cannot run '%s'%s", linker, line);
      else
        stc_error_set(err, NULL, 0, 0, "'%s %s' exited with status %d%s",
                      linker, flags[0], exit_status, line);
      status = STC_ERR_IO;
    } else if (!(*out = read_file(files[output], out_size))) {
      stc_error_set(err, NULL, 0, 0, "cannot read the linker's output '%s'",
                    files[output]);
      status = STC_ERR_IO;
    } else if (!same_kind_of_object(*out, *out_size, e_type, data[0],
                                    size[0])) {
      stc_error_set(err, NULL, 0, 0,
                    "'%s %s' wrote something other than a %s of the "
                    "objects' kind",
                    linker, flags[0],
                    e_type == ELF_TYPE_REL ? "relocatable object"
                                           : "shared library");
      free(*out);
      *out = NULL;
      *out_size = 0;
      status = STC_ERR_CORRUPT;
    }
  }
  for (size_t i = 0; i < made; i++)
    unlink(files[i]);
  unlink(files[output]);
  unlink(files[log]);
  rmdir(dir);
  return status;
}

stc_status stc_run_merge_objects(const char *linker, const char *const *data,
                                 const size_t *size, size_t count, char **out,
                                 size_t *out_size, stc_error *err) {
  static const char *const flags[] = {"-r"};
  if (count < 2) {
    stc_error_set(err, NULL, 0, 0, "cannot merge %zu objects", count);
    return STC_ERR_INVALID;
  }
  return link_objects(linker, flags, 1, ELF_TYPE_REL, data, size, count, NULL,
                      0, out, out_size, err);
}

stc_status stc_run_link_library(const char *linker, const char *object,
                                size_t size, const char *const *archives,
                                size_t num_archives,
                                const char *const *wrapped, size_t num_wrapped,
                                char **out, size_t *out_size, stc_error *err) {
  /* -Bsymbolic: the module's references to its own functions bind to them,
   * not to a same-named symbol stc-run exports. --strip-debug: the runner
   * utilities' debug information (31 KB a library, read, checked and
   * copied on every start; the symbol table stays, for profilers). */
  const char *flags[MERGE_MAX_FLAGS] = {"-shared", "-Bsymbolic", "-z",
                                        "noexecstack", "--strip-debug"};
  size_t num_flags = 5;
  char wraps[MERGE_MAX_FLAGS][128];
  for (size_t i = 0; i < num_wrapped; i++) {
    if (num_flags == MERGE_MAX_FLAGS ||
        (size_t)snprintf(wraps[i], sizeof wraps[i], "--wrap=%s", wrapped[i]) >=
            sizeof wraps[i]) {
      stc_error_set(err, NULL, 0, 0, "too many or too long names to wrap");
      return STC_ERR_INVALID;
    }
    flags[num_flags++] = wraps[i];
  }
  return link_objects(linker, flags, num_flags, ELF_TYPE_DYN, &object, &size,
                      1, archives, num_archives, out, out_size, err);
}
