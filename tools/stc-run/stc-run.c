/* stc-run - runs an MLIR module in process, like mlir-runner, with
 * libstc_rt's entry points registered so that an instrumented module records
 * regions and writes $STC_PROFILE_OUT.
 *
 * One path for cold and warm starts: the LLVM-dialect module becomes PIC
 * host-CPU objects in memory (tools/common/stc_emit.c), which LLVM's ORC
 * LLJIT links into the process; the entry is called directly. For the
 * object cache (stc/object_cache.h, beside the tuning cache, keyed by a hash
 * of the input and of everything else that changes the code), an ELF linker
 * makes the objects one shared library (object_merge.h), which the run and
 * later starts load with dlopen instead (load_library); a hit skips
 * parsing, the --tune-hot-paths pipeline, code generation and linking.
 * This file is the driver, which links neither LLVM nor MLIR: what needs
 * MLIR is the compiler module (compiler.h), loaded on a miss only, and what
 * needs LLVM the JIT module (jit.h), loaded only to link objects, so that a
 * hit pays neither libMLIR's 8 ms nor libLLVM's 9 ms of dynamic linking
 * (the object cache's key reads the CPU itself: host_identity.h); for the
 * same reason MLIR's runner utilities (which load libMLIR) give way to
 * stc's own (stc/runner_utils.h) and are loaded only for a symbol only they
 * define. Lazy variants: when nothing is stored, the non-reference variants
 * of the dispatch sites are left out of the objects and compiled when first
 * needed: before their site explores, or on their first call
 * (stc_emit_lazy; the JIT module's lazy units).
 *
 * In: a module already lowered to the LLVM dialect (file or stdin), the entry
 * point name and result type, shared libraries. Out: whatever the program
 * prints, then the entry's result (non-void) on stdout; the profile.
 * Exit codes: 0 ok, 1 failure (unknown entry, bad signature, JIT or library
 * failure, --tune-hot-paths unavailable), 2 bad option, 3 unreadable,
 * unparsable or not-yet-lowered input. */
#include "compiler.h"
#include "object_merge.h"
#include "openmp_jit.h"
#include "run_common.h"
#include "stc/hash.h"
#include "stc/input_bounds.h"
#include "stc/object_cache.h"
#include "stc/object_remote.h"
#include "stc/rt.h"
#include "stc/runner_utils.h"
#include "stc/status.h"
#include "stc/tuner_cache.h"
#include "host_identity.h"
#include "jit.h"
#include "stc_diagnostic_text.h"
#include "stc_emit_objects.h"
#include "tune_pipeline_facts.h"

#include <dlfcn.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <linux/memfd.h>
#include <sys/syscall.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef struct run_options {
  const char *input;      /* "-" = stdin */
  const char *entry;      /* without '@' */
  result_kind result;
  int opt_level;          /* 0-3 */
  char **shared_libs;     /* owned array of owned strings */
  size_t num_shared_libs;
  bool default_libs;      /* MLIR's runner utils (preload_libraries) */
  bool tune_hot_paths;
  const char *hot_path_profile; /* NULL = static cost estimate */
  const char *variant_library;  /* NULL = built-in schedules only */
  const char *schedule_options; /* NULL = the scheduling pass's defaults */
  const char *default_lowering; /* "fast" (NULL) or "loops" */
  bool object_cache;            /* --no-object-cache turns it off */
  bool timing;                  /* --timing or STC_RUN_TIMING=1 */
  int compile_threads; /* STC_RUN_COMPILE_THREADS, 1-8; 0: automatic */
} run_options;

/* A runner's output is the program's: the scheduling pass's remarks (one
 * per region) are shown only on request. */
static bool g_show_remarks;

static const char usage_text[] =
    "usage: stc-run [options] [file|-]\n"
    "\n"
    "Runs a module lowered to the LLVM dialect: compiles it to a host object\n"
    "in memory and links it into the process (LLVM ORC), with libstc_rt's\n"
    "region timer registered: an instrumented module writes its profile to\n"
    "$STC_PROFILE_OUT at the end. The object is cached on disk beside the\n"
    "tuning cache ($STC_CACHE_DIR/objects-v1): a second start with the same\n"
    "input and options loads it instead of compiling. With\n"
    "STC_CACHE_REMOTE_OBJECTS=1, STC_CACHE_REMOTE=redis://... and\n"
    "STC_CACHE_REMOTE_KEY_FILE=<fleet key>, objects are also shared through\n"
    "the fleet's Redis, authenticated with HMAC-SHA256 (README, \"Fleet cache\n"
    "(Redis)\").\n"
    "\n"
    "  -e <name>, -e=<name>         entry point (default: main); it takes no\n"
    "                               arguments\n"
    "  --entry-point-result=<t>     void (default), i32, i64 or f32; a\n"
    "                               non-void result is printed like mlir-runner\n"
    "  --shared-libs=<a.so,b.so>    libraries to load (repeatable)\n"
    "  --no-default-shared-libs     do not provide MLIR's runner utilities\n"
    "                               (printMemref*, memrefCopy, ...: stc's\n"
    "                               own, then libmlir_runner_utils.so and\n"
    "                               libmlir_c_runner_utils.so for the rest)\n"
    "  -O0 -O1 -O2 -O3              LLVM optimization level (default -O2)\n"
    "  --tune-hot-paths             lower linalg (or TOSA) with tunable sites\n"
    "  --hot-path-profile=<file>    profile for --tune-hot-paths\n"
    "  --hot-path-options='k=v ...' stc-hot-path-schedule options for\n"
    "                               --tune-hot-paths (e.g. min-samples=2)\n"
    "  --variant-library=<file>     YAML file of extra schedules for\n"
    "                               --tune-hot-paths\n"
    "  --default-lowering=fast|loops  what ops without variants and site\n"
    "                               references become: tiled + vectorized\n"
    "                               (fast, default) or scalar loops (the\n"
    "                               test oracle)\n"
    "  --remarks                    print the compiler's remarks (the\n"
    "                               scheduling decisions); off by default\n"
    "  --no-object-cache            neither load nor store compiled code\n"
    "  --timing                     print the start-up phases' times and the\n"
    "                               object cache's outcome on stderr (also\n"
    "                               STC_RUN_TIMING=1)\n"
    "  --help, --version\n"
    "\n"
    "A compile splits the module into partitions optimized and emitted on\n"
    "separate threads: as many as online CPUs (at most 8; fewer for a small\n"
    "module), or STC_RUN_COMPILE_THREADS=<1-8> (1: one object, optimized\n"
    "whole). For the object cache, an ELF linker (ld.lld, or\n"
    "STC_RUN_LINKER=<path>; none: no linking) merges them and links a shared\n"
    "library, which the run and later starts load with dlopen; the automatic\n"
    "count is then two partitions per CPU.\n"
    "\n"
    "A compile not stored in the object cache (--no-object-cache) leaves\n"
    "each site's variants other than its reference until first needed:\n"
    "before the site explores (in parallel), or on their first call\n"
    "(STC_RUN_LAZY_VARIANTS=0: before the entry runs, like the rest).\n"
    "\n"
    "A module with parallel variants loads libomp when the first of them\n"
    "runs, not before the entry (STC_RUN_LAZY_OPENMP=0: before).\n"
    "\n"
    "A start whose object cache holds the module loads neither MLIR nor\n"
    "LLVM: the compiler (stc-run-compiler.so, beside stc's libraries, or\n"
    "$STC_RUN_COMPILER) is loaded only to compile, the JIT\n"
    "(stc-run-jit.so, beside it, or $STC_RUN_JIT) only to link objects.\n"
    "\n"
    "Exit status: 0 ok, 1 run failure, 2 bad option, 3 bad input.\n";

/* ---- options ---- */

static void options_free(run_options *options) {
  for (size_t i = 0; i < options->num_shared_libs; i++)
    free(options->shared_libs[i]);
  free(options->shared_libs);
  options->shared_libs = NULL;
  options->num_shared_libs = 0;
}

/* Appends each comma-separated piece of list; false without memory. */
static bool add_shared_libs(run_options *options, const char *list) {
  for (const char *p = list; *p;) {
    const char *comma = strchr(p, ',');
    size_t length = comma ? (size_t)(comma - p) : strlen(p);
    if (length > 0) {
      char **grown = realloc(options->shared_libs,
                             (options->num_shared_libs + 1) * sizeof *grown);
      if (!grown)
        return false;
      options->shared_libs = grown;
      char *copy = strndup(p, length);
      if (!copy)
        return false;
      options->shared_libs[options->num_shared_libs++] = copy;
    }
    p += length + (comma ? 1 : 0);
  }
  return true;
}

