/* library_lookup.c - which file dlopen(name) would open, and that file's
 * identity, without loading it (runtime/blas.c decides BLAS eligibility
 * and the identity trust_verified keys by this way, so that a warm start
 * whose winners are not BLAS variants never pays for loading the library:
 * OpenBLAS's constructor starts threads, 10-15 ms per process).
 *
 * In: a name (a path when it holds a '/', else a soname), the loader's
 * search path for this object (dlinfo RTLD_DI_SERINFO: DT_RPATH,
 * LD_LIBRARY_PATH, DT_RUNPATH, the system directories, in the loader's
 * order) and /etc/ld.so.cache, which the loader consults just before the
 * system directories. Out: the file found, or why none is, or "undecided"
 * where this code cannot be sure to agree with the loader (an object of
 * that soname already loaded, glibc-hwcaps entries in the cache, no
 * RTLD_DI_SERINFO): then the caller loads the library to know.
 *
 * A file counts as found when it is a readable ELF shared object of this
 * process's class, byte order and machine: the loader skips other files
 * and searches on. The caller loads the file found by its path, so what
 * runs is what was identified even if this search and the loader's were
 * ever to differ. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "dispatch_internal.h"

#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#if defined(__x86_64__)
#define NATIVE_MACHINE EM_X86_64
#elif defined(__aarch64__)
#define NATIVE_MACHINE EM_AARCH64
#elif defined(__powerpc64__)
#define NATIVE_MACHINE EM_PPC64
#elif defined(__riscv)
#define NATIVE_MACHINE EM_RISCV
#elif defined(__s390x__)
#define NATIVE_MACHINE EM_S390
#elif defined(__i386__)
#define NATIVE_MACHINE EM_386
#else
#define NATIVE_MACHINE EM_NONE /* unknown here: any machine is accepted */
#endif

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define NATIVE_DATA ELFDATA2LSB
#else
#define NATIVE_DATA ELFDATA2MSB
#endif
#define NATIVE_CLASS (sizeof(void *) == 8 ? ELFCLASS64 : ELFCLASS32)

/* The bytes of a PT_NOTE segment read for the build id, at most. */
#define NOTE_READ_LIMIT 4096u

static bool read_at(int fd, void *buffer, size_t size, off_t offset) {
  size_t done = 0;
  while (done < size) {
    ssize_t got = pread(fd, (char *)buffer + done, size - done,
                        offset + (off_t)done);
    if (got < 0 && errno == EINTR)
      continue;
    if (got <= 0)
      return false;
    done += (size_t)got;
  }
  return true;
}

/* The GNU build id in one note segment's bytes, as hex into hex (2*64+1). */
static bool build_id_of_notes(const unsigned char *note, size_t size,
                              char *hex) {
  size_t at = 0;
  while (at + sizeof(ElfW(Nhdr)) <= size) {
    ElfW(Nhdr) header;
    memcpy(&header, note + at, sizeof header);
    size_t name_at = at + sizeof header;
    size_t desc_at = name_at + ((header.n_namesz + 3u) & ~(size_t)3);
    size_t next = desc_at + ((header.n_descsz + 3u) & ~(size_t)3);
    if (next > size || next <= at)
      return false;
    if (header.n_type == NT_GNU_BUILD_ID && header.n_namesz == 4 &&
        memcmp(note + name_at, "GNU", 4) == 0 && header.n_descsz <= 64) {
      for (size_t b = 0; b < header.n_descsz; b++)
        snprintf(hex + 2 * b, 3, "%02x", note[desc_at + b]);
      return true;
    }
    at = next;
  }
  return false;
}

/* Whether fd is an ELF shared object this process can load; its build id
 * (hex, "" without one) when it is and hex is not NULL. */
