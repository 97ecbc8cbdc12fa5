/* Unit tests of libstc_rt: the region timer (counts, ns, nesting, threads,
 * thread exit, tuning time), profile export and the exit-time write, and the
 * environment fingerprint. Every test uses its own region ids, so that tests
 * run in one process (`test_runtime` with no argument) do not see each
 * other's samples. */
#include "stc_test.h"

#include "../../runtime/openmp_spin.h"
#include "../../runtime/rt_internal.h"
#include "stc/profile.h"
#include "stc/rt.h"

#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void sleep_ns(uint64_t ns) {
  struct timespec ts = {(time_t)(ns / 1000000000u), (long)(ns % 1000000000u)};
  while (nanosleep(&ts, &ts) != 0) {
  }
}

/* Region timing around a sleep of `ns`. */
static void timed_sleep(const char *id, uint64_t ns, int64_t bytes) {
  int64_t token = stc_rt_region_begin(id);
  sleep_ns(ns);
  stc_rt_region_end(id, token, bytes);
}

STC_TEST(region_begin_end_records_count_ns_and_bytes) {
  for (int i = 0; i < 3; i++)
    timed_sleep("basic/region#1", 2000000, 100);
  stc_region_record r;
  STC_CHECK(stc_rt_region_stats("basic/region#1", &r));
  STC_CHECK_EQ_U64(r.dispatch_count, 3);
  STC_CHECK(r.total_ns >= 6000000);
  STC_CHECK(r.total_ns < 3000000000u);
  STC_CHECK(r.max_ns >= 2000000);
  STC_CHECK(r.max_ns <= r.total_ns);
  STC_CHECK_EQ_U64(r.bytes_total, 300);
  STC_CHECK(!stc_rt_region_stats("basic/never-recorded", &r));
}

STC_TEST(nested_regions_each_get_their_own_time) {
  for (int i = 0; i < 2; i++) {
    int64_t outer = stc_rt_region_begin("nest/outer");
    sleep_ns(1000000);
    timed_sleep("nest/inner", 3000000, 0);
    stc_rt_region_end("nest/outer", outer, 0);
  }
  stc_region_record outer, inner;
  STC_CHECK(stc_rt_region_stats("nest/outer", &outer));
  STC_CHECK(stc_rt_region_stats("nest/inner", &inner));
  STC_CHECK_EQ_U64(outer.dispatch_count, 2);
  STC_CHECK_EQ_U64(inner.dispatch_count, 2);
  STC_CHECK(inner.total_ns >= 6000000);
  STC_CHECK(outer.total_ns >= inner.total_ns + 2000000);
}

STC_TEST(same_id_at_two_addresses_is_one_region) {
  static char first[] = "dup/region#2";
  static char second[] = "dup/region#2";
  STC_CHECK((const char *)first != (const char *)second);
  stc_rt_region_end(first, stc_rt_region_begin(first), 1);
  stc_rt_region_end(second, stc_rt_region_begin(second), 2);
  stc_rt_region_end(first, stc_rt_region_begin(first), 4);
  stc_region_record r;
  STC_CHECK(stc_rt_region_stats("dup/region#2", &r));
  STC_CHECK_EQ_U64(r.dispatch_count, 3);
  STC_CHECK_EQ_U64(r.bytes_total, 7);
}

STC_TEST(bad_arguments_never_crash) {
  stc_rt_region_end(NULL, stc_rt_region_begin(NULL), 5); /* ignored */
  /* A token from the future (another thread's clock, garbage): 0 ns. */
  stc_rt_region_end("bad/future-token", INT64_MAX, -7);
  stc_region_record r;
  STC_CHECK(stc_rt_region_stats("bad/future-token", &r));
  STC_CHECK_EQ_U64(r.dispatch_count, 1);
  STC_CHECK_EQ_U64(r.total_ns, 0);
  STC_CHECK_EQ_U64(r.bytes_total, 0); /* negative bytes count as 0 */
  STC_CHECK(!stc_rt_region_stats(NULL, &r));
  STC_CHECK(stc_rt_regions_snapshot(NULL) == STC_ERR_INVALID);
  STC_CHECK_EQ_U64(stc_rt_regions_dropped(), 0);
}

STC_TEST(tuning_ns_are_not_counted) {
  /* 20 ms sleep of which 15 ms are declared tuning: about 5 ms remain. */
  int64_t outer = stc_rt_region_begin("tune/outer");
  int64_t token = stc_rt_region_begin("tune/inner");
  sleep_ns(20000000);
  stc_rt__tuning_ns_add(15000000);
  stc_rt_region_end("tune/inner", token, 0);
  stc_rt_region_end("tune/outer", outer, 0);
  /* Tuning outside a region does not touch later regions. */
  stc_rt__tuning_ns_add(50000000);
  timed_sleep("tune/after", 1000000, 0);
  stc_region_record inner, outer_record, after;
  STC_CHECK(stc_rt_region_stats("tune/inner", &inner));
  STC_CHECK(stc_rt_region_stats("tune/outer", &outer_record));
  STC_CHECK(stc_rt_region_stats("tune/after", &after));
  STC_CHECK(inner.total_ns >= 5000000);
  STC_CHECK(inner.total_ns < 15000000);
  /* The enclosing region excludes the nested tuning time too. */
  STC_CHECK(outer_record.total_ns >= inner.total_ns);
  STC_CHECK(outer_record.total_ns < 15000000);
  STC_CHECK(after.total_ns >= 1000000);
  STC_CHECK(after.total_ns < 40000000);
}