/* Matches "--name=value" (returns value) or "--name value" (consumes the
 * next argument); NULL when arg is not this option. *missing is set when the
 * option is present without a value. */
static const char *option_value(const char *name, int argc, char **argv,
                                int *i, bool *missing) {
  size_t length = strlen(name);
  const char *arg = argv[*i];
  if (strncmp(arg, name, length) != 0)
    return NULL;
  if (arg[length] == '=')
    return arg + length + 1;
  if (arg[length] != 0)
    return NULL;
  if (*i + 1 >= argc) {
    *missing = true;
    return NULL;
  }
  return argv[++*i];
}

/* Returns -1 to go on, or an exit code (after --help, --version, errors). */
static int options_parse(int argc, char **argv, run_options *options) {
  *options = (run_options){.input = NULL, .entry = "main",
                           .result = RESULT_VOID, .opt_level = 2,
                           .default_libs = true, .object_cache = true};
  const char *timing_env = getenv("STC_RUN_TIMING");
  options->timing = timing_env && strcmp(timing_env, "1") == 0;
  const char *threads_env = getenv("STC_RUN_COMPILE_THREADS");
  if (threads_env && *threads_env) {
    char *end = NULL;
    errno = 0;
    long threads = strtol(threads_env, &end, 10);
    if (errno || *end || threads < 1 || threads > STC_EMIT_MAX_PARTITIONS) {
      stc_run_error("invalid STC_RUN_COMPILE_THREADS '%s' (expected 1 to %d)",
                    threads_env, STC_EMIT_MAX_PARTITIONS);
      return EXIT_USAGE;
    }
    options->compile_threads = (int)threads;
  }
  for (int i = 1; i < argc; i++) {
    const char *arg = argv[i];
    bool missing = false;
    const char *value;
    if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
      fputs(usage_text, stdout);
      return EXIT_OK;
    }
    if (strcmp(arg, "--version") == 0) {
      printf("stc-run %s\n", stc_version());
      return EXIT_OK;
    }
    if ((value = option_value("-e", argc, argv, &i, &missing)) ||
        (value = option_value("--entry-point", argc, argv, &i, &missing))) {
      if (value[0] == '@')
        value++;
      if (!*value) {
        stc_run_error("option '-e' needs a function name");
        return EXIT_USAGE;
      }
      options->entry = value;
    } else if ((value = option_value("--entry-point-result", argc, argv, &i,
                                     &missing))) {
      size_t k = 0;
      while (k < 4 && strcmp(value, stc_run_result_names[k]) != 0)
        k++;
      if (k == 4) {
        stc_run_error(
            "unsupported --entry-point-result '%s' (expected void, i32, "
            "i64 or f32)",
            value);
        return EXIT_USAGE;
      }
      options->result = (result_kind)k;
    } else if ((value = option_value("--shared-libs", argc, argv, &i,
                                      &missing))) {
      if (!add_shared_libs(options, value)) {
        stc_run_error("out of memory");
        return EXIT_FAILURE_RUN;
      }
    } else if ((value = option_value("--hot-path-profile", argc, argv, &i,
                                     &missing))) {
      options->hot_path_profile = value;
    } else if ((value = option_value("--variant-library", argc, argv, &i,
                                     &missing))) {
      options->variant_library = value;
    } else if ((value = option_value("--hot-path-options", argc, argv, &i,
                                     &missing))) {
      options->schedule_options = value;
    } else if ((value = option_value("--default-lowering", argc, argv, &i,
                                     &missing))) {
      if (!stc_tune_default_lowering_valid(value)) {
        stc_run_error(
            "invalid value '%s' for option '--default-lowering' (expected "
            "fast or loops)",
            value);
        return EXIT_USAGE;
      }
      options->default_lowering = value;
    } else if (missing) {
      stc_run_error("option '%s' needs a value", arg);
      return EXIT_USAGE;
    } else if (strcmp(arg, "--no-default-shared-libs") == 0) {
      options->default_libs = false;
    } else if (strcmp(arg, "--tune-hot-paths") == 0) {
      options->tune_hot_paths = true;
    } else if (strcmp(arg, "--remarks") == 0) {
      g_show_remarks = true;
    } else if (strcmp(arg, "--no-object-cache") == 0) {
      options->object_cache = false;
    } else if (strcmp(arg, "--timing") == 0) {
      options->timing = true;
    } else if (strlen(arg) == 3 && arg[0] == '-' && arg[1] == 'O' &&
               arg[2] >= '0' && arg[2] <= '3') {
      options->opt_level = arg[2] - '0';
    } else if (arg[0] == '-' && arg[1] != 0) {
      stc_run_error("unknown option '%s' (see stc-run --help)", arg);
      return EXIT_USAGE;
    } else if (options->input) {
      stc_run_error("more than one input file ('%s' and '%s')", options->input,
                    arg);
      return EXIT_USAGE;
    } else {
      options->input = arg;
    }
    if (missing) {
      stc_run_error("option '%s' needs a value", arg);
      return EXIT_USAGE;
    }
  }
  if ((options->hot_path_profile || options->variant_library ||
       options->schedule_options || options->default_lowering) &&
      !options->tune_hot_paths) {
    stc_run_error("%s needs --tune-hot-paths",
                  options->hot_path_profile   ? "--hot-path-profile"
                  : options->variant_library  ? "--variant-library"
                  : options->default_lowering ? "--default-lowering"
                                              : "--hot-path-options");
    return EXIT_USAGE;
  }
  if (!options->input)
    options->input = "-";
  return -1;
}

/* ---- input ---- */

/* Reads a whole file ("-" = stdin) of at most STC_MAX_INPUT_BYTES into a
 * NUL-terminated buffer the caller frees; NULL after printing why. */
static char *read_input(const char *path, size_t *length) {
  char *text = NULL;
  stc_error err;
  stc_error_clear(&err);
  stc_read_limit_spec limit = {"STC_MAX_INPUT_BYTES",
                               STC_MAX_INPUT_BYTES_DEFAULT};
  if (stc_read_file_limited(path, 1, "input", limit, &text, length, &err) ==
      STC_OK)
    return text;
  if (errno) {
    stc_run_error("cannot read '%s': %s", path, strerror(errno));
  } else {
    char message[sizeof err.file + sizeof err.message + 64];
    stc_error_format(&err, message, sizeof message);
    stc_run_error("%s", message);
  }
  return NULL;
}

/* The nesting bound (STC_MAX_NESTING), or false after saying why its
 * setting is malformed: checked on every start, hit or miss. */
static bool nesting_limit(size_t *limit) {
  stc_read_limit_spec spec = {"STC_MAX_NESTING", STC_MAX_NESTING_DEFAULT};
  stc_error err;
  stc_error_clear(&err);
  if (stc_read_limit(spec, limit, &err) == STC_OK)
    return true;
  stc_run_error("%s", err.message);
  return false;
}

/* False, after printing a located error, when the input nests brackets
 * deeper than limit: MLIR's recursive parser must never see it. Only a
 * miss parses, so only a miss scans (~50 us of a warm start). */
static bool nesting_ok(const char *text, size_t length, const char *name,
                       size_t limit) {
  unsigned line, column;
  if (!stc_text_nesting_exceeds(text, length, limit, &line, &column))
    return true;
  fprintf(stderr,
          "%s:%u:%u: error: brackets nested deeper than %zu levels "
          "(STC_MAX_NESTING)\n",
          name, line, column, limit);
  return false;
}

/* ---- the compiler module (compiler.h) ---- */

#ifndef STC_RUN_COMPILER_RELATIVE
#define STC_RUN_COMPILER_RELATIVE "../lib/stc/stc-run-compiler.so"
#endif

/* Loaded on the first compile; NULL before (a hit never loads it). */
static const stc_run_compiler *g_compiler;

/* relative, from stc-run's own folder, into path (size bytes); false when
 * /proc/self/exe cannot be read or the result does not fit. */
static bool beside_stc_run(const char *relative, char *path, size_t size) {
  char exe[4096];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n <= 0 || (size_t)n >= sizeof exe - 1)
    return false;
  exe[n] = 0;
  strrchr(exe, '/')[1] = 0;
  return (size_t)snprintf(path, size, "%s%s", exe, relative) < size;
}

/* A loadable part of stc-run (compiler.h, jit.h): a module beside the
 * executable whose one exported function returns its table. */
typedef struct loadable_part {
  const char *name;     /* for messages: stc-run's <name> */
  const char *setting;  /* the environment variable that names its path */
  const char *relative; /* its path from stc-run's directory */
  const char *symbol;   /* the function that returns its table */
  unsigned abi;         /* the table's interface this stc-run speaks */
  const char *purpose;  /* what it is loaded for, for messages */
  const stc_run_part_header *table; /* once loaded */
} loadable_part;