static bool loadable_elf(int fd, char *hex, const char **why) {
  ElfW(Ehdr) header;
  if (hex)
    hex[0] = 0;
  if (!read_at(fd, &header, sizeof header, 0) ||
      memcmp(header.e_ident, ELFMAG, SELFMAG) != 0) {
    *why = "not an ELF file";
    return false;
  }
  if (header.e_ident[EI_CLASS] != NATIVE_CLASS ||
      header.e_ident[EI_DATA] != NATIVE_DATA ||
      (NATIVE_MACHINE != EM_NONE && header.e_machine != NATIVE_MACHINE)) {
    *why = "an ELF file for another machine";
    return false;
  }
  if (header.e_type != ET_DYN || header.e_phentsize != sizeof(ElfW(Phdr)) ||
      header.e_phnum == 0 || header.e_phnum > 256) {
    *why = "not an ELF shared object";
    return false;
  }
  ElfW(Phdr) program[256];
  if (!read_at(fd, program, header.e_phnum * sizeof *program,
               (off_t)header.e_phoff)) {
    *why = "a truncated ELF file";
    return false;
  }
  if (!hex)
    return true;
  unsigned char note[NOTE_READ_LIMIT];
  for (size_t i = 0; i < header.e_phnum && !hex[0]; i++) {
    if (program[i].p_type != PT_NOTE)
      continue;
    size_t size = program[i].p_filesz < sizeof note ? program[i].p_filesz
                                                    : sizeof note;
    if (read_at(fd, note, size, (off_t)program[i].p_offset))
      build_id_of_notes(note, size, hex);
  }
  return true;
}

/* The real path of the file open as fd (path, as opened): the kernel's
 * name for it (/proc/self/fd), one system call where realpath(3) reads
 * every component's link (14 for Debian's libopenblas.so.0 through
 * /etc/alternatives, on every process's first site call); the same path,
 * since both follow the same links through the same mounts. realpath when
 * /proc is not there, or the name is not a plain absolute one (a file
 * removed since it was opened reads "... (deleted)"). */
static bool real_path_of(int fd, const char *path, char real[PATH_MAX]) {
  static const char deleted[] = " (deleted)";
  char link[64];
  snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  ssize_t n = readlink(link, real, PATH_MAX - 1);
  if (n > 0 && n < PATH_MAX - 1 && real[0] == '/') {
    real[n] = 0;
    size_t tail = sizeof deleted - 1;
    if ((size_t)n < tail || strcmp(real + n - tail, deleted) != 0)
      return true;
  }
  return realpath(path, real) != NULL;
}

/* stc_rt__library_examine, or with full false the cheap stamp
 * "dev=<d>;ino=<i>;size=<bytes>;mtime=<s.ns>" of the same checks (no real
 * path, no notes read). */
static stc_rt__lookup examine(const char *path, bool full, char *identity,
                              size_t identity_size, char *why,
                              size_t why_size) {
  char real[PATH_MAX];
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    snprintf(why, why_size, "%s: cannot open shared object file: %s", path,
             strerror(errno));
    return STC_RT__LIBRARY_MISSING;
  }
  struct stat st;
  const char *problem = NULL;
  char hex[2 * 64 + 1];
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
    problem = "not a regular file";
  else if (!loadable_elf(fd, full ? hex : NULL, &problem))
    ; /* problem says why */
  else if (full && !real_path_of(fd, path, real))
    problem = "its real path cannot be resolved";
  close(fd);
  if (problem) {
    snprintf(why, why_size, "%s: %s", path, problem);
    return STC_RT__LIBRARY_MISSING;
  }
  int n = full ? snprintf(identity, identity_size,
                          "%s;size=%" PRIu64 ";mtime=%lld.%09ld;build-id=%s",
                          real, (uint64_t)st.st_size,
                          (long long)st.st_mtim.tv_sec,
                          (long)st.st_mtim.tv_nsec, hex[0] ? hex : "none")
               : snprintf(identity, identity_size,
                          "dev=%" PRIu64 ";ino=%" PRIu64 ";size=%" PRIu64
                          ";mtime=%lld.%09ld",
                          (uint64_t)st.st_dev, (uint64_t)st.st_ino,
                          (uint64_t)st.st_size, (long long)st.st_mtim.tv_sec,
                          (long)st.st_mtim.tv_nsec);
  if (n < 0 || (size_t)n >= identity_size) {
    snprintf(why, why_size, "%s: path too long", path);
    return STC_RT__LIBRARY_MISSING;
  }
  return STC_RT__LIBRARY_FOUND;
}

stc_rt__lookup stc_rt__library_examine(const char *path, char *identity,
                                       size_t identity_size, char *why,
                                       size_t why_size) {
  return examine(path, true, identity, identity_size, why, why_size);
}

stc_rt__lookup stc_rt__library_stamp(const char *path, char *stamp,
                                     size_t stamp_size, char *why,
                                     size_t why_size) {
  return examine(path, false, stamp, stamp_size, why, why_size);
}