/* ---- threads ---- */

#define NUM_THREADS 8
#define SAMPLES_PER_THREAD 2000
static const char *const own_ids[NUM_THREADS] = {
    "thr/own#0", "thr/own#1", "thr/own#2", "thr/own#3",
    "thr/own#4", "thr/own#5", "thr/own#6", "thr/own#7",
};

typedef struct worker {
  int index;
  pthread_barrier_t *start;
} worker;

static void *record_worker(void *arg) {
  worker *w = arg;
  pthread_barrier_wait(w->start);
  for (int i = 0; i < SAMPLES_PER_THREAD; i++) {
    int64_t token = stc_rt_region_begin("thr/shared");
    int64_t own = stc_rt_region_begin(own_ids[w->index]);
    stc_rt_region_end(own_ids[w->index], own, 2);
    stc_rt_region_end("thr/shared", token, 1);
  }
  return NULL;
}

static const stc_profile_region *find_region(const stc_profile *p,
                                             const char *id) {
  for (size_t i = 0; i < p->num_regions; i++)
    if (strcmp(p->regions[i].id, id) == 0)
      return &p->regions[i];
  return NULL;
}

STC_TEST_THREADED(threads_same_and_different_ids_exact_counts) {
  pthread_t threads[NUM_THREADS];
  worker workers[NUM_THREADS];
  pthread_barrier_t start;
  pthread_barrier_init(&start, NULL, NUM_THREADS + 1);
  for (int i = 0; i < NUM_THREADS; i++) {
    workers[i] = (worker){i, &start};
    STC_CHECK(pthread_create(&threads[i], NULL, record_worker, &workers[i]) ==
              0);
  }
  pthread_barrier_wait(&start);
  /* Read while the workers record: exercises readers against writers. */
  for (int i = 0; i < 20; i++) {
    stc_hints *snapshot = NULL;
    STC_CHECK(stc_rt_regions_snapshot(&snapshot) == STC_OK);
    STC_CHECK(stc_hints_dispatch_count(snapshot, "thr/shared") <=
              (uint64_t)NUM_THREADS * SAMPLES_PER_THREAD);
    stc_hints_destroy(snapshot);
  }
  for (int i = 0; i < NUM_THREADS; i++)
    pthread_join(threads[i], NULL);
  pthread_barrier_destroy(&start);

  char path[4200];
  snprintf(path, sizeof path, "%s/threads.yaml", stc_test_tmpdir());
  stc_error err;
  STC_CHECK_EQ_INT(stc_rt_profile_export(path, &err), STC_OK);
  stc_profile *profile = NULL;
  STC_CHECK_EQ_INT(stc_profile_read_file(path, &profile, &err, NULL, NULL),
                   STC_OK);
  const stc_profile_region *shared = find_region(profile, "thr/shared");
  int ok = shared && shared->count == (uint64_t)NUM_THREADS * SAMPLES_PER_THREAD &&
           shared->bytes == (uint64_t)NUM_THREADS * SAMPLES_PER_THREAD;
  for (int i = 0; i < NUM_THREADS && ok; i++) {
    const stc_profile_region *own = find_region(profile, own_ids[i]);
    ok = own && own->count == SAMPLES_PER_THREAD &&
         own->bytes == 2u * SAMPLES_PER_THREAD && own->total_ns <= shared->total_ns;
  }
  stc_profile_destroy(profile);
  STC_CHECK(ok);
}

static void *short_lived(void *arg) {
  const char *own = arg;
  for (int i = 0; i < 10; i++) {
    stc_rt_region_end("exit/shared", stc_rt_region_begin("exit/shared"), 0);
    stc_rt_region_end(own, stc_rt_region_begin(own), 0);
  }
  return NULL;
}

STC_TEST_THREADED(threads_that_exit_before_export_keep_samples) {
  static const char *const ids[4] = {"exit/a", "exit/b", "exit/a", "exit/c"};
  /* Waves: later threads fold into entries earlier threads retired. */
  for (int wave = 0; wave < 4; wave++) {
    pthread_t threads[4];
    for (int i = 0; i < 4; i++)
      STC_CHECK(pthread_create(&threads[i], NULL, short_lived,
                               (void *)ids[i]) == 0);
    for (int i = 0; i < 4; i++)
      pthread_join(threads[i], NULL);
  }
  stc_region_record r;
  STC_CHECK(stc_rt_region_stats("exit/shared", &r));
  STC_CHECK_EQ_U64(r.dispatch_count, 4 * 4 * 10);
  STC_CHECK(stc_rt_region_stats("exit/a", &r));
  STC_CHECK_EQ_U64(r.dispatch_count, 4 * 2 * 10);
  STC_CHECK(stc_rt_region_stats("exit/b", &r));
  STC_CHECK_EQ_U64(r.dispatch_count, 4 * 10);
  STC_CHECK(stc_rt_region_stats("exit/c", &r));
  STC_CHECK_EQ_U64(r.dispatch_count, 4 * 10);
}

STC_TEST(reset_zeroes_samples) {
  timed_sleep("reset/region", 0, 8);
  stc_region_record r;
  STC_CHECK(stc_rt_region_stats("reset/region", &r));
  stc_rt_regions_reset();
  STC_CHECK(!stc_rt_region_stats("reset/region", &r));
  timed_sleep("reset/region", 0, 8);
  STC_CHECK(stc_rt_region_stats("reset/region", &r));
  STC_CHECK_EQ_U64(r.dispatch_count, 1);
  STC_CHECK_EQ_U64(r.bytes_total, 8);
}