static loadable_part g_compiler_part = {
    "compiler", "STC_RUN_COMPILER", STC_RUN_COMPILER_RELATIVE,
    STC_RUN_COMPILER_SYMBOL, STC_RUN_COMPILER_ABI,
    "it compiles what the object cache does not hold", NULL};
static loadable_part g_jit_part = {
    "JIT", "STC_RUN_JIT", STC_RUN_JIT_RELATIVE, STC_RUN_JIT_SYMBOL,
    STC_RUN_JIT_ABI, "it links compiled objects into the process", NULL};

/* Loads a part once: from $<setting>, else from <relative> to the
 * directory of stc-run's executable (the build and the install trees lay
 * them out alike). False after saying why. */
static bool load_part(loadable_part *part) {
  if (part->table)
    return true;
  const char *setting = getenv(part->setting);
  char path[8192];
  if (setting && *setting)
    snprintf(path, sizeof path, "%s", setting);
  else if (!beside_stc_run(part->relative, path, sizeof path))
    snprintf(path, sizeof path, "%s", part->relative); /* from the cwd */
  void *handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  const stc_run_part_header *(*get)(void) =
      handle ? (const stc_run_part_header *(*)(void))dlsym(handle, part->symbol)
             : NULL;
  const stc_run_part_header *table = get ? get() : NULL;
  if (!table) {
    const char *reason = dlerror();
    stc_run_error("cannot load stc-run's %s '%s': %s (%s; set %s to its "
                  "path, or reinstall stc)",
                  part->name, path, reason ? reason : "no table", part->purpose,
                  part->setting);
  } else if (table->abi != part->abi ||
             strcmp(table->version, stc_version()) != 0) {
    stc_run_error("stc-run's %s '%s' belongs to another build (stc %s, "
                  "interface %u; this stc-run is %s, interface %u): install "
                  "them together",
                  part->name, path, table->version, table->abi, stc_version(),
                  part->abi);
    table = NULL;
  }
  if (!table && handle)
    dlclose(handle);
  part->table = table;
  return table != NULL;
}

/* Loads the compiler module (with it libMLIR); false after saying why. */
static bool load_compiler(void) {
  if (!load_part(&g_compiler_part))
    return false;
  g_compiler = (const stc_run_compiler *)g_compiler_part.table;
  return true;
}

/* Lazy units exist only after a compile, so only with the module. */
static size_t lazy_units(const stc_emit_lazy *lazy) {
  return lazy ? g_compiler->lazy_units(lazy) : 0;
}

/* ---- loading: libraries, then the object through ORC LLJIT ---- */

#ifndef STC_MLIR_RUNNER_LIB_DIR
#define STC_MLIR_RUNNER_LIB_DIR "/usr/lib/llvm-22/lib"
#endif

static const char *const default_libs[] = {
    STC_MLIR_RUNNER_LIB_DIR "/libmlir_runner_utils.so",
    STC_MLIR_RUNNER_LIB_DIR "/libmlir_c_runner_utils.so",
};
/* With the default libraries, the JIT defines stc's own runner utilities
 * (stc/runner_utils.h: the printers, the clocks, memrefCopy) and loads
 * upstream's only when the module needs a symbol nothing else defines
 * (load_libraries_on_lookup): both load libMLIR.so, 8 ms of relocations,
 * which a model that prints with printMemrefF32 does not need. Set by
 * preload_libraries. */
static bool g_default_libs_on_lookup;
/* For a module with OpenMP ops (the parallel schedules), whose translation
 * calls __kmpc_* entry points: not loaded before the module runs (1-1.5 ms
 * of a start, and libomp's destructor at exit) but by the first of them
 * that runs (openmp_jit.h), which a warm start whose sites keep their
 * references never calls. */
static const char *const openmp_lib = STC_MLIR_RUNNER_LIB_DIR "/libomp.so";
/* Set by preload_libraries: the JIT defines the lazy entry points
 * (load_objects). */
static bool g_openmp_on_first_call;

/* Loads each library once up front (RTLD_GLOBAL: the JIT resolves the
 * object's undefined symbols in the process), so that a missing or broken
 * one is a clear error instead of an unresolved symbol later. MLIR's
 * ExecutionEngine would also call a library's __mlir_execution_engine_init
 * (a C++ symbol-map protocol, used by upstream's async runtime): stc-run
 * cannot, and says so instead of failing later. */
static bool library_loaded(const char *path, void *handle) {
  if (!handle) {
    const char *reason = dlerror();
    stc_run_error("cannot load shared library '%s': %s", path,
                  reason ? reason : "unknown error");
    return false;
  }
  if (dlsym(handle, "__mlir_execution_engine_init")) {
    stc_run_error(
        "shared library '%s' registers its symbols through "
        "__mlir_execution_engine_init, which stc-run does not support",
        path);
    return false;
  }
  /* libomp (or a library that brought it), before the module's first
   * parallel region starts it: the idle-spin cap (stc/rt.h). */
  stc_rt_cap_openmp_spin(handle);
  return true;
}

static bool preload_library(const char *path) {
  return library_loaded(path, dlopen(path, RTLD_NOW | RTLD_GLOBAL));
}

/* Libraries loaded when first needed: by the JIT (globally, for the
 * process lookup after its generator) when it first looks up a symbol
 * that needs them. */
typedef struct libraries_on_lookup {
  bool (*needs)(const char *symbol);
  const char *const *paths;
  size_t count;
  const char *what; /* for the error */
  pthread_mutex_t lock;
  bool loaded; /* under lock */
} libraries_on_lookup;

/* An OpenMP entry point the lazy ones do not cover (one that
 * convert-scf-to-openmp did not emit when they were written). */
static bool openmp_symbol(const char *symbol) {
  return strncmp(symbol, "__kmpc_", 7) == 0 || strncmp(symbol, "omp_", 4) == 0;
}

/* A symbol that libstc_rt, stc's runner utilities and the process do not
 * define (a sparse-tensor or sort helper of upstream's runner utilities, a
 * printer stc does not have). */
static bool not_in_process(const char *symbol) {
  return !dlsym(RTLD_DEFAULT, symbol);
}

static libraries_on_lookup g_openmp_loader = {
    .needs = openmp_symbol,
    .paths = &openmp_lib,
    .count = 1,
    .what = "the OpenMP runtime",
    .lock = PTHREAD_MUTEX_INITIALIZER,
};
static libraries_on_lookup g_default_libs_loader = {
    .needs = not_in_process,
    .paths = default_libs,
    .count = sizeof default_libs / sizeof *default_libs,
    .what = "MLIR's runner utilities",
    .lock = PTHREAD_MUTEX_INITIALIZER,
};

/* Loads libs once (false after saying why). Thread-safe. */
static bool load_libraries(libraries_on_lookup *libs) {
  pthread_mutex_lock(&libs->lock);
  bool loaded = libs->loaded;
  for (size_t k = 0; !loaded && k < libs->count; k++)
    if (!preload_library(libs->paths[k]))
      break;
    else
      loaded = k + 1 == libs->count;
  libs->loaded = loaded;
  pthread_mutex_unlock(&libs->lock);
  return loaded;
}

static bool preload_libraries(const run_options *options, bool openmp) {
  /* The default libraries on the first symbol only they define; one that
   * is not there is an error now, as when they were loaded here. */
  if (options->default_libs) {
    for (size_t i = 0; i < sizeof default_libs / sizeof *default_libs; i++)
      if (access(default_libs[i], R_OK) != 0) {
        stc_run_error("cannot load shared library '%s': %s", default_libs[i],
                      strerror(errno));
        return false;
      }
    g_default_libs_on_lookup = true;
  }
  /* libomp on first use; one that is not there is an error now, as when
   * it was loaded here (dlopen says why), not on the first parallel call.
   * Without the default libraries the user's provide the entry points;
   * STC_RUN_LAZY_OPENMP=0 loads it here, before the module runs. */
  if (openmp && options->default_libs) {
    const char *setting = getenv("STC_RUN_LAZY_OPENMP");
    if (access(openmp_lib, R_OK) != 0 ||
        (setting && strcmp(setting, "0") == 0)) {
      if (!preload_library(openmp_lib))
        return false;
    } else {
      g_openmp_on_first_call = true;
    }
  }
  for (size_t i = 0; i < options->num_shared_libs; i++) {
    const char *path = options->shared_libs[i];
    void *handle = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
    /* One that needs upstream's runner utilities without naming them
     * (they used to be loaded before it): again, with them. */
    if (!handle && g_default_libs_on_lookup &&
        load_libraries(&g_default_libs_loader))
      handle = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
    if (!library_loaded(path, handle))
      return false;
  }
  return true;
}

