/* stc-run - runs an MLIR module in process through MLIR's execution engine,
 * like mlir-runner, with libstc_rt's entry points registered so that an
 * instrumented module records regions and writes $STC_PROFILE_OUT.
 *
 * In: a module already lowered to the LLVM dialect (file or stdin), the entry
 * point name and result type, shared libraries. Out: whatever the program
 * prints, then the entry's result (non-void) on stdout; the profile.
 * Exit codes: 0 ok, 1 failure (unknown entry, bad signature, JIT or library
 * failure, --tune-hot-paths unavailable), 2 bad option, 3 unreadable,
 * unparsable or not-yet-lowered input. */
#include "stc/input_bounds.h"
#include "stc/rt.h"
#include "stc/status.h"
#include "stc_diagnostics.h"
#include "tune_pipeline.h"

#include <mlir-c/BuiltinAttributes.h>
#include <mlir-c/BuiltinTypes.h>
#include <mlir-c/Diagnostics.h>
#include <mlir-c/Dialect/LLVM.h>
#include <mlir-c/ExecutionEngine.h>
#include <mlir-c/IR.h>
#include <mlir-c/Pass.h>
#include <mlir-c/RegisterEverything.h>

#include <dlfcn.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
  EXIT_OK = 0,
  EXIT_FAILURE_RUN = 1,
  EXIT_USAGE = 2,
  EXIT_INPUT = 3,
};

typedef enum result_kind {
  RESULT_VOID,
  RESULT_I32,
  RESULT_I64,
  RESULT_F32,
} result_kind;

static const char *const result_names[] = {"void", "i32", "i64", "f32"};

typedef struct run_options {
  const char *input;      /* "-" = stdin */
  const char *entry;      /* without '@' */
  result_kind result;
  int opt_level;          /* 0-3 */
  char **shared_libs;     /* owned array of owned strings */
  size_t num_shared_libs;
  bool default_libs;      /* also load MLIR's runner utils */
  bool tune_hot_paths;
  const char *hot_path_profile; /* NULL = static cost estimate */
  const char *variant_library;  /* NULL = built-in schedules only */
  const char *schedule_options; /* NULL = the scheduling pass's defaults */
  const char *default_lowering; /* "fast" (NULL) or "loops" */
} run_options;

/* A runner's output is the program's: the scheduling pass's remarks (one
 * per region) are shown only on request. */
static bool g_show_remarks;

static const char usage_text[] =
    "usage: stc-run [options] [file|-]\n"
    "\n"
    "Runs a module lowered to the LLVM dialect with MLIR's execution engine\n"
    "(JIT), with libstc_rt's region timer registered: an instrumented module\n"
    "writes its profile to $STC_PROFILE_OUT at the end.\n"
    "\n"
    "  -e <name>, -e=<name>         entry point (default: main); it takes no\n"
    "                               arguments\n"
    "  --entry-point-result=<t>     void (default), i32, i64 or f32; a\n"
    "                               non-void result is printed like mlir-runner\n"
    "  --shared-libs=<a.so,b.so>    libraries to load (repeatable)\n"
    "  --no-default-shared-libs     do not load libmlir_runner_utils.so and\n"
    "                               libmlir_c_runner_utils.so\n"
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
    "  --help, --version\n"
    "\n"
    "Exit status: 0 ok, 1 run failure, 2 bad option, 3 bad input.\n";

static void error(const char *format, ...)
    __attribute__((format(printf, 1, 2)));