/* ---- export ---- */

STC_TEST(export_writes_a_profile_the_reader_accepts) {
  timed_sleep("export/matmul#9f2c41d0", 1000000, 4096);
  char path[4200];
  snprintf(path, sizeof path, "%s/profile.yaml", stc_test_tmpdir());
  stc_error err;
  STC_CHECK_EQ_INT(stc_rt_profile_export(path, &err), STC_OK);
  stc_profile *profile = NULL;
  STC_CHECK_EQ_INT(stc_profile_read_file(path, &profile, &err, NULL, NULL),
                   STC_OK);
  char environment[2048];
  STC_CHECK_EQ_INT(stc_rt_environment(environment, sizeof environment),
                   STC_OK);
  int header_ok = strcmp(profile->producer, "stc " STC_VERSION_STRING) == 0 &&
                  strcmp(profile->environment, environment) == 0 &&
                  profile->created[0] != 0;
  const stc_profile_region *r = find_region(profile, "export/matmul#9f2c41d0");
  int region_ok = r && r->count == 1 && r->bytes == 4096 &&
                  r->total_ns >= 1000000 && r->max_ns == r->total_ns;
  stc_profile_destroy(profile);
  STC_CHECK(header_ok);
  STC_CHECK(region_ok);
}

STC_TEST(export_to_unwritable_path_is_an_error_not_a_crash) {
  timed_sleep("unwritable/region", 0, 0);
  char blocker[4200], path[4300];
  snprintf(blocker, sizeof blocker, "%s/not-a-dir", stc_test_tmpdir());
  FILE *f = fopen(blocker, "w");
  STC_CHECK(f != NULL);
  fclose(f);
  snprintf(path, sizeof path, "%s/profile.yaml", blocker);
  stc_error err;
  stc_status status = stc_rt_profile_export(path, &err);
  STC_CHECK(status != STC_OK);
  STC_CHECK(err.message[0] != 0);
  struct stat st;
  STC_CHECK(stat(path, &st) != 0);
}

STC_TEST(export_without_configured_path_is_not_found) {
  STC_CHECK_EQ_INT(stc_rt_set_profile_out(NULL), STC_OK);
  char buf[64];
  STC_CHECK_EQ_INT(stc_rt_profile_out(buf, sizeof buf), STC_ERR_NOT_FOUND);
  stc_error err;
  STC_CHECK_EQ_INT(stc_rt_profile_export(NULL, &err), STC_ERR_NOT_FOUND);
  STC_CHECK_CONTAINS(err.message, "STC_PROFILE_OUT");
  STC_CHECK_EQ_INT(stc_rt_set_profile_out("/tmp/configured.yaml"), STC_OK);
  STC_CHECK_EQ_INT(stc_rt_profile_out(buf, sizeof buf), STC_OK);
  STC_CHECK_STR_EQ(buf, "/tmp/configured.yaml");
  STC_CHECK_EQ_INT(stc_rt_profile_out(buf, 4), STC_ERR_INVALID);
  STC_CHECK_EQ_INT(stc_rt_set_profile_out(NULL), STC_OK);
}

/* Forks a child that records one region, sets the exit-time path and exits
 * through exit(); returns the child's wait status. Its stderr goes to
 * stderr_path. */
static int run_child_exiting(const char *profile_path, const char *stderr_path) {
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0) {
    if (!freopen(stderr_path, "w", stderr))
      _exit(90);
    timed_sleep("atexit/region", 0, 3);
    if (stc_rt_set_profile_out(profile_path) != STC_OK)
      _exit(91);
    exit(0);
  }
  int status = -1;
  waitpid(pid, &status, 0);
  return status;
}

static size_t read_text(const char *path, char *buf, size_t size) {
  FILE *f = fopen(path, "r");
  if (!f)
    return 0;
  size_t n = fread(buf, 1, size - 1, f);
  buf[n] = 0;
  fclose(f);
  return n;
}

STC_TEST(exit_writes_the_profile_or_one_warning_line) {
  char profile_path[4200], log_path[4200], text[4096];
  snprintf(profile_path, sizeof profile_path, "%s/atexit.yaml",
           stc_test_tmpdir());
  snprintf(log_path, sizeof log_path, "%s/atexit.log", stc_test_tmpdir());
  int status = run_child_exiting(profile_path, log_path);
  STC_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  stc_profile *profile = NULL;
  stc_error err;
  STC_CHECK_EQ_INT(stc_profile_read_file(profile_path, &profile, &err, NULL,
                                         NULL),
                   STC_OK);
  const stc_profile_region *r = find_region(profile, "atexit/region");
  int ok = r && r->bytes >= 3;
  stc_profile_destroy(profile);
  STC_CHECK(ok);
  STC_CHECK_EQ_U64(read_text(log_path, text, sizeof text), 0);

  /* Unwritable: the child still exits 0 and says so in exactly one line. */
  snprintf(profile_path, sizeof profile_path, "%s/no/such/dir/p.yaml",
           stc_test_tmpdir());
  status = run_child_exiting(profile_path, log_path);
  STC_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  read_text(log_path, text, sizeof text);
  char expected[4400];
  snprintf(expected, sizeof expected,
           "stc: warning: cannot write profile '%s': ", profile_path);
  STC_CHECK(strncmp(text, expected, strlen(expected)) == 0);
  char *newline = strchr(text, '\n');
  STC_CHECK(newline != NULL && newline[1] == 0);
}

/* ---- environment ---- */