/* The JIT module (jit.h), loaded when objects must be linked: a start that
 * loads the module as a shared library loads neither it nor libLLVM. */
static const stc_run_jit *g_jit;

/* The JIT's loaders' load: libraries_on_lookup's. */
static bool load_libraries_for_jit(void *libs) { return load_libraries(libs); }

typedef struct loaded_code {
  void *library; /* the module as a shared library (load_library), or: */
  stc_run_jit_code *jit; /* its objects linked by the JIT module */
  uint64_t entry, ctors; /* addresses, once resolved */
  bool initialized;      /* global constructors ran: destructors must too */
} loaded_code;

/* The objects of one module, not owned. */
typedef struct object_list {
  size_t count;
  const char *data[STC_EMIT_MAX_PARTITIONS];
  size_t size[STC_EMIT_MAX_PARTITIONS];
  /* Or (count 0) the module linked into a shared library (load_library). */
  const char *library;
  size_t library_size;
} object_list;

/* The call-through manager jumps here, with the variant's arguments, when
 * a lazy unit could not be compiled or linked (the JIT session printed
 * why): the run cannot go on without the variant's result. */
static void lazy_call_failed(void) {
  fflush(stdout);
  fputs("stc-run: error: a variant could not be compiled on its first call "
        "(see the error above); stopping\n",
        stderr);
  stc_rt_set_profile_out(NULL);
  _exit(EXIT_FAILURE_RUN);
}

/* Links the objects with the JIT module: libstc_rt's symbols, the lazy
 * OpenMP entry points and stc's runner utilities are absolute definitions
 * (they take precedence, as with MLIR's ExecutionEngine); the libraries
 * loaded on lookup come next, then the process. Resolves the entry and the
 * constructor runner, which links the objects (so that start-up timing
 * includes it). -1, or an exit code after saying why. */
static int link_objects(const object_list *objects, const stc_emit_lazy *lazy,
                        const run_options *options, loaded_code *code) {
  memset(code, 0, sizeof *code);
  if (!load_part(&g_jit_part))
    return EXIT_FAILURE_RUN;
  g_jit = (const stc_run_jit *)g_jit_part.table;
  static const stc_rt_symbol memref_copy[] = {
      {"memrefCopy", (void *)memrefCopy}};
  stc_run_jit_request request = {
      .input_name = stc_run_input_name,
      .num_objects = objects->count,
      .objects = objects->data,
      .sizes = objects->size,
      .lazy = lazy_units(lazy) ? lazy : NULL,
      .compiler = g_compiler,
      .compile_threads = options->compile_threads,
      .call_failed = lazy_call_failed,
      .set_explore_hook = stc_rt_set_explore_hook,
  };
  request.tables[request.num_tables] =
      stc_rt_symbols(&request.table_sizes[request.num_tables]);
  request.num_tables++;
  stc_run_jit_loader loaders[2];
  if (g_openmp_on_first_call) {
    request.tables[request.num_tables] =
        stc_rt__lazy_openmp_symbols(&request.table_sizes[request.num_tables]);
    request.num_tables++;
    loaders[request.num_loaders++] = (stc_run_jit_loader){
        openmp_symbol, load_libraries_for_jit, &g_openmp_loader,
        g_openmp_loader.what};
  }
  if (g_default_libs_on_lookup) {
    request.tables[request.num_tables] =
        stc_runner_utils_symbols(&request.table_sizes[request.num_tables]);
    request.num_tables++;
    request.tables[request.num_tables] = memref_copy;
    request.table_sizes[request.num_tables++] = 1;
    loaders[request.num_loaders++] = (stc_run_jit_loader){
        not_in_process, load_libraries_for_jit, &g_default_libs_loader,
        g_default_libs_loader.what};
  }
  request.loaders = loaders;
  code->jit = g_jit->load(&request);
  if (!code->jit)
    return EXIT_FAILURE_RUN;
  code->entry = g_jit->lookup(code->jit, options->entry);
  code->ctors =
      code->entry ? g_jit->lookup(code->jit, STC_EMIT_CTORS_SYMBOL) : 0;
  if (!code->entry || !code->ctors) {
    stc_run_error(
        "entry point '@%s' could not be compiled or resolved by the JIT "
        "(an undefined symbol: missing --shared-libs?)",
        options->entry);
    return EXIT_FAILURE_RUN;
  }
  if (request.lazy)
    g_jit->lazy_ready(code->jit);
  return -1;
}

/* Runs the module's global destructors (when its constructors ran) and
 * unloads it. */
static void unload(loaded_code *code) {
  void *dtors = NULL;
  if (code->library && code->initialized)
    dtors = dlsym(code->library, STC_EMIT_DTORS_SYMBOL);
  else if (code->jit && code->initialized)
    dtors = (void *)(uintptr_t)g_jit->lookup(code->jit, STC_EMIT_DTORS_SYMBOL);
  if (dtors)
    ((void (*)(void))dtors)();
  if (code->library)
    dlclose(code->library);
  if (code->jit)
    g_jit->unload(code->jit);
  memset(code, 0, sizeof *code);
}

typedef union entry_result {
  int32_t i32;
  int64_t i64;
  float f32;
} entry_result;
/* ---- the module as a shared library ----
 * A cache entry may hold the module linked into a shared library
 * (object_merge.h: stc_run_link_library) instead of its objects: dlopen
 * maps and relocates it in ~0.05 ms where creating a JIT and linking the
 * objects takes ~1 ms. It carries what it calls of stc's runner
 * utilities; its other undefined symbols resolve against the process:
 * what stc-run exports of what the JIT would define (stc-run.exports:
 * libstc_rt, memrefCopy, the lazy libomp entry points under their --wrap
 * names) and the libraries preloaded before it (--shared-libs, libc,
 * libm). One only MLIR's runner utilities or libomp define is retried
 * after loading them, as the JIT loads them on lookup. */

/* Loads the library from a memory file (RTLD_NOW: every symbol resolved
 * now, so that a missing one fails here, not in the run) and resolves the
 * entry and the constructor runner; false with *why set otherwise. */
static bool load_library(const char *data, size_t size,
                         const run_options *options, bool openmp,
                         loaded_code *code, char *why, size_t why_size) {
  int fd = (int)syscall(SYS_memfd_create, "stc-run-module", MFD_CLOEXEC);
  if (fd < 0) {
    snprintf(why, why_size, "memfd_create: %s", strerror(errno));
    return false;
  }
  void *library = NULL;
  char path[64];
  snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
  if (stc_run_write_all(fd, data, size)) {
    library = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!library && g_default_libs_on_lookup &&
        load_libraries(&g_default_libs_loader))
      library = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!library && openmp && g_openmp_on_first_call &&
        load_libraries(&g_openmp_loader))
      library = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!library) {
      const char *reason = dlerror();
      snprintf(why, why_size, "%s", reason ? reason : "dlopen failed");
    }
  } else {
    snprintf(why, why_size, "cannot write a memory file: %s", strerror(errno));
  }
  close(fd); /* the mapping stays */
  if (!library)
    return false;
  void *entry = dlsym(library, options->entry);
  void *ctors = dlsym(library, STC_EMIT_CTORS_SYMBOL);
  if (!entry || !ctors) {
    snprintf(why, why_size, "no '%s'", entry ? STC_EMIT_CTORS_SYMBOL
                                             : options->entry);
    dlclose(library);
    return false;
  }
  memset(code, 0, sizeof *code);
  code->library = library;
  code->entry = (uint64_t)(uintptr_t)entry;
  code->ctors = (uint64_t)(uintptr_t)ctors;
  return true;
}

/* Runs the global constructors, then calls the entry directly with the
 * signature check_entry verified: what MLIR's packed wrapper did. */
static void call_entry(loaded_code *code, const run_options *options,
                       entry_result *result) {
  ((void (*)(void))(uintptr_t)code->ctors)();
  code->initialized = true;
  void *direct = (void *)(uintptr_t)code->entry;
  switch (options->result) {
  case RESULT_VOID: ((void (*)(void))direct)(); break;
  case RESULT_I32: result->i32 = ((int32_t (*)(void))direct)(); break;
  case RESULT_I64: result->i64 = ((int64_t (*)(void))direct)(); break;
  case RESULT_F32: result->f32 = ((float (*)(void))direct)(); break;
  }
}