static void error(const char *format, ...) {
  va_list args;
  va_start(args, format);
  fputs("stc-run: error: ", stderr);
  vfprintf(stderr, format, args);
  fputc('\n', stderr);
  va_end(args);
}

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
                           .default_libs = true};
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
        error("option '-e' needs a function name");
        return EXIT_USAGE;
      }
      options->entry = value;
    } else if ((value = option_value("--entry-point-result", argc, argv, &i,
                                     &missing))) {
      size_t k = 0;
      while (k < 4 && strcmp(value, result_names[k]) != 0)
        k++;
      if (k == 4) {
        error("unsupported --entry-point-result '%s' (expected void, i32, "
              "i64 or f32)",
              value);
        return EXIT_USAGE;
      }
      options->result = (result_kind)k;
    } else if ((value = option_value("--shared-libs", argc, argv, &i,
                                      &missing))) {
      if (!add_shared_libs(options, value)) {
        error("out of memory");
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
        error("invalid value '%s' for option '--default-lowering' (expected "
              "fast or loops)",
              value);
        return EXIT_USAGE;
      }
      options->default_lowering = value;
    } else if (missing) {
      error("option '%s' needs a value", arg);
      return EXIT_USAGE;
    } else if (strcmp(arg, "--no-default-shared-libs") == 0) {
      options->default_libs = false;
    } else if (strcmp(arg, "--tune-hot-paths") == 0) {
      options->tune_hot_paths = true;
    } else if (strcmp(arg, "--remarks") == 0) {
      g_show_remarks = true;
    } else if (strlen(arg) == 3 && arg[0] == '-' && arg[1] == 'O' &&
               arg[2] >= '0' && arg[2] <= '3') {
      options->opt_level = arg[2] - '0';
    } else if (arg[0] == '-' && arg[1] != 0) {
      error("unknown option '%s' (see stc-run --help)", arg);
      return EXIT_USAGE;
    } else if (options->input) {
      error("more than one input file ('%s' and '%s')", options->input, arg);
      return EXIT_USAGE;
    } else {
      options->input = arg;
    }
    if (missing) {
      error("option '%s' needs a value", arg);
      return EXIT_USAGE;
    }
  }
  if ((options->hot_path_profile || options->variant_library ||
       options->schedule_options || options->default_lowering) &&
      !options->tune_hot_paths) {
    error("%s needs --tune-hot-paths",
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
    error("cannot read '%s': %s", path, strerror(errno));
  } else {
    char message[sizeof err.file + sizeof err.message + 64];
    stc_error_format(&err, message, sizeof message);
    error("%s", message);
  }
  return NULL;
}

/* False, after printing a located error, when the input nests brackets
 * deeper than STC_MAX_NESTING: MLIR's recursive parser must never see it. */
static bool nesting_ok(const char *text, size_t length, const char *name) {
  stc_read_limit_spec spec = {"STC_MAX_NESTING", STC_MAX_NESTING_DEFAULT};
  size_t limit;
  stc_error err;
  stc_error_clear(&err);
  if (stc_read_limit(spec, &limit, &err) != STC_OK) {
    error("%s", err.message);
    return false;
  }
  unsigned line, column;
  if (!stc_text_nesting_exceeds(text, length, limit, &line, &column))
    return true;
  fprintf(stderr,
          "%s:%u:%u: error: brackets nested deeper than %zu levels "
          "(STC_MAX_NESTING)\n",
          name, line, column, limit);
  return false;
}

static bool string_ref_equals(MlirStringRef ref, const char *text) {
  return ref.length == strlen(text) && memcmp(ref.data, text, ref.length) == 0;
}

/* ---- diagnostics ---- */

/* Input name printed for locations of the parsed text: the parser, given a
 * buffer, names it "-"; that is replaced by the file name (or "<stdin>"). */
static const char *g_input_name = "<stdin>";

/* Prints "file:line:col: severity: message" the way stc-run names files,
 * with "stc-run: " in place of the location when there is none. */
static void print_line(const char *file, unsigned line, unsigned column,
                       const char *severity, const char *message) {
  if (file && (!*file || strcmp(file, "-") == 0))
    file = g_input_name;
  stc_diagnostic_print_line(stderr, file, line, column, severity, message,
                            "stc-run: ");
}

static void print_record(stc_diagnostic record, void *user) {
  (void)user;
  print_line(record.file, record.line, record.column,
             stc_diagnostic_severity_name(record.severity), record.message);
  stc_diagnostic_free(&record);
}

static MlirLogicalResult on_diagnostic(MlirDiagnostic diagnostic, void *user) {
  (void)user;
  if (!g_show_remarks &&
      mlirDiagnosticGetSeverity(diagnostic) == MlirDiagnosticRemark)
    return mlirLogicalResultSuccess();
  if (!stc_diagnostic_record_all(diagnostic, print_record, NULL))
    fputs("stc-run: error: out of memory: a diagnostic was lost\n", stderr);
  return mlirLogicalResultSuccess();
}

/* An error of stc-run's own at loc. */
static void print_error_at(MlirLocation loc, const char *message) {
  MlirStringRef file = {0};
  unsigned line = 0, column = 0;
  char *name = NULL;
  if (stc_diagnostic_file_location(loc, &file, &line, &column))
    name = strndup(file.data, file.length);
  print_line(name, line, column, "error", message);
  free(name);
}

/* ---- checks on the module ---- */