/* ---- already loaded? ---- */

typedef struct soname_search {
  const char *name;
  bool found;
} soname_search;

/* dl_iterate_phdr callback: does this object answer to search->name (its
 * file name or its DT_SONAME)? dlopen(name) would return it. */
static int match_soname(struct dl_phdr_info *info, size_t size, void *user) {
  soname_search *search = user;
  (void)size;
  if (!info->dlpi_name || info->dlpi_name[0] != '/')
    return 0; /* the program itself, the vDSO */
  const char *base = strrchr(info->dlpi_name, '/') + 1;
  if (strcmp(base, search->name) == 0) {
    search->found = true;
    return 1;
  }
  for (size_t i = 0; i < info->dlpi_phnum; i++) {
    if (info->dlpi_phdr[i].p_type != PT_DYNAMIC)
      continue;
    const ElfW(Dyn) *dyn =
        (const ElfW(Dyn) *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
    uintptr_t strtab = 0, soname = 0;
    bool has_soname = false;
    for (; dyn->d_tag != DT_NULL; dyn++) {
      if (dyn->d_tag == DT_STRTAB)
        strtab = (uintptr_t)dyn->d_un.d_ptr;
      else if (dyn->d_tag == DT_SONAME) {
        soname = (uintptr_t)dyn->d_un.d_val;
        has_soname = true;
      }
    }
    if (!has_soname || !strtab)
      return 0;
    /* glibc relocates the dynamic section's pointers where it is writable,
     * not where it is read-only: an unrelocated one is below the base. */
    if (strtab < info->dlpi_addr)
      strtab += info->dlpi_addr;
    if (strcmp((const char *)(strtab + soname), search->name) == 0) {
      search->found = true;
      return 1;
    }
    return 0;
  }
  return 0;
}

/* ---- /etc/ld.so.cache (glibc's "new" format, alone or after the old) ---- */

#define CACHE_MAGIC_OLD "ld.so-1.7.0"
#define CACHE_MAGIC_NEW "glibc-ld.so.cache1.1"

typedef struct cache_header {
  char magic[20]; /* CACHE_MAGIC_NEW, no NUL */
  uint32_t nlibs, len_strings;
  uint8_t flags, padding[3];
  uint32_t extension_offset, unused[3];
} cache_header;

typedef struct cache_entry {
  int32_t flags;
  uint32_t key, value; /* string offsets from the header */
  uint32_t osversion;
  uint64_t hwcap;
} cache_entry;

enum { CACHE_FLAG_TYPE_MASK = 0x00ff, CACHE_FLAG_ELF = 1,
       CACHE_FLAG_ELF_LIBC6 = 3 };

typedef enum cache_answer { CACHE_HIT, CACHE_MISS, CACHE_UNSURE } cache_answer;

/* The string at offset in [base, base + size), or NULL. */
static const char *cache_string(const char *base, size_t size,
                                uint32_t offset) {
  if (offset >= size || !memchr(base + offset, 0, size - offset))
    return NULL;
  return base + offset;
}

/* The loader's cache file, mapped once per process and kept (it is small,
 * ~40 KB, and read-only): unmapping it cost as much as mapping it, and
 * reading it into fresh heap pages more than both. Mapped again when the
 * file is another one (replaced by ldconfig, compared by fstat). Returns
 * the mapping with g_cache_lock held (cache_lookup releases it), NULL
 * without the lock on failure. */
static pthread_mutex_t g_cache_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
  const char *map;
  dev_t dev;
  ino_t ino;
  off_t size;
  struct timespec mtime;
} g_cache_file;