/* Same format as mlir-runner: integers in decimal, floats as %e. */
static void print_result(result_kind kind, const entry_result *result) {
  switch (kind) {
  case RESULT_VOID: break;
  case RESULT_I32: printf("%" PRId32 "\n", result->i32); break;
  case RESULT_I64: printf("%" PRId64 "\n", result->i64); break;
  case RESULT_F32: printf("%e\n", (double)result->f32); break;
  }
  fflush(stdout);
}

/* Writes the profile now rather than at exit, while the module is still
 * loaded and the tool still owns stderr, then turns the runtime's exit-time
 * write off: one attempt, at most one warning. */
static void export_profile(void) {
  char path[4096];
  if (stc_rt_profile_out(path, sizeof path) != STC_OK)
    return;
  stc_error err;
  if (stc_rt_profile_export(path, &err) != STC_OK)
    fprintf(stderr, "stc: warning: cannot write profile '%s': %s\n", path,
            err.message);
  stc_rt_set_profile_out(NULL);
}

/* ---- the object cache ---- */

/* Appends "<label> sha256:<hex>\n" of a file's bytes, or false when it
 * cannot be read (the pipeline then reports it; nothing is cached). */
static bool key_file(byte_buffer *key, const char *label, const char *path) {
  if (!path) {
    buffer_printf(key, "%s none\n", label);
    return true;
  }
  char *text = NULL;
  size_t length = 0;
  stc_error err;
  stc_error_clear(&err);
  stc_read_limit_spec limit = {"STC_MAX_INPUT_BYTES",
                               STC_MAX_INPUT_BYTES_DEFAULT};
  if (stc_read_file_limited(path, 0, label, limit, &text, &length, &err) !=
      STC_OK)
    return false;
  char hex[65];
  stc_sha256_hex(text, length, hex);
  free(text);
  buffer_printf(key, "%s sha256:%s\n", label, hex);
  return true;
}

/* The full key: everything the compiled code depends on. The input's bytes
 * and those of the files the pipeline reads go in as SHA-256 digests. False
 * when some input cannot be read: then the run compiles and stores nothing. */
static bool object_key(const run_options *options, const char *text,
                       size_t length, byte_buffer *key) {
  stc_error err;
  stc_error_clear(&err);
  char *host = NULL;
  if (stc_run_host_identity(&host, &err) != STC_OK)
    return false;
  char hex[65];
  stc_sha256_hex(text, length, hex);
  buffer_printf(key, "stc-run object key 3\nstc %s pipeline %d\n", stc_version(),
                STC_TUNE_PIPELINE_REVISION);
  buffer_append(key, host, strlen(host));
  free(host);
  buffer_printf(key, "opt %d\ninput sha256:%s\ntune-hot-paths %d\n",
                options->opt_level, hex, options->tune_hot_paths ? 1 : 0);
  if (options->tune_hot_paths) {
    buffer_append(key, "hot-path-options ", 17);
    buffer_string(key, options->schedule_options,
                  options->schedule_options ? strlen(options->schedule_options)
                                            : 0);
    buffer_printf(key, "\ndefault-lowering %s\n",
                  options->default_lowering ? options->default_lowering
                                            : "fast");
    if (!key_file(key, "hot-path-profile", options->hot_path_profile) ||
        !key_file(key, "variant-library", options->variant_library))
      return false;
  }
  return !key->failed;
}

/* A cursor over the metadata's lines. */
typedef struct meta_reader {
  const char *at, *end;
  bool bad;
} meta_reader;

static bool meta_word(meta_reader *r, const char *word) {
  size_t length = strlen(word);
  if (r->bad || (size_t)(r->end - r->at) < length ||
      memcmp(r->at, word, length) != 0)
    return false;
  r->at += length;
  return true;
}

/* A decimal number as the compiler writes it ("-"? digits, no spaces),
 * then stop. By hand: strtoll (locale, whitespace, errno) on the hundreds
 * of numbers of a tuned module's metadata was ~30 us of a 3 ms start. */
static long long meta_number(meta_reader *r, char stop) {
  if (r->bad)
    return 0;
  const char *at = r->at;
  bool negative = at < r->end && *at == '-';
  at += negative;
  unsigned long long value = 0;
  const char *digits = at;
  for (; at < r->end && *at >= '0' && *at <= '9'; at++) {
    if (value > (ULLONG_MAX - 9) / 10 || at - digits >= 19)
      return r->bad = true, 0; /* more than long long holds */
    value = value * 10 + (unsigned)(*at - '0');
  }
  if (at == digits || at >= r->end || *at != stop || value > LLONG_MAX)
    return r->bad = true, 0;
  r->at = at + 1;
  return negative ? -(long long)value : (long long)value;
}

/* "<n>:<bytes>" (returned, length in *length) or "-" (NULL). */
static const char *meta_string(meta_reader *r, size_t *length) {
  *length = 0;
  if (r->bad || r->at >= r->end)
    return r->bad = true, NULL;
  if (*r->at == '-') {
    r->at++;
    return NULL;
  }
  long long n = meta_number(r, ':');
  if (r->bad || n < 0 || n > r->end - r->at)
    return r->bad = true, NULL;
  const char *data = r->at;
  r->at += n;
  *length = (size_t)n;
  return data;
}

static void meta_end_of_field(meta_reader *r, char c) {
  if (r->bad || r->at >= r->end || *r->at != c)
    r->bad = true;
  else
    r->at++;
}

typedef struct cached_facts {
  bool openmp;
  entry_facts entry;
} cached_facts;

/* Reads the metadata of a hit: the entry's facts and OpenMP flag, then
 * replays the compile's diagnostics (when print). False when malformed. */
static bool meta_read(const char *data, size_t size, const char *entry,
                      bool print, cached_facts *out) {
  memset(out, 0, sizeof *out);
  meta_reader r = {data, data + size, false};
  if (!meta_word(&r, "stc-run meta 1\nopenmp "))
    return false;
  out->openmp = meta_number(&r, '\n') != 0;
  while (!r.bad && r.at < r.end) {
    size_t length, file_length, message_length;
    if (meta_word(&r, "sym ")) {
      size_t name_length = 0;
      const char *name = meta_string(&r, &name_length);
      meta_end_of_field(&r, ' ');
      entry_facts facts = {.found = true};
      facts.is_llvm_func = meta_number(&r, ' ') != 0;
      facts.has_body = meta_number(&r, ' ') != 0;
      facts.has_type = meta_number(&r, ' ') != 0;
      facts.num_inputs = (intptr_t)meta_number(&r, ' ');
      facts.matches = (unsigned)meta_number(&r, ' ');
      const char *text = meta_string(&r, &length);
      meta_end_of_field(&r, '\n');
      if (r.bad || !name || length >= sizeof facts.result_text)
        return false;
      memcpy(facts.result_text, text ? text : "", length);
      facts.result_text[length] = 0;
      if (!out->entry.found && strlen(entry) == name_length &&
          memcmp(entry, name, name_length) == 0)
        out->entry = facts;
    } else if (meta_word(&r, "diag ")) {
      bool remark = meta_number(&r, ' ') != 0;
      int severity = (int)meta_number(&r, ' ');
      unsigned line = (unsigned)meta_number(&r, ' ');
      unsigned column = (unsigned)meta_number(&r, ' ');
      const char *file = meta_string(&r, &file_length);
      meta_end_of_field(&r, ' ');
      const char *message = meta_string(&r, &message_length);
      meta_end_of_field(&r, '\n');
      if (r.bad || !message)
        return false;
      if (print && (!remark || g_show_remarks)) {
        char *file_copy = file ? strndup(file, file_length) : NULL;
        char *message_copy = strndup(message, message_length);
        if (message_copy)
          stc_run_print_line(file_copy, line, column,
                             stc_diagnostic_severity_text(severity),
                             message_copy);
        free(file_copy);
        free(message_copy);
      }
    } else {
      return false;
    }
  }
  return !r.bad;
}

/* The payload of a cache entry: the module's objects (one per compile
 * partition) in a small container, opaque to the object cache:
 *   "stc-run objects 2\n" <count> "\n" (<size> "\n"){count}, spaces up to
 *   a multiple of 16 bytes, then each object's bytes, zeros up to a
 *   multiple of 16 after each
 * so that every object starts 16-byte aligned in a payload the object
 * cache aligns (stc_object_entry.storage): the JIT parses and links them
 * where they are, without a copy. Version 1 (no padding; entries of an
 * earlier stc-run) still loads, its objects copied. Or the module linked
 * into a shared library (load_library), the same way:
 *   "stc-run library 1\n" <size> "\n", spaces up to a multiple of 16,
 *   the library's bytes, zeros up to a multiple of 16. */