/* Dialects whose ops translate to LLVM IR (or are structural). */
static bool translatable_dialect(MlirStringRef op_name) {
  static const char *const dialects[] = {
      "builtin", "llvm", "nvvm", "rocdl", "omp", "gpu", "amx", "arm_neon",
      "arm_sve", "arm_sme", "x86vector", "vcix", "dlti", "ptr", "xevm"};
  const char *dot = memchr(op_name.data, '.', op_name.length);
  size_t length = dot ? (size_t)(dot - op_name.data) : op_name.length;
  for (size_t i = 0; i < sizeof dialects / sizeof *dialects; i++)
    if (strlen(dialects[i]) == length &&
        memcmp(dialects[i], op_name.data, length) == 0)
      return true;
  return false;
}

typedef struct first_foreign_op {
  MlirOperation op;
  bool found;
} first_foreign_op;

static MlirWalkResult find_foreign_op(MlirOperation op, void *user) {
  first_foreign_op *state = user;
  if (translatable_dialect(mlirIdentifierStr(mlirOperationGetName(op))))
    return MlirWalkResultAdvance;
  state->op = op;
  state->found = true;
  return MlirWalkResultInterrupt;
}

/* Exit code of the check that the module is lowered, or -1 when it is. */
static int check_lowered(MlirModule module) {
  first_foreign_op state = {.found = false};
  mlirOperationWalk(mlirModuleGetOperation(module), find_foreign_op, &state,
                    MlirWalkPreOrder);
  if (!state.found)
    return -1;
  MlirStringRef name = mlirIdentifierStr(mlirOperationGetName(state.op));
  char message[1024];
  snprintf(message, sizeof message,
           "'%.*s' is not lowered to the LLVM dialect; stc-run runs "
           "LLVM-dialect modules (lower with stc-opt or mlir-opt first, "
           "or use --tune-hot-paths)",
           (int)name.length, name.data);
  print_error_at(mlirOperationGetLocation(state.op), message);
  return EXIT_INPUT;
}

typedef struct text_buffer {
  char data[256];
  size_t length;
} text_buffer;

static void append_to_buffer(MlirStringRef piece, void *user) {
  text_buffer *buffer = user;
  size_t room = sizeof buffer->data - 1 - buffer->length;
  size_t n = piece.length < room ? piece.length : room;
  memcpy(buffer->data + buffer->length, piece.data, n);
  buffer->length += n;
  buffer->data[buffer->length] = 0;
}

static bool type_matches(MlirType type, result_kind kind, MlirContext ctx) {
  switch (kind) {
  case RESULT_VOID:
    return mlirTypeEqual(type, mlirLLVMVoidTypeGet(ctx));
  case RESULT_I32:
    return mlirTypeIsAInteger(type) && mlirIntegerTypeGetWidth(type) == 32;
  case RESULT_I64:
    return mlirTypeIsAInteger(type) && mlirIntegerTypeGetWidth(type) == 64;
  case RESULT_F32:
    return mlirTypeIsAF32(type);
  }
  return false;
}

/* Exit code of the entry-point checks, or -1 when the entry can be called
 * with no arguments and returns what --entry-point-result says. */
static int check_entry(MlirModule module, const run_options *options) {
  MlirOperation module_op = mlirModuleGetOperation(module);
  MlirSymbolTable symbols = mlirSymbolTableCreate(module_op);
  MlirOperation entry = mlirSymbolTableLookup(
      symbols, mlirStringRefCreateFromCString(options->entry));
  mlirSymbolTableDestroy(symbols);
  if (mlirOperationIsNull(entry)) {
    error("entry point '@%s' not found in '%s'", options->entry,
          g_input_name);
    return EXIT_FAILURE_RUN;
  }
  if (!string_ref_equals(mlirIdentifierStr(mlirOperationGetName(entry)),
                         "llvm.func")) {
    error("entry point '@%s' is not an llvm.func", options->entry);
    return EXIT_FAILURE_RUN;
  }
  if (mlirBlockIsNull(mlirRegionGetFirstBlock(mlirOperationGetRegion(entry, 0)))) {
    error("entry point '@%s' is only declared, it has no body", options->entry);
    return EXIT_FAILURE_RUN;
  }
  MlirAttribute type_attr = mlirOperationGetAttributeByName(
      entry, mlirStringRefCreateFromCString("function_type"));
  if (mlirAttributeIsNull(type_attr) || !mlirAttributeIsAType(type_attr)) {
    error("entry point '@%s' has no function type", options->entry);
    return EXIT_FAILURE_RUN;
  }
  MlirType type = mlirTypeAttrGetValue(type_attr);
  intptr_t num_inputs = mlirLLVMFunctionTypeGetNumInputs(type);
  if (num_inputs != 0) {
    error("entry point '@%s' takes %" PRIdPTR
          " argument(s); stc-run calls it without arguments",
          options->entry, num_inputs);
    return EXIT_FAILURE_RUN;
  }
  MlirType result = mlirLLVMFunctionTypeGetReturnType(type);
  if (!type_matches(result, options->result, mlirModuleGetContext(module))) {
    text_buffer printed = {.length = 0};
    mlirTypePrint(result, append_to_buffer, &printed);
    error("entry point '@%s' returns '%s' but --entry-point-result=%s",
          options->entry, printed.data, result_names[options->result]);
    return EXIT_FAILURE_RUN;
  }
  return -1;
}