STC_TEST(fingerprint_is_stable_and_carries_tags) {
  setenv("STC_TUNE_BUILD_TAG", "b-42", 1);
  setenv("STC_TUNE_DRIVER_TAG", "d-7", 1);
  setenv("STC_TUNE_CONTEXT_TAG", "ctx", 1);
  char first[900], second[900];
  STC_CHECK_EQ_INT(stc_rt_environment(first, sizeof first), STC_OK);
  STC_CHECK_EQ_INT(stc_rt_environment(second, sizeof second), STC_OK);
  STC_CHECK_STR_EQ(first, second);
  STC_CHECK(strncmp(first, "cpu:", 4) == 0);
  STC_CHECK_CONTAINS(first, ";stc:" STC_VERSION_STRING);
  STC_CHECK_CONTAINS(first, ";build:b-42;driver:d-7;context:ctx");
  unsetenv("STC_TUNE_DRIVER_TAG");
  STC_CHECK_EQ_INT(stc_rt_environment(second, sizeof second), STC_OK);
  STC_CHECK_CONTAINS(second, ";build:b-42;context:ctx");
  unsetenv("STC_TUNE_BUILD_TAG");
  unsetenv("STC_TUNE_CONTEXT_TAG");
  STC_CHECK_EQ_INT(stc_rt_environment(first, 8), STC_ERR_INVALID);
  STC_CHECK_EQ_INT(stc_rt_environment(NULL, 8), STC_ERR_INVALID);
  /* Reliable where CPUID gives the identity (x86), or /proc/cpuinfo. */
  stc_rt__x86_cpuid cpuid;
  char identity[1024];
  bool from_cpuid = stc_rt__x86_cpuid_read(&cpuid, true) &&
                    stc_rt__cpu_identity_from_cpuid(&cpuid, "x", identity,
                                                    sizeof identity) == STC_OK;
  STC_CHECK_EQ_INT(stc_rt_environment_reliable(),
                   from_cpuid || access("/proc/cpuinfo", R_OK) == 0);
}

STC_TEST(cpu_identity_keeps_sorted_codegen_features_only) {
  const char *x86 =
      "processor\t: 0\nvendor_id\t: GenuineIntel\n"
      "model name\t: Intel(R) Xeon(R) CPU: E5\n"
      "flags\t\t: fpu sse2 avx2 hypervisor fma avx sse4_2 avx2 avx512f\n"
      "processor\t: 1\nmodel name\t: other\n";
  char buf[512];
  bool reliable = false;
  STC_CHECK_EQ_INT(
      stc_rt__cpu_identity_from_text(x86, "x86_64", buf, sizeof buf, &reliable),
      STC_OK);
  STC_CHECK_STR_EQ(buf,
                   "cpu:x86_64:Intel(R) Xeon(R) CPU_ E5:avx,avx2,avx512f,fma,"
                   "sse2,sse4_2");
  STC_CHECK(reliable);

  const char *arm = "processor\t: 0\nFeatures\t: fp asimd evtstrm sve i8mm\n"
                    "CPU implementer\t: 0x41\nCPU part\t: 0xd4f\n";
  STC_CHECK_EQ_INT(
      stc_rt__cpu_identity_from_text(arm, "aarch64", buf, sizeof buf, &reliable),
      STC_OK);
  STC_CHECK_STR_EQ(buf,
                   "cpu:aarch64:implementer 0x41 part 0xd4f:asimd,fp,i8mm,sve");
  STC_CHECK(reliable);

  STC_CHECK_EQ_INT(stc_rt__cpu_identity_from_text("garbage", "x", buf,
                                                  sizeof buf, &reliable),
                   STC_OK);
  STC_CHECK_STR_EQ(buf, "cpu:x:unknown:");
  STC_CHECK(!reliable);
  STC_CHECK_EQ_INT(
      stc_rt__cpu_identity_from_text(x86, "x86_64", buf, 10, &reliable),
      STC_ERR_INVALID);
  reliable = true;
  STC_CHECK_EQ_INT(stc_rt__cpu_identity_from_file("/nonexistent/cpuinfo", buf,
                                                  sizeof buf, &reliable),
                   STC_OK);
  STC_CHECK(strncmp(buf, "cpu:", 4) == 0);
  STC_CHECK_CONTAINS(buf, ":unknown:");
  STC_CHECK(!reliable);
}

/* Only the first processor's block is read when it has the feature list:
 * a writer that sends one block and then holds the file open (as a slow
 * kernel formatting many processors would) does not keep the reader
 * waiting, and the identity is the one the whole text gives. */
STC_TEST(cpu_identity_reads_only_the_first_processor_block) {
  static const char block[] =
      "processor\t: 0\nmodel name\t: Test CPU\nflags\t\t: sse2 avx2 fma\n\n"
      "processor\t: 1\nmodel name\t: Test CPU\n";
  char fifo[1024];
  snprintf(fifo, sizeof fifo, "%s/cpuinfo.fifo", stc_test_tmpdir());
  STC_CHECK(mkfifo(fifo, 0600) == 0);
  pid_t child = fork();
  STC_CHECK(child >= 0);
  if (child == 0) {
    FILE *out = fopen(fifo, "w");
    if (out) {
      fputs(block, out);
      fflush(out);
      sleep(5); /* the rest would come late */
      fclose(out);
    }
    _exit(0);
  }
  struct timespec start, end;
  clock_gettime(CLOCK_MONOTONIC, &start);
  char from_file[1024], from_text[1024];
  bool reliable = false;
  stc_status status = stc_rt__cpu_identity_from_file(
      fifo, from_file, sizeof from_file, &reliable);
  clock_gettime(CLOCK_MONOTONIC, &end);
  kill(child, SIGKILL);
  waitpid(child, NULL, 0);
  double seconds = (double)(end.tv_sec - start.tv_sec) +
                   (double)(end.tv_nsec - start.tv_nsec) / 1e9;
  STC_CHECK_EQ_INT(status, STC_OK);
  STC_CHECK(reliable);
  STC_CHECK(seconds < 4.0);
  STC_CHECK_EQ_INT(stc_rt__cpu_identity_from_text(block, "x86_64", from_text,
                                                  sizeof from_text, NULL),
                   STC_OK);
  /* Same CPU part (the arch is uname's in the file variant). */
  STC_CHECK_CONTAINS(from_file, ":Test CPU:avx2,fma,sse2");
  STC_CHECK_CONTAINS(from_text, ":Test CPU:avx2,fma,sse2");
}