#define OBJECTS_MAGIC "stc-run objects 2\n"
#define OBJECTS_MAGIC_1 "stc-run objects 1\n"
#define LIBRARY_MAGIC "stc-run library 1\n"

static size_t objects_padding(size_t length) {
  return (STC_RUN_JIT_OBJECT_ALIGN - length % STC_RUN_JIT_OBJECT_ALIGN) % STC_RUN_JIT_OBJECT_ALIGN;
}

static void objects_pack(const object_list *objects, byte_buffer *out) {
  static const char zeros[STC_RUN_JIT_OBJECT_ALIGN];
  size_t start = out->size;
  size_t count = objects->library ? 1 : objects->count;
  const char *const *data = objects->library ? &objects->library
                                             : objects->data;
  const size_t *size = objects->library ? &objects->library_size
                                        : objects->size;
  if (objects->library)
    buffer_printf(out, LIBRARY_MAGIC);
  else
    buffer_printf(out, OBJECTS_MAGIC "%zu\n", count);
  for (size_t i = 0; i < count; i++)
    buffer_printf(out, "%zu\n", size[i]);
  for (size_t pad = objects_padding(out->size - start); pad; pad--)
    buffer_append(out, " ", 1);
  for (size_t i = 0; i < count; i++) {
    buffer_append(out, data[i], size[i]);
    buffer_append(out, zeros, objects_padding(size[i]));
  }
}

/* Whether n bytes at at are all c. */
static bool all_bytes(const char *at, size_t n, char c) {
  for (size_t i = 0; i < n; i++)
    if (at[i] != c)
      return false;
  return true;
}

/* False when the payload is not such a container (pointers into data). */
static bool objects_unpack(const char *data, size_t size, object_list *out) {
  memset(out, 0, sizeof *out);
  meta_reader r = {data, data + size, false};
  bool padded = true, library = false;
  if (!data)
    return false;
  if (meta_word(&r, LIBRARY_MAGIC))
    library = true;
  else if (meta_word(&r, OBJECTS_MAGIC_1))
    padded = false;
  else if (!meta_word(&r, OBJECTS_MAGIC))
    return false;
  long long count = library ? 1 : meta_number(&r, '\n');
  if (r.bad || count < 1 || count > STC_EMIT_MAX_PARTITIONS)
    return false;
  for (long long i = 0; i < count; i++) {
    long long object_size = meta_number(&r, '\n');
    if (r.bad || object_size < 1 || object_size > r.end - r.at)
      return false;
    out->size[i] = (size_t)object_size;
  }
  if (padded) {
    size_t pad = objects_padding((size_t)(r.at - data));
    if ((size_t)(r.end - r.at) < pad || !all_bytes(r.at, pad, ' '))
      return false;
    r.at += pad;
  }
  const char *at = r.at;
  for (long long i = 0; i < count; i++) {
    size_t pad = padded ? objects_padding(out->size[i]) : 0;
    if ((size_t)(r.end - at) < out->size[i] + pad ||
        !all_bytes(at + out->size[i], pad, 0))
      return false;
    out->data[i] = at;
    at += out->size[i] + pad;
  }
  if (at != r.end)
    return false;
  if (library)
    *out = (object_list){.library = out->data[0], .library_size = out->size[0]};
  else
    out->count = (size_t)count;
  return true;
}

/* One run's use of the object cache. */
typedef struct object_cache_use {
  stc_object_cache *cache; /* NULL: off, or could not be opened */
  byte_buffer key;
  const char *outcome; /* for --timing */
  /* The fleet tier (STC_CACHE_REMOTE_OBJECTS=1; README "Fleet cache
   * (Redis)"): NULL when off. Objects from it are authenticated with
   * fleet_key (stc/object_remote.h). */
  stc_remote_cache *remote;
  stc_fleet_key fleet_key;
} object_cache_use;

static void cache_warning(const char *format, ...)
    __attribute__((format(printf, 1, 2)));
static void cache_warning(const char *format, ...) {
  va_list args;
  va_start(args, format);
  fputs("stc-run: warning: object cache: ", stderr);
  vfprintf(stderr, format, args);
  fputc('\n', stderr);
  va_end(args);
}

/* A warning about the fleet tier: at most one per process, shared with the
 * runtime's tuning-record tier (stc_rt_claim_remote_warning). */
static void remote_warning(const char *format, ...)
    __attribute__((format(printf, 1, 2)));
static void remote_warning(const char *format, ...) {
  if (!stc_rt_claim_remote_warning())
    return;
  va_list args;
  va_start(args, format);
  fputs("stc-run: warning: remote object cache: ", stderr);
  vfprintf(stderr, format, args);
  fputs(" (no further remote warnings)\n", stderr);
  va_end(args);
}

/* Opens the cache and builds the key; on any trouble the run goes on
 * without the cache (a fault is a warning; no directory at all is not).
 * The fleet tier is used only beside a usable local cache. */
static void cache_begin(object_cache_use *use, const run_options *options,
                        const char *text, size_t length) {
  memset(use, 0, sizeof *use);
  use->outcome = "off (--no-object-cache)";
  if (!options->object_cache)
    return;
  use->outcome = "off (an input of the key is unreadable)";
  if (!object_key(options, text, length, &use->key))
    return;
  char *directory = NULL;
  stc_error err;
  stc_error_clear(&err);
  use->outcome = "off (no cache directory)";
  if (stc_cache_default_directory(&directory, &err) != STC_OK)
    return;
  if (stc_object_cache_open(directory, STC_OBJECT_CACHE_CAPACITY,
                            STC_OBJECT_CACHE_TTL_SECONDS, &use->cache,
                            &err) != STC_OK) {
    char message[sizeof err.file + sizeof err.message + 64];
    stc_error_format(&err, message, sizeof message);
    cache_warning("%s; running without it", message);
    use->outcome = "off (cannot open the cache)";
    use->cache = NULL;
  }
  free(directory);
  stc_error_clear(&err);
  if (use->cache && stc_object_remote_from_environment(
                        &use->remote, &use->fleet_key, &err) != STC_OK) {
    char message[sizeof err.file + sizeof err.message + 64];
    stc_error_format(&err, message, sizeof message);
    remote_warning("%s", message);
  }
}

/* Says once why the fleet tier could not be asked, if it could not. */
static void remote_faults_report(object_cache_use *use) {
  char why[600];
  if (use->remote &&
      stc_remote_cache_last_fault(use->remote, why, sizeof why, NULL))
    remote_warning("%s; going on with the local cache", why);
}

static void cache_end(object_cache_use *use) {
  stc_remote_cache_close(use->remote);
  stc_fleet_key_clear(&use->fleet_key);
  stc_object_cache_close(use->cache);
  free(use->key.data);
  memset(use, 0, sizeof *use);
}

/* After a local miss: the fleet tier. An authenticated, fresh entry of this
 * key is written to the local cache (so this machine's next start finds it
 * there) and used; a refused one is a warning and a compile. */
static bool remote_lookup(object_cache_use *use, const run_options *options,
                          stc_object_entry *entry, cached_facts *facts) {
  const char *problem = NULL;
  stc_status status = stc_object_remote_fetch(
      use->remote, &use->fleet_key, use->key.data, stc_now_seconds(),
      STC_OBJECT_CACHE_TTL_SECONDS, entry, &problem);
  if (status == STC_ERR_NOT_FOUND && problem) {
    char digest[65];
    stc_sha256_hex(use->key.data, use->key.size, digest);
    remote_warning("%s: the object stored under %.16s... %s; compiling",
                   stc_remote_cache_url(use->remote), digest, problem);
  }
  if (status != STC_OK)
    return false;
  object_list objects;
  if (!meta_read(entry->meta, entry->meta_size, options->entry, false,
                 facts) ||
      !objects_unpack(entry->object, entry->object_size, &objects)) {
    remote_warning("%s: an authenticated object with unreadable metadata or "
                   "objects; compiling",
                   stc_remote_cache_url(use->remote));
    stc_object_entry_clear(entry);
    return false;
  }
  meta_read(entry->meta, entry->meta_size, options->entry, true, facts);
  stc_error err;
  stc_error_clear(&err);
  if (stc_object_cache_save(use->cache, entry, &err) == STC_OK) {
    use->outcome = "hit from remote, stored locally";
  } else {
    char message[sizeof err.file + sizeof err.message + 64];
    stc_error_format(&err, message, sizeof message);
    cache_warning("cannot store the remote object: %s", message);
    use->outcome = "hit from remote (not stored locally)";
  }
  return true;
}