/* ---- --tune-hot-paths ------------------------------------------------
 * The pipeline of tools/common/tune_pipeline.c (the same as stc-opt
 * --tune-hot-paths), run on `module` in place: linalg on tensors in, LLVM
 * dialect with runtime site dispatch out. The pass diagnostics go to the
 * context's handler (file:line:col on stderr). */
static stc_status tune_hot_paths(MlirModule module,
                                 const run_options *options, stc_error *err) {
  MlirContext ctx = mlirModuleGetContext(module);
  mlirRegisterAllPasses();
  MlirPassManager pm = mlirPassManagerCreateOnOperation(
      ctx, mlirStringRefCreateFromCString("builtin.module"));
  stc_status status = stc_tune_pipeline_add(
      mlirPassManagerGetAsOpPassManager(pm),
      &(stc_tune_pipeline_options){
          .hot_path_profile = options->hot_path_profile,
          .schedule_options = options->schedule_options,
          .variant_library = options->variant_library,
          .default_lowering = options->default_lowering,
      },
      err);
  if (status == STC_OK &&
      mlirLogicalResultIsFailure(
          mlirPassManagerRunOnOp(pm, mlirModuleGetOperation(module)))) {
    stc_error_set(err, NULL, 0, 0,
                  "the --tune-hot-paths pipeline failed on '%s'", g_input_name);
    status = STC_ERR_INVALID;
  }
  mlirPassManagerDestroy(pm);
  return status;
}

/* ---- JIT ---- */

#ifndef STC_MLIR_RUNNER_LIB_DIR
#define STC_MLIR_RUNNER_LIB_DIR "/usr/lib/llvm-22/lib"
#endif

static const char *const default_libs[] = {
    STC_MLIR_RUNNER_LIB_DIR "/libmlir_runner_utils.so",
    STC_MLIR_RUNNER_LIB_DIR "/libmlir_c_runner_utils.so",
    /* Last: only loaded when the module has OpenMP ops (the parallel
     * schedules), whose translation calls __kmpc_* entry points. */
    STC_MLIR_RUNNER_LIB_DIR "/libomp.so",
};

static MlirWalkResult find_omp(MlirOperation op, void *user) {
  MlirStringRef name = mlirIdentifierStr(mlirOperationGetName(op));
  if (name.length > 4 && memcmp(name.data, "omp.", 4) == 0) {
    *(bool *)user = true;
    return MlirWalkResultInterrupt;
  }
  return MlirWalkResultAdvance;
}

static bool uses_openmp(MlirModule module) {
  bool found = false;
  mlirOperationWalk(mlirModuleGetOperation(module), find_omp, &found,
                    MlirWalkPreOrder);
  return found;
}

/* Loads each library once up front, so that a missing or broken one is a
 * clear error instead of an unresolved symbol later. */
static bool preload_library(const char *path) {
  if (dlopen(path, RTLD_NOW | RTLD_GLOBAL))
    return true;
  const char *reason = dlerror();
  error("cannot load shared library '%s': %s", path,
        reason ? reason : "unknown error");
  return false;
}