/* Every CPUID bit the identity reads, all set: which features count depends
 * on the register state the OS saves (XCR0), as the kernel's flags do. */
STC_TEST(cpu_identity_from_cpuid_keeps_features_whose_state_the_os_saves) {
  stc_rt__x86_cpuid cpuid;
  memset(&cpuid, 0xff, sizeof cpuid);
  snprintf(cpuid.brand, sizeof cpuid.brand, "Test CPU");
  char buf[1024];
  static const char all[] =
      "abm,aes,amx_bf16,amx_int8,amx_tile,avx,avx2,avx512_bf16,"
      "avx512_bitalg,avx512_fp16,avx512_vbmi2,avx512_vnni,avx512_vpopcntdq,"
      "avx512bw,avx512cd,avx512dq,avx512f,avx512ifma,avx512vbmi,avx512vl,"
      "avx_vnni,bmi1,bmi2,f16c,fma,gfni,movbe,pni,popcnt,sha_ni,sse,sse2,"
      "sse4_1,sse4_2,ssse3,vaes,vpclmulqdq";
  static const char *const cases[][2] = {
      /* x87 | SSE | YMM | opmask | ZMM_Hi256 | Hi16_ZMM | XTILECFG/DATA */
      {"600e7", all},
      /* no tile state: no AMX */
      {"e7", "abm,aes,avx,avx2,avx512_bf16,avx512_bitalg,avx512_fp16,"
             "avx512_vbmi2,avx512_vnni,avx512_vpopcntdq,avx512bw,avx512cd,"
             "avx512dq,avx512f,avx512ifma,avx512vbmi,avx512vl,avx_vnni,bmi1,"
             "bmi2,f16c,fma,gfni,movbe,pni,popcnt,sha_ni,sse,sse2,sse4_1,"
             "sse4_2,ssse3,vaes,vpclmulqdq"},
      /* AVX-512 bits set but no opmask or ZMM state: AVX only */
      {"7", "abm,aes,avx,avx2,avx_vnni,bmi1,bmi2,f16c,fma,gfni,movbe,pni,"
            "popcnt,sha_ni,sse,sse2,sse4_1,sse4_2,ssse3,vaes,vpclmulqdq"},
      /* ZMM state without YMM state (no OS does this): nothing VEX/EVEX */
      {"e3", "abm,aes,bmi1,bmi2,gfni,movbe,pni,popcnt,sha_ni,sse,sse2,"
             "sse4_1,sse4_2,ssse3"},
      /* an OS without XSAVE: no XCR0 */
      {"0", "abm,aes,bmi1,bmi2,gfni,movbe,pni,popcnt,sha_ni,sse,sse2,"
            "sse4_1,sse4_2,ssse3"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    cpuid.xcr0 = strtoull(cases[i][0], NULL, 16);
    STC_CHECK_EQ_INT(stc_rt__cpu_identity_from_cpuid(&cpuid, "x86_64", buf,
                                                     sizeof buf),
                     STC_OK);
    char expected[1024];
    snprintf(expected, sizeof expected, "cpu:x86_64:Test CPU:%s", cases[i][1]);
    STC_CHECK_STR_EQ(buf, expected);
  }
  /* Every name is one the text path keeps (the allowlist): the same list
   * as /proc/cpuinfo flags gives the same identity. amx_fp16,
   * avx_vnni_int8 and avx_ne_convert (bits set above) never appear: the
   * kernel does not print them. */
  char text[2048], from_text[1024];
  snprintf(text, sizeof text, "model name\t: Test CPU\nflags\t\t: %s\n", all);
  for (char *c = text; *c; c++)
    if (*c == ',')
      *c = ' ';
  STC_CHECK_EQ_INT(stc_rt__cpu_identity_from_text(text, "x86_64", from_text,
                                                  sizeof from_text, NULL),
                   STC_OK);
  cpuid.xcr0 = 0x600e7;
  STC_CHECK_EQ_INT(
      stc_rt__cpu_identity_from_cpuid(&cpuid, "x86_64", buf, sizeof buf),
      STC_OK);
  STC_CHECK_STR_EQ(buf, from_text);
}

/* Bit positions: the leaves of a real CPU (an AMD EPYC VM, the machine
 * this was written on) give the features the kernel printed for it. */
STC_TEST(cpu_identity_from_cpuid_decodes_a_real_cpus_leaves) {
  stc_rt__x86_cpuid cpuid = {
      .leaf_1 = {0x00b00f21, 0x01020800, 0xfffa3203, 0x178bfbff},
      .leaf_7_0 = {0x00000001, 0xf1bf07ab, 0x00405fc6, 0x00000110},
      .leaf_7_1 = {0x00000030, 0, 0, 0},
      .leaf_80000001 = {0x00b00f21, 0x40000000, 0x004003f3, 0x2fd3fbff},
      .brand = "AMD EPYC",
      .xcr0 = 0xe7,
  };
  char buf[1024];
  STC_CHECK_EQ_INT(
      stc_rt__cpu_identity_from_cpuid(&cpuid, "x86_64", buf, sizeof buf),
      STC_OK);
  STC_CHECK_STR_EQ(
      buf, "cpu:x86_64:AMD EPYC:abm,aes,avx,avx2,avx512_bf16,avx512_bitalg,"
           "avx512_vbmi2,avx512_vnni,avx512_vpopcntdq,avx512bw,avx512cd,"
           "avx512dq,avx512f,avx512ifma,avx512vbmi,avx512vl,avx_vnni,bmi1,"
           "bmi2,f16c,fma,gfni,movbe,pni,popcnt,sha_ni,sse,sse2,sse4_1,"
           "sse4_2,ssse3,vaes,vpclmulqdq");
  /* Sapphire Rapids' leaf 7.0 EDX bits (Intel SDM): AMX-BF16 22,
   * AVX512-FP16 23, AMX-TILE 24, AMX-INT8 25. */
  memset(&cpuid, 0, sizeof cpuid);
  snprintf(cpuid.brand, sizeof cpuid.brand, "X");
  cpuid.leaf_7_0[3] = 1u << 22 | 1u << 24 | 1u << 25;
  cpuid.xcr0 = 0x600e7;
  STC_CHECK_EQ_INT(
      stc_rt__cpu_identity_from_cpuid(&cpuid, "x86_64", buf, sizeof buf),
      STC_OK);
  STC_CHECK_STR_EQ(buf, "cpu:x86_64:X:amx_bf16,amx_int8,amx_tile");
  cpuid.leaf_7_0[3] = 1u << 23;
  STC_CHECK_EQ_INT(
      stc_rt__cpu_identity_from_cpuid(&cpuid, "x86_64", buf, sizeof buf),
      STC_OK);
  STC_CHECK_STR_EQ(buf, "cpu:x86_64:X:avx512_fp16");
  cpuid.leaf_7_0[3] = 0;
  STC_CHECK_EQ_INT(
      stc_rt__cpu_identity_from_cpuid(&cpuid, "x86_64", buf, sizeof buf),
      STC_OK);
  STC_CHECK_STR_EQ(buf, "cpu:x86_64:X:");
}

/* The brand string becomes the model as /proc/cpuinfo's "model name" does;
 * without one the caller reads /proc/cpuinfo. */
STC_TEST(cpu_identity_from_cpuid_trims_the_brand_string) {
  stc_rt__x86_cpuid cpuid;
  memset(&cpuid, 0, sizeof cpuid);
  char buf[1024];
  snprintf(cpuid.brand, sizeof cpuid.brand,
           "   Intel(R) Xeon(R) CPU: E5;v4  @ 2.20GHz \t ");
  STC_CHECK_EQ_INT(
      stc_rt__cpu_identity_from_cpuid(&cpuid, "x86_64", buf, sizeof buf),
      STC_OK);
  STC_CHECK_STR_EQ(buf, "cpu:x86_64:Intel(R) Xeon(R) CPU_ E5_v4  @ 2.20GHz:");
  /* 49 bytes without a NUL: the 48 of the CPU are read, never more. */
  memset(cpuid.brand, 'A', sizeof cpuid.brand);
  STC_CHECK_EQ_INT(
      stc_rt__cpu_identity_from_cpuid(&cpuid, "x86_64", buf, sizeof buf),
      STC_OK);
  STC_CHECK_EQ_INT(strlen(buf), strlen("cpu:x86_64::") + 48);
  /* What the text path would see of a brand string with a line break. */
  snprintf(cpuid.brand, sizeof cpuid.brand, "Odd\nCPU");
  STC_CHECK_EQ_INT(
      stc_rt__cpu_identity_from_cpuid(&cpuid, "x86_64", buf, sizeof buf),
      STC_OK);
  STC_CHECK_STR_EQ(buf, "cpu:x86_64:Odd:");
  snprintf(cpuid.brand, sizeof cpuid.brand, "    ");
  STC_CHECK_EQ_INT(
      stc_rt__cpu_identity_from_cpuid(&cpuid, "x86_64", buf, sizeof buf),
      STC_ERR_NOT_FOUND);
  cpuid.brand[0] = 0;
  STC_CHECK_EQ_INT(
      stc_rt__cpu_identity_from_cpuid(&cpuid, "x86_64", buf, sizeof buf),
      STC_ERR_NOT_FOUND);
  snprintf(cpuid.brand, sizeof cpuid.brand, "Test CPU");
  memset(cpuid.leaf_1, 0xff, sizeof cpuid.leaf_1);
  STC_CHECK_EQ_INT(
      stc_rt__cpu_identity_from_cpuid(&cpuid, "x86_64", buf, 24),
      STC_ERR_INVALID);
  STC_CHECK_EQ_INT(
      stc_rt__cpu_identity_from_cpuid(&cpuid, "x86_64", buf, 12),
      STC_ERR_INVALID);
  STC_CHECK_EQ_INT(
      stc_rt__cpu_identity_from_cpuid(NULL, "x86_64", buf, sizeof buf),
      STC_ERR_INVALID);
}

/* Whether the kernel was told to hide CPU features (its flags then lack
 * some that CPUID reports) or to leave extended state off. */
static bool kernel_hides_features(void) {
  size_t size = 0;
  char *cmdline = stc_test_read_file("/proc/cmdline", &size);
  if (!cmdline)
    return false;
  bool hides = strstr(cmdline, "clearcpuid") || strstr(cmdline, "noxsave") ||
               strstr(cmdline, "gather_data_sampling=force");
  free(cmdline);
  return hides;
}

/* On this machine, the identity from CPUID is the one /proc/cpuinfo gives
 * (so that profiles and caches keyed before the switch stay valid), and
 * glibc's record of the feature leaves gives it too. The model
 * must always match (the kernel prints the brand string). The features can
 * legitimately differ where the kernel was told to hide some
 * (clearcpuid=, noxsave, gather_data_sampling=force hides AVX): then only
 * the model is compared. A kernel older than the CPU (it has no name for a
 * new flag, or it lists AMX without enabling its state, as before 5.16)
 * fails here, on purpose: its fingerprints would change with this reader. */
STC_TEST(cpu_identity_from_cpuid_equals_proc_cpuinfo_here) {
  stc_rt__x86_cpuid cpuid, from_libc;
  if (!stc_rt__x86_cpuid_read(&cpuid, false))
    STC_SKIP("no CPUID on this machine (not x86): the runtime reads "
             "/proc/cpuinfo");
  STC_CHECK(stc_rt__x86_cpuid_read(&from_libc, true));
  char from_cpuid[1024], from_file[1024], via_libc[1024];
  stc_status status = stc_rt__cpu_identity_from_cpuid(
      &cpuid, "x86_64", from_cpuid, sizeof from_cpuid);
  if (status == STC_ERR_NOT_FOUND)
    STC_SKIP("this CPU has no brand string: the runtime reads /proc/cpuinfo");
  STC_CHECK_EQ_INT(status, STC_OK);
  /* glibc's record of the leaves decodes as CPUID's own answers do (glibc
   * may adjust bits the identity does not read, such as TSX's). */
  STC_CHECK_EQ_INT(stc_rt__cpu_identity_from_cpuid(&from_libc, "x86_64",
                                                   via_libc, sizeof via_libc),
                   STC_OK);
  STC_CHECK_STR_EQ(via_libc, from_cpuid);
  if (access("/proc/cpuinfo", R_OK) != 0)
    STC_SKIP("/proc/cpuinfo is not readable here: nothing to compare with");
  bool reliable = false;
  STC_CHECK_EQ_INT(stc_rt__cpu_identity_from_file(
                       "/proc/cpuinfo", from_file, sizeof from_file, &reliable),
                   STC_OK);
  STC_CHECK(reliable);
  /* "cpu:<arch>:" is uname's in the file variant: compare from the model. */
  const char *cpuid_model = strchr(from_cpuid + 4, ':');
  const char *file_model = strchr(from_file + 4, ':');
  STC_CHECK(cpuid_model && file_model);
  if (kernel_hides_features()) {
    fprintf(stderr, "the kernel hides CPU features here (/proc/cmdline): "
                    "comparing the model only\n");
    STC_CHECK_EQ_INT(strrchr(cpuid_model, ':') - cpuid_model,
                     strrchr(file_model, ':') - file_model);
    STC_CHECK(strncmp(cpuid_model, file_model,
                      (size_t)(strrchr(file_model, ':') - file_model)) == 0);
  } else {
    STC_CHECK_STR_EQ(cpuid_model, file_model);
  }

  /* What the runtime itself uses. */
  char environment[2048];
  STC_CHECK_EQ_INT(stc_rt_environment(environment, sizeof environment),
                   STC_OK);
  STC_CHECK(strncmp(environment, from_file, cpuid_model - from_cpuid) == 0);
  STC_CHECK(strncmp(environment + (file_model - from_file), cpuid_model,
                    strlen(cpuid_model)) == 0);
  STC_CHECK(stc_rt_environment_reliable());
}

STC_TEST(symbols_table_lists_the_region_timer) {
  size_t count = 0;
  const stc_rt_symbol *symbols = stc_rt_symbols(&count);
  int found_begin = 0, found_end = 0;
  for (size_t i = 0; i < count; i++) {
    if (strcmp(symbols[i].name, "stc_rt_region_begin") == 0)
      found_begin = symbols[i].address == (void *)stc_rt_region_begin;
    if (strcmp(symbols[i].name, "stc_rt_region_end") == 0)
      found_end = symbols[i].address == (void *)stc_rt_region_end;
  }
  STC_CHECK(found_begin && found_end);
  STC_CHECK_EQ_INT(stc_rt_abi_version(), STC_RT_ABI_VERSION);
}

/* memrefCopy (runtime/memref_copy.c), what the memref-to-LLVM lowering
 * calls for a non-contiguous memref.copy: a transposed 3x4 view copied
 * into a dense 3x4 buffer, a strided 2x2 window of it back, a rank-0 copy,
 * and an empty shape that copies nothing. */
typedef struct unranked_arg {
  int64_t rank;
  void *descriptor;
} unranked_arg;

void memrefCopy(int64_t elem_size, unranked_arg *src, unranked_arg *dst);

typedef struct descriptor2 {
  float *allocated, *aligned;
  int64_t offset, sizes[2], strides[2];
} descriptor2;

STC_TEST(memref_copy_strided_transposed_and_rank0) {
  float a[12], dense[12], window[4] = {0};
  for (int i = 0; i < 12; i++)
    a[i] = (float)i; /* a is 4x3, row-major */
  /* a^T: 3x4 with strides {1, 3}. */
  descriptor2 at = {a, a, 0, {3, 4}, {1, 3}};
  descriptor2 out = {dense, dense, 0, {3, 4}, {4, 1}};
  unranked_arg src = {2, &at}, dst = {2, &out};
  memrefCopy(sizeof(float), &src, &dst);
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 4; j++)
      STC_CHECK(dense[i * 4 + j] == a[j * 3 + i]);
  /* dense[1:3, 1:3:2] (offset 5, strides {4, 2}) into a 2x2 buffer. */
  descriptor2 sub = {dense, dense, 5, {2, 2}, {4, 2}};
  descriptor2 win = {window, window, 0, {2, 2}, {2, 1}};
  src.descriptor = &sub;
  dst.descriptor = &win;
  memrefCopy(sizeof(float), &src, &dst);
  STC_CHECK(window[0] == dense[5] && window[1] == dense[7]);
  STC_CHECK(window[2] == dense[9] && window[3] == dense[11]);
  /* An empty shape copies nothing. */
  descriptor2 empty = {a, a, 0, {0, 4}, {4, 1}};
  float before = dense[0];
  src.descriptor = &empty;
  dst.descriptor = &out;
  memrefCopy(sizeof(float), &src, &dst);
  STC_CHECK(dense[0] == before);
  /* Rank 0: one element, at the offsets. */
  struct {
    float *allocated, *aligned;
    int64_t offset;
  } s0 = {a, a, 7}, d0 = {window, window, 1};
  unranked_arg r0s = {0, &s0}, r0d = {0, &d0};
  memrefCopy(sizeof(float), &r0s, &r0d);
  STC_CHECK(window[1] == 7.0f);
}