/* True on a usable hit (*entry filled, facts read, diagnostics replayed). */
static bool cache_lookup(object_cache_use *use, const run_options *options,
                         stc_object_entry *entry, cached_facts *facts) {
  if (!use->cache)
    return false;
  const char *problem = NULL;
  stc_error err;
  stc_error_clear(&err);
  stc_status status =
      stc_object_cache_load(use->cache, use->key.data, entry, &problem, &err);
  use->outcome = "miss";
  if (status == STC_OK) {
    object_list objects;
    bool meta_ok = meta_read(entry->meta, entry->meta_size, options->entry,
                             false, facts);
    if (meta_ok && objects_unpack(entry->object, entry->object_size,
                                  &objects)) {
      meta_read(entry->meta, entry->meta_size, options->entry, true, facts);
      use->outcome = "hit";
      return true;
    }
    cache_warning("%s: unreadable %s; compiling",
                  stc_object_cache_path(use->cache),
                  meta_ok ? "object container" : "metadata");
    stc_object_entry_clear(entry);
    return false;
  }
  if (status != STC_ERR_NOT_FOUND || problem) {
    char message[sizeof err.file + sizeof err.message + 64];
    stc_error_format(&err, message, sizeof message);
    cache_warning("%s; compiling", message);
  }
  return use->remote && remote_lookup(use, options, entry, facts);
}

static void cache_store(object_cache_use *use, const byte_buffer *meta,
                        const byte_buffer *objects) {
  if (!use->cache)
    return;
  if (meta->failed || objects->failed) {
    use->outcome = "miss (not stored: out of memory)";
    return;
  }
  int64_t now = stc_now_seconds();
  stc_object_entry entry = {.key = use->key.data,
                            .created = now,
                            .meta = meta->data,
                            .meta_size = meta->size,
                            .object = objects->data,
                            .object_size = objects->size};
  stc_error err;
  stc_error_clear(&err);
  bool stored = stc_object_cache_save(use->cache, &entry, &err) == STC_OK;
  if (!stored) {
    char message[sizeof err.file + sizeof err.message + 64];
    stc_error_format(&err, message, sizeof message);
    cache_warning("cannot store: %s", message);
  }
  stc_status remote = STC_ERR_UNAVAILABLE;
  if (use->remote) {
    remote = stc_object_remote_store(use->remote, &use->fleet_key, &entry, now,
                                     STC_OBJECT_CACHE_TTL_SECONDS);
    if (remote == STC_ERR_INVALID)
      remote_warning("%s: not stored: the object is bigger than the tier's "
                     "bound (%u MiB)",
                     stc_remote_cache_url(use->remote),
                     STC_REMOTE_MAX_OBJECT_VALUE >> 20);
  }
  use->outcome = stored ? (remote == STC_OK ? "miss, stored locally and remote"
                                            : "miss, stored")
                        : (remote == STC_OK ? "miss, stored remote only"
                                            : "miss (not stored)");
}

/* Replaces a compile's partitions by one object merged from them
 * (object_merge.h; *merged owns its bytes); when the linker fails, says
 * why and keeps them: the entry then holds them apart. */
static void merge_objects(const char *linker, object_list *objects,
                          char **merged) {
  size_t size = 0;
  stc_error err;
  stc_error_clear(&err);
  if (stc_run_merge_objects(linker, objects->data, objects->size,
                            objects->count, merged, &size, &err) != STC_OK) {
    cache_warning("cannot merge the %zu partition objects: %s; storing them "
                  "apart (STC_RUN_LINKER=none stops trying)",
                  objects->count, err.message);
    return;
  }
  *objects = (object_list){.count = 1, .data = {*merged}, .size = {size}};
}

/* stc's runner utilities as a static library (installed beside
 * libstc_rt; the build tree's when the install layout is not there), which
 * a module's shared library links what it calls of; NULL when neither is
 * there. */
static const char *runner_utils_archive(void) {
  static char path[8192];
  if (beside_stc_run(STC_RUN_RUNNER_UTILS_RELATIVE, path, sizeof path) &&
      access(path, R_OK) == 0)
    return path;
  return access(STC_RUN_RUNNER_UTILS_BUILT, R_OK) == 0
             ? STC_RUN_RUNNER_UTILS_BUILT
             : NULL;
}

/* The module's one object linked into a shared library (*library owns
 * its bytes; objects->library points at them); when the linker fails,
 * says why, and the entry holds the object. */
static void link_library(const char *linker, object_list *objects,
                         char **library) {
  size_t count = 0;
  const stc_rt_symbol *openmp = stc_rt__lazy_openmp_symbols(&count);
  const char *wrapped[16];
  if (count > sizeof wrapped / sizeof *wrapped)
    count = 0; /* cannot happen: nine entry points */
  for (size_t i = 0; i < count; i++)
    wrapped[i] = openmp[i].name;
  const char *archives[2] = {runner_utils_archive(), NULL};
  if (!archives[0])
    return; /* the library would have no printers: the JIT links the object */
  size_t num_archives = 1;
#ifdef STC_RUN_LIBGCC
  /* The compiler's builtins (__divti3, __truncsfhf2, ...), which LLVM's
   * code calls: in the library, since the process (no libLLVM, so no
   * libgcc_s) may not define them. */
  if (access(STC_RUN_LIBGCC, R_OK) == 0)
    archives[num_archives++] = STC_RUN_LIBGCC;
#endif
  size_t size = 0;
  stc_error err;
  stc_error_clear(&err);
  if (stc_run_link_library(linker, objects->data[0], objects->size[0],
                           archives, num_archives, wrapped, count, library,
                           &size, &err) != STC_OK) {
    cache_warning("cannot link the module into a shared library: %s; "
                  "storing its object (STC_RUN_LINKER=none stops trying)",
                  err.message);
    return;
  }
  objects->library = *library;
  objects->library_size = size;
}

/* ---- the whole flow ---- */

typedef struct phase_times {
  double read, key, lookup, compiler, parse, pipeline, libs, translate, codegen,
      store, load;
  int partitions; /* objects compiled (0: none, a hit) */
  bool library;   /* the module loaded as a shared library */
  size_t lazy_units; /* variant units left to their first call */
  stc_emit_timing emit; /* the compile's CPU times */
} phase_times;

static void print_timing(const phase_times *times, const char *outcome) {
  double total = times->read + times->key + times->lookup + times->compiler +
                 times->parse + times->pipeline + times->libs +
                 times->translate + times->codegen + times->store + times->load;
  fprintf(stderr,
          "stc-run: timing: read %.6f s, key %.6f s, lookup %.6f s, compiler "
          "%.6f s, parse %.6f s, pipeline %.6f s, libraries %.6f s, "
          "translate+optimize %.6f s, codegen %.6f s, store %.6f s, "
          "load+link %.6f s\n"
          "stc-run: timing: compile %.6f s (everything before the entry "
          "runs), %d compile partition(s)%s\n",
          times->read, times->key, times->lookup, times->compiler, times->parse,
          times->pipeline, times->libs, times->translate, times->codegen,
          times->store, times->load, total, times->partitions,
          times->library ? ", loaded as a shared library" : "");
  if (times->partitions > 1)
    fprintf(stderr,
            "stc-run: timing: LLVM CPU: %.3f s on the calling thread, "
            "partitions %.3f s (busiest %.3f s)\n",
            times->emit.serial_cpu_s, times->emit.partition_cpu_sum_s,
            times->emit.partition_cpu_max_s);
  else if (times->partitions == 1)
    fprintf(stderr, "stc-run: timing: LLVM CPU: %.3f s on the calling thread\n",
            times->emit.serial_cpu_s);
  if (times->lazy_units)
    fprintf(stderr,
            "stc-run: timing: lazy variants: %zu variant(s) left to compile "
            "when first needed\n",
            times->lazy_units);
  fprintf(stderr, "stc-run: object cache: %s\n", outcome);
}

/* The cold path, through the compiler module (compiler.h): parse, the
 * pipeline, the checks, code generation. -1 on success, with *result
 * filled; else an exit code, after printing why. */
static int compile(const run_options *options, const char *text, size_t length,
                   bool lazy_variants, bool merged, phase_times *times,
                   stc_run_compile_result *result) {
  stc_run_compile_request request = {
      .input_name = stc_run_input_name,
      .text = text,
      .length = length,
      .entry = options->entry,
      .result = options->result,
      .opt_level = options->opt_level,
      /* Objects to be merged: up to two partitions a CPU for a big
       * module (stc_emit.h, object_merge.h). */
      .compile_threads = options->compile_threads == 0 && merged
                             ? -2
                             : options->compile_threads,
      .tune_hot_paths = options->tune_hot_paths,
      .hot_path_profile = options->hot_path_profile,
      .variant_library = options->variant_library,
      .schedule_options = options->schedule_options,
      .default_lowering = options->default_lowering,
      .show_remarks = g_show_remarks,
      .lazy_variants = lazy_variants,
  };
  int code = g_compiler->compile(&request, result);
  times->parse = result->parse_s;
  times->pipeline = result->pipeline_s;
  times->translate = result->translate_s;
  times->codegen = result->codegen_s;
  times->partitions = result->emit.partitions;
  times->emit = result->emit;
  times->lazy_units = lazy_units(result->lazy);
  return code;
}