static MlirExecutionEngine create_engine(MlirModule module,
                                         const run_options *options) {
  size_t num_defaults =
      options->default_libs ? (uses_openmp(module) ? 3 : 2) : 0;
  size_t count = options->num_shared_libs + num_defaults;
  MlirStringRef *paths = calloc(count ? count : 1, sizeof *paths);
  if (!paths) {
    error("out of memory");
    return (MlirExecutionEngine){NULL};
  }
  for (size_t i = 0; i < num_defaults; i++)
    paths[i] = mlirStringRefCreateFromCString(default_libs[i]);
  for (size_t i = 0; i < options->num_shared_libs; i++)
    paths[num_defaults + i] =
        mlirStringRefCreateFromCString(options->shared_libs[i]);
  for (size_t i = 0; i < count; i++)
    if (!preload_library(paths[i].data)) {
      free(paths);
      return (MlirExecutionEngine){NULL};
    }
  MlirExecutionEngine jit = mlirExecutionEngineCreate(
      module, options->opt_level, (int)count, paths, false, false);
  free(paths);
  if (mlirExecutionEngineIsNull(jit)) {
    error("cannot create the execution engine for '%s'", g_input_name);
    return jit;
  }
  /* Before initialization: global constructors may already call them. */
  size_t num_symbols = 0;
  const stc_rt_symbol *symbols = stc_rt_symbols(&num_symbols);
  for (size_t i = 0; i < num_symbols; i++)
    mlirExecutionEngineRegisterSymbol(
        jit, mlirStringRefCreateFromCString(symbols[i].name),
        symbols[i].address);
  mlirExecutionEngineInitialize(jit);
  return jit;
}

typedef union entry_result {
  int32_t i32;
  int64_t i64;
  float f32;
} entry_result;

/* Calls the entry through its packed wrapper (_mlir_<name>, which the engine
 * generates for every function), or directly when there is none. */
static int call_entry(MlirExecutionEngine jit, const run_options *options,
                      entry_result *result) {
  MlirStringRef name = mlirStringRefCreateFromCString(options->entry);
  void (*packed)(void **) =
      (void (*)(void **))mlirExecutionEngineLookupPacked(jit, name);
  if (packed) {
    void *args[1] = {result};
    packed(args);
    return EXIT_OK;
  }
  void *direct = mlirExecutionEngineLookup(jit, name);
  if (!direct) {
    error("entry point '@%s' could not be compiled or resolved by the JIT "
          "(an undefined symbol: missing --shared-libs?)",
          options->entry);
    return EXIT_FAILURE_RUN;
  }
  switch (options->result) {
  case RESULT_VOID: ((void (*)(void))direct)(); break;
  case RESULT_I32: result->i32 = ((int32_t (*)(void))direct)(); break;
  case RESULT_I64: result->i64 = ((int64_t (*)(void))direct)(); break;
  case RESULT_F32: result->f32 = ((float (*)(void))direct)(); break;
  }
  return EXIT_OK;
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

/* ---- the whole flow ---- */

static int run(const run_options *options) {
  size_t length = 0;
  char *text = read_input(options->input, &length);
  if (!text)
    return EXIT_INPUT;
  g_input_name = strcmp(options->input, "-") == 0 ? "<stdin>" : options->input;
  if (!nesting_ok(text, length, g_input_name)) {
    free(text);
    return EXIT_INPUT;
  }

  MlirDialectRegistry registry = mlirDialectRegistryCreate();
  mlirRegisterAllDialects(registry);
  MlirContext ctx = mlirContextCreateWithRegistry(registry, false);
  mlirDialectRegistryDestroy(registry);
  mlirRegisterAllLLVMTranslations(ctx);
  mlirContextAttachDiagnosticHandler(ctx, on_diagnostic, NULL, NULL);

  int code = -1;
  MlirModule module = mlirModuleCreateParse(
      ctx, (MlirStringRef){.data = text, .length = length});
  free(text);
  if (mlirModuleIsNull(module))
    code = EXIT_INPUT; /* the diagnostic handler printed file:line:col */

  if (code < 0 && options->tune_hot_paths) {
    stc_error err;
    stc_error_clear(&err);
    if (tune_hot_paths(module, options, &err) != STC_OK) {
      error("%s", err.message);
      code = EXIT_FAILURE_RUN;
    }
  }
  if (code < 0)
    code = check_lowered(module);
  if (code < 0)
    code = check_entry(module, options);

  MlirExecutionEngine jit = {NULL};
  if (code < 0) {
    jit = create_engine(module, options);
    if (mlirExecutionEngineIsNull(jit))
      code = EXIT_FAILURE_RUN;
  }
  if (code < 0) {
    entry_result result = {.i64 = 0};
    code = call_entry(jit, options, &result);
    if (code == EXIT_OK) {
      print_result(options->result, &result);
      export_profile();
    }
  }
  /* A run that failed must not replace a good profile with an empty one. */
  if (code != EXIT_OK)
    stc_rt_set_profile_out(NULL);
  if (!mlirExecutionEngineIsNull(jit))
    mlirExecutionEngineDestroy(jit);
  if (!mlirModuleIsNull(module))
    mlirModuleDestroy(module);
  mlirContextDestroy(ctx);
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