/* The variable as the process started with it (/proc/self/environ: what
 * exec passed, which setenv does not change); false when it had none. */
static bool initial_env(const char *name, char *out, size_t size) {
  FILE *f = fopen("/proc/self/environ", "rb");
  if (!f)
    return false;
  size_t len = strlen(name);
  char entry[4096];
  size_t n = 0;
  bool found = false;
  int c;
  while (!found && (c = fgetc(f)) != EOF) {
    if (c != 0) {
      if (n + 1 < sizeof entry)
        entry[n++] = (char)c;
      continue;
    }
    entry[n] = 0;
    n = 0;
    if (strncmp(entry, name, len) == 0 && entry[len] == '=') {
      snprintf(out, size, "%s", entry + len + 1);
      found = true;
    }
  }
  fclose(f);
  return found;
}

/* libomp's idle workers spin 200 ms after each parallel region, taking a
 * core from the BLAS call that follows: the runtime caps it at 1 ms unless
 * the user chose a blocktime or a wait policy, in libomp itself
 * (kmp_set_defaults, before it starts), never in the environment. */
static char g_set_defaults_text[64];
static int g_set_defaults_calls;
static void fake_set_defaults(const char *text) {
  snprintf(g_set_defaults_text, sizeof g_set_defaults_text, "%s", text);
  g_set_defaults_calls++;
}