/* Whether a compile leaves non-reference variants to their first call (or
 * to their site's exploration, prepare_site): when the objects are not
 * stored (the object cache holds complete compiles only).
 * STC_RUN_LAZY_VARIANTS=0 turns it off. */
static bool lazy_variants_wanted(const object_cache_use *use) {
  const char *setting = getenv("STC_RUN_LAZY_VARIANTS");
  return !use->cache && !(setting && strcmp(setting, "0") == 0);
}

static int run(const run_options *options) {
  phase_times times = {0};
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  size_t length = 0;
  char *text = read_input(options->input, &length);
  if (!text)
    return EXIT_INPUT;
  stc_run_input_name =
      strcmp(options->input, "-") == 0 ? "<stdin>" : options->input;
  size_t max_nesting;
  if (!nesting_limit(&max_nesting)) {
    free(text);
    return EXIT_INPUT;
  }
  times.read = stc_run_seconds_since(&t);

  clock_gettime(CLOCK_MONOTONIC, &t);
  object_cache_use use;
  cache_begin(&use, options, text, length);
  times.key = stc_run_seconds_since(&t);

  clock_gettime(CLOCK_MONOTONIC, &t);
  stc_object_entry entry = {0};
  cached_facts facts;
  bool hit = cache_lookup(&use, options, &entry, &facts);
  times.lookup = stc_run_seconds_since(&t);

  int code = -1;
  object_list objects = {0};
  stc_run_compile_result compiled = {0};
  const stc_emit_lazy *lazy = NULL;
  bool openmp = false, libraries_loaded = false;
  loaded_code loaded = {0};
  char why[512];
  /* A compile for the cache whose partitions one object will hold, linked
   * into a shared library when stc's runner utilities are the default
   * libraries (the library calls their names). */
  bool lazy_variants = lazy_variants_wanted(&use);
  const char *linker = NULL; /* found on a miss only */
  char *merged = NULL, *library = NULL;
  if (hit) {
    code = stc_run_check_entry_facts(&facts.entry, options->entry,
                                     options->result);
    openmp = facts.openmp;
    objects_unpack(entry.object, entry.object_size, &objects); /* checked */
  }
  /* The library calls stc's runner utilities, which stand for the default
   * libraries: without them, the objects are what the JIT must see. */
  if (hit && code < 0 && objects.library && !options->default_libs) {
    stc_object_entry_clear(&entry);
    objects = (object_list){0};
    hit = false;
  }
  if (hit && code < 0 && objects.library) {
    clock_gettime(CLOCK_MONOTONIC, &t);
    libraries_loaded = true;
    if (!preload_libraries(options, openmp))
      code = EXIT_FAILURE_RUN;
    times.libs = stc_run_seconds_since(&t);
    clock_gettime(CLOCK_MONOTONIC, &t);
    if (code < 0 && !load_library(objects.library, objects.library_size,
                                  options, openmp, &loaded, why, sizeof why)) {
      /* It loaded when it was stored: something changed. Compile. */
      cache_warning("%s: the module's shared library did not load (%s); "
                    "compiling",
                    stc_object_cache_path(use.cache), why);
      stc_object_entry_clear(&entry);
      objects = (object_list){0};
      hit = false;
    }
    times.load = stc_run_seconds_since(&t);
  }
  if (!hit) {
    clock_gettime(CLOCK_MONOTONIC, &t);
    if (use.cache && !lazy_variants)
      linker = stc_run_object_linker();
    if (!nesting_ok(text, length, stc_run_input_name, max_nesting))
      code = EXIT_INPUT;
    else if (!load_compiler())
      code = EXIT_FAILURE_RUN;
    times.compiler = stc_run_seconds_since(&t);
    if (code < 0)
      code = compile(options, text, length, lazy_variants, linker != NULL,
                     &times, &compiled);
    lazy = compiled.lazy;
    openmp = compiled.openmp;
    objects.count = compiled.objects.count;
    for (size_t i = 0; i < compiled.objects.count; i++) {
      objects.data[i] = compiled.objects.data[i];
      objects.size[i] = compiled.objects.size[i];
    }
    /* The partitions as one object, and that linked into a library; this
     * run loads what is stored, so what is stored is what ran. */
    clock_gettime(CLOCK_MONOTONIC, &t);
    if (code < 0 && linker && !lazy && objects.count > 1)
      merge_objects(linker, &objects, &merged);
    if (code < 0 && linker && !lazy && objects.count == 1 &&
        options->default_libs)
      link_library(linker, &objects, &library);
    times.store = stc_run_seconds_since(&t);
  }
  free(text);
  clock_gettime(CLOCK_MONOTONIC, &t);
  if (code < 0 && !libraries_loaded && !preload_libraries(options, openmp))
    code = EXIT_FAILURE_RUN;
  if (!libraries_loaded)
    times.libs = stc_run_seconds_since(&t);

  if (code < 0 && !loaded.library) {
    clock_gettime(CLOCK_MONOTONIC, &t);
    if (objects.library &&
        !load_library(objects.library, objects.library_size, options, openmp,
                      &loaded, why, sizeof why)) {
      /* The JIT links the object instead, and that is stored. */
      if (options->timing)
        fprintf(stderr,
                "stc-run: timing: the module's shared library did not load "
                "(%s); the JIT links its object\n",
                why);
      objects.library = NULL;
    }
    if (!loaded.library)
      code = link_objects(&objects, lazy, options, &loaded);
    times.load = stc_run_seconds_since(&t);
  }
  times.library = loaded.library != NULL;
  /* Stored once loaded: an object the JIT cannot link (a library that is
   * missing, a symbol nothing defines) is not kept for the next start. */
  if (!hit && code < 0) {
    clock_gettime(CLOCK_MONOTONIC, &t);
    byte_buffer payload = {0};
    if (use.cache && !lazy)
      objects_pack(&objects, &payload);
    cache_store(&use, &compiled.meta, &payload);
    free(payload.data);
    times.store += stc_run_seconds_since(&t);
  }
  remote_faults_report(&use);
  if (options->timing)
    print_timing(&times, use.outcome);
  cache_end(&use);
  double run_s = -1;
  if (code < 0) {
    entry_result result = {.i64 = 0};
    clock_gettime(CLOCK_MONOTONIC, &t);
    call_entry(&loaded, options, &result);
    run_s = stc_run_seconds_since(&t);
    code = EXIT_OK;
    print_result(options->result, &result);
    export_profile();

    stc_run_jit_lazy_stats lazy_stats = {0};
    if (options->timing && loaded.jit)
      g_jit->lazy_stats(loaded.jit, &lazy_stats);
    if (lazy_stats.units)
      fprintf(stderr,
              "stc-run: timing: lazy variants: %zu of %zu compiled after the "
              "start (%.3f s of compiling; %zu before their site explored, "
              "%.3f s wall)\n",
              lazy_stats.compiled, lazy_stats.units, lazy_stats.compile_s,
              lazy_stats.prepared, lazy_stats.prepare_s);
  }
  /* A run that failed must not replace a good profile with an empty one. */
  if (code != EXIT_OK)
    stc_rt_set_profile_out(NULL);
  unload(&loaded);
  /* Last, after what the destructors print. */
  if (options->timing && run_s >= 0) {
    fflush(stdout);
    fprintf(stderr,
            "stc-run: timing: run %.6f s (the module's constructors and "
            "entry)\n",
            run_s);
  }
  /* The linked objects' bytes (load_objects does not copy them). */
  if (hit)
    stc_object_entry_clear(&entry);
  else if (g_compiler)
    g_compiler->result_free(&compiled);
  free(merged);
  free(library);
  return code;
}

static int run_on_this_thread(void *options) { return run(options); }

int main(int argc, char **argv) {
  run_options options;
  int code = options_parse(argc, argv, &options);
  /* MLIR's parser, verifier and walks recurse per nesting level: run where
   * the nesting that nesting_ok lets through fits. */
  if (code < 0)
    code = stc_run_on_big_stack(STC_BIG_STACK_BYTES, run_on_this_thread,
                                &options);
  options_free(&options);
  return code;
}