static const char *cache_map(int fd, const struct stat *st) {
  pthread_mutex_lock(&g_cache_lock);
  if (g_cache_file.map &&
      (g_cache_file.dev != st->st_dev || g_cache_file.ino != st->st_ino ||
       g_cache_file.size != st->st_size ||
       g_cache_file.mtime.tv_sec != st->st_mtim.tv_sec ||
       g_cache_file.mtime.tv_nsec != st->st_mtim.tv_nsec)) {
    munmap((void *)g_cache_file.map, (size_t)g_cache_file.size);
    g_cache_file.map = NULL;
  }
  if (!g_cache_file.map) {
    void *map = mmap(NULL, (size_t)st->st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (map == MAP_FAILED) {
      pthread_mutex_unlock(&g_cache_lock);
      return NULL;
    }
    g_cache_file.map = map;
    g_cache_file.dev = st->st_dev;
    g_cache_file.ino = st->st_ino;
    g_cache_file.size = st->st_size;
    g_cache_file.mtime = st->st_mtim;
  }
  return g_cache_file.map;
}

/* Looks name up in the loader's cache: CACHE_HIT with the entry's paths
 * (first to last, as the loader tries them) in paths[0..*count-1];
 * CACHE_UNSURE when an entry is for a glibc-hwcaps subdirectory (the
 * loader then picks by CPU level) or the file cannot be read. */
static cache_answer cache_lookup(const char *name, char paths[][PATH_MAX],
                                 size_t capacity, size_t *count) {
  *count = 0;
  int fd = open("/etc/ld.so.cache", O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return errno == ENOENT ? CACHE_MISS : CACHE_UNSURE;
  struct stat st;
  if (fstat(fd, &st) != 0 || st.st_size < (off_t)sizeof(cache_header) ||
      st.st_size > (64 << 20)) {
    close(fd);
    return CACHE_UNSURE;
  }
  size_t size = (size_t)st.st_size;
  const char *map = cache_map(fd, &st);
  close(fd);
  if (!map)
    return CACHE_UNSURE;
  cache_answer answer = CACHE_UNSURE;
  size_t at = 0;
  if (memcmp(map, CACHE_MAGIC_OLD, sizeof CACHE_MAGIC_OLD - 1) == 0) {
    uint32_t old_count;
    memcpy(&old_count, map + 12, sizeof old_count);
    at = (16 + (size_t)old_count * 12 + 7) & ~(size_t)7;
  }
  cache_header header;
  if (at + sizeof header <= size &&
      (memcpy(&header, map + at, sizeof header),
       memcmp(header.magic, CACHE_MAGIC_NEW, sizeof header.magic) == 0) &&
      header.nlibs <= (size - at - sizeof header) / sizeof(cache_entry)) {
    const char *base = map + at;
    size_t base_size = size - at;
    answer = CACHE_MISS;
    size_t name_size = strlen(name) + 1; /* with its NUL */
    for (uint32_t i = 0; i < header.nlibs; i++) {
      cache_entry entry;
      memcpy(&entry, base + sizeof header + i * sizeof entry, sizeof entry);
      /* The key compared in place, NUL included (so within bounds and
       * terminated): no scan of every entry's strings for their ends,
       * which was most of this function's time in a ~1000-entry cache. */
      int type = entry.flags & CACHE_FLAG_TYPE_MASK;
      if (entry.key >= base_size || base[entry.key] != name[0] ||
          base_size - entry.key < name_size ||
          memcmp(base + entry.key, name, name_size) != 0 ||
          (type != CACHE_FLAG_ELF && type != CACHE_FLAG_ELF_LIBC6))
        continue;
      const char *value = cache_string(base, base_size, entry.value);
      if (entry.hwcap != 0 || !value || strlen(value) >= PATH_MAX) {
        answer = CACHE_UNSURE;
        break;
      }
      if (*count < capacity) {
        strcpy(paths[(*count)++], value);
        answer = CACHE_HIT;
      }
    }
  }
  pthread_mutex_unlock(&g_cache_lock);
  return answer;
}

/* ---- the search ---- */

/* Whether a search directory is one of the system's default ones, which
 * the loader tries after its cache: /lib, /usr/lib, /lib64, /usr/lib64
 * and a multiarch directory directly under /lib or /usr/lib. */
static bool system_directory(const char *dir) {
  size_t length = strlen(dir);
  while (length > 1 && dir[length - 1] == '/')
    length--;
  const char *rest = NULL;
  if (length >= 8 && strncmp(dir, "/usr/lib", 8) == 0)
    rest = dir + 8;
  else if (length >= 4 && strncmp(dir, "/lib", 4) == 0)
    rest = dir + 4;
  if (!rest)
    return false;
  size_t rest_length = length - (size_t)(rest - dir);
  if (rest_length == 0 || (rest_length == 2 && strncmp(rest, "64", 2) == 0))
    return true;
  return rest[0] == '/' && !memchr(rest + 1, '/', rest_length - 1);
}

/* Tries dir/name; FOUND fills path and stamp. */
static stc_rt__lookup try_directory(const char *dir, const char *name,
                                    char *path, size_t path_size,
                                    char *identity, size_t identity_size) {
  char why[PATH_MAX + 64];
  size_t length = strlen(dir);
  int n = snprintf(path, path_size, "%s%s%s", dir,
                   length && dir[length - 1] == '/' ? "" : "/", name);
  if (n < 0 || (size_t)n >= path_size)
    return STC_RT__LIBRARY_MISSING;
  return stc_rt__library_stamp(path, identity, identity_size, why,
                               sizeof why);
}

stc_rt__lookup stc_rt__library_find(const char *name, char *path,
                                    size_t path_size, char *identity,
                                    size_t identity_size, char *why,
                                    size_t why_size) {
  if (strchr(name, '/')) {
    if (strlen(name) >= path_size) {
      snprintf(why, why_size, "%.200s...: path too long", name);
      return STC_RT__LIBRARY_MISSING;
    }
    strcpy(path, name);
    return stc_rt__library_stamp(name, identity, identity_size, why,
                                 why_size);
  }
  soname_search loaded = {name, false};
  dl_iterate_phdr(match_soname, &loaded);
  if (loaded.found)
    return STC_RT__LIBRARY_UNDECIDED; /* dlopen(name) answers it, cheaply */
#ifdef __GLIBC__ /* RTLD_DI_SERINFO, /etc/ld.so.cache */
  /* dlopen searches with the calling object's DT_RPATH / DT_RUNPATH: this
   * file's object (libstc_rt.so, or a program it is linked into). */
  Dl_info info;
  struct link_map *self = NULL;
  if (!dladdr1((void *)stc_rt__library_find, &info, (void **)&self,
               RTLD_DL_LINKMAP) ||
      !self)
    return STC_RT__LIBRARY_UNDECIDED;
  Dl_serinfo size;
  if (dlinfo(self, RTLD_DI_SERINFOSIZE, &size) != 0)
    return STC_RT__LIBRARY_UNDECIDED;
  Dl_serinfo *search =
      malloc(size.dls_size > sizeof size ? size.dls_size : sizeof size);
  if (!search)
    return STC_RT__LIBRARY_UNDECIDED;
  search->dls_size = size.dls_size;
  search->dls_cnt = size.dls_cnt;
  if (dlinfo(self, RTLD_DI_SERINFO, search) != 0) {
    free(search);
    return STC_RT__LIBRARY_UNDECIDED;
  }
  /* The trailing system directories come after the cache. */
  size_t first_system = search->dls_cnt;
  while (first_system > 0 &&
         system_directory(search->dls_serpath[first_system - 1].dls_name))
    first_system--;
  stc_rt__lookup result = STC_RT__LIBRARY_MISSING;
  for (size_t i = 0; i < first_system && result == STC_RT__LIBRARY_MISSING;
       i++)
    result = try_directory(search->dls_serpath[i].dls_name, name, path,
                           path_size, identity, identity_size);
  if (result == STC_RT__LIBRARY_MISSING) {
    char cached[4][PATH_MAX];
    size_t count = 0;
    cache_answer answer = cache_lookup(name, cached, 4, &count);
    if (answer == CACHE_UNSURE)
      result = STC_RT__LIBRARY_UNDECIDED;
    for (size_t k = 0; k < count && result == STC_RT__LIBRARY_MISSING; k++) {
      char ignored[PATH_MAX + 64];
      if (strlen(cached[k]) < path_size) {
        strcpy(path, cached[k]);
        result = stc_rt__library_stamp(path, identity, identity_size,
                                       ignored, sizeof ignored);
      }
    }
  }
  for (size_t i = first_system;
       i < search->dls_cnt && result == STC_RT__LIBRARY_MISSING; i++)
    result = try_directory(search->dls_serpath[i].dls_name, name, path,
                           path_size, identity, identity_size);
  free(search);
  if (result == STC_RT__LIBRARY_MISSING)
    snprintf(why, why_size,
             "%s: cannot open shared object file: not on the loader's "
             "search path",
             name);
  return result;
#else
  (void)path;
  (void)path_size;
  (void)identity;
  (void)identity_size;
  (void)why;
  (void)why_size;
  return STC_RT__LIBRARY_UNDECIDED;
#endif
}