STC_TEST(runtime_caps_openmp_idle_spin_unless_the_user_set_it) {
  char own[256] = "", policy[256] = "";
  bool had_own = initial_env("KMP_BLOCKTIME", own, sizeof own);
  bool had_policy = initial_env("OMP_WAIT_POLICY", policy, sizeof policy);
  /* Loading the runtime left the environment as the process got it. */
  const char *now = getenv("KMP_BLOCKTIME");
  STC_CHECK_STR_EQ(now ? now : "(unset)", had_own ? own : "(unset)");

  unsetenv("KMP_BLOCKTIME");
  unsetenv("OMP_WAIT_POLICY");
  STC_CHECK(!stc_rt__openmp_spin_cap(NULL)); /* no libomp */
  STC_CHECK(stc_rt__openmp_spin_cap(fake_set_defaults));
  STC_CHECK_STR_EQ(g_set_defaults_text, "KMP_BLOCKTIME=1");
  setenv("KMP_BLOCKTIME", "", 1); /* empty: not a choice */
  STC_CHECK(stc_rt__openmp_spin_cap(fake_set_defaults));
  setenv("KMP_BLOCKTIME", "50", 1);
  STC_CHECK(!stc_rt__openmp_spin_cap(fake_set_defaults));
  unsetenv("KMP_BLOCKTIME");
  setenv("OMP_WAIT_POLICY", "active", 1);
  STC_CHECK(!stc_rt__openmp_spin_cap(fake_set_defaults));
  STC_CHECK_EQ_INT(g_set_defaults_calls, 2);
  unsetenv("OMP_WAIT_POLICY");
#ifdef STC_LIBOMP
  /* A libomp loaded by a host (stc-run's preload): capped before it starts
   * (here: its first call), and the environment untouched. */
  void *omp = dlopen(STC_LIBOMP, RTLD_NOW | RTLD_LOCAL);
  STC_CHECK(omp != NULL);
  if (omp) {
    STC_CHECK(stc_rt_cap_openmp_spin(omp));
    int (*blocktime)(void) = (int (*)(void))dlsym(omp, "kmp_get_blocktime");
    STC_CHECK(blocktime != NULL);
    if (blocktime)
      STC_CHECK_EQ_INT(blocktime(), 1);
    STC_CHECK(getenv("KMP_BLOCKTIME") == NULL);
  }
#endif
  if (had_own)
    setenv("KMP_BLOCKTIME", own, 1);
  if (had_policy)
    setenv("OMP_WAIT_POLICY", policy, 1);
}
