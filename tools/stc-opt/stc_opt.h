/* stc_opt.h - the stages of stc-opt and what flows between them (internal to
 * the tool; not installed).
 *
 *   options.c      argv                        -> stc_opt_options
 *   pipeline.c     pipeline texts and flags    -> stc_opt_pipeline (syntax
 *                  tree) -> a pass manager (upstream runs + stc passes)
 *   split.c        input bytes                 -> chunks (// -----), padded
 *                  so that line numbers stay those of the input file
 *   parse.c        one chunk                   -> a builtin.module
 *   diagnostics.c  MLIR diagnostics            -> collected, printed as
 *                  file:line:col: severity: message
 *   verify.c       expected-* comments + collected diagnostics -> match
 *   driver.c       the flow for one invocation, chunk by chunk
 *   tune_hot_paths.c  hook for --tune-hot-paths / --emit= (later issue)
 *   text.c         growable strings, file reading */
#ifndef STC_OPT_H
#define STC_OPT_H

#include "region_id.h" /* stc_text */
#include "stc/status.h"
#include "stc_diagnostics.h"

#include <mlir-c/Diagnostics.h>
#include <mlir-c/IR.h>
#include <mlir-c/Pass.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* Exit codes; --help documents them. */
enum {
  STC_OPT_EXIT_OK = 0,
  STC_OPT_EXIT_FAILURE = 1, /* a pass failed, or --verify-diagnostics mismatch */
  STC_OPT_EXIT_USAGE = 2,   /* bad option, unknown pass, malformed pipeline */
  STC_OPT_EXIT_INPUT = 3,   /* unreadable/unparsable input, unwritable output */
  STC_OPT_CONTINUE = -1,    /* not an exit: options parsed, go on */
};

/* ---- text.c ---------------------------------------------------------- */

/* Reads a whole file ("-" = stdin) of at most STC_MAX_INPUT_BYTES into text
 * (replacing its content); false with err set, and errno set when the file
 * could not be opened or read (0 when it was too large). */
bool stc_opt_read_file(const char *path, stc_text *text, stc_error *err);
/* False, after printing a located error, when input nests brackets deeper
 * than STC_MAX_NESTING: MLIR's recursive parser must never see that. */
bool stc_opt_check_nesting(const stc_text *input, const char *file_name);
/* Prints "stc-opt: error: " and the message to stderr. */
void stc_opt_error(const char *format, ...)
    __attribute__((format(printf, 1, 2)));

/* ---- options.c ------------------------------------------------------- */

typedef enum stc_opt_source_kind {
  STC_OPT_SOURCE_PIPELINE, /* --pass-pipeline='builtin.module(...)' */
  STC_OPT_SOURCE_FLAG,     /* --stc-<pass>[=opts] or --<upstream-pass>[=opts] */
  STC_OPT_SOURCE_TUNE,     /* --tune-hot-paths (hook, tune_hot_paths.c) */
} stc_opt_source_kind;

/* One piece of the pass pipeline, in command-line order. For a flag, text
 * is synthesized as "name{options}" and flag is the argv entry as given. */
typedef struct stc_opt_source {
  stc_opt_source_kind kind;
  char *text;       /* owned */
  const char *flag; /* borrowed from argv */
} stc_opt_source;

typedef struct stc_opt_tune_options {
  bool requested;               /* --tune-hot-paths */
  const char *hot_path_profile; /* --hot-path-profile=; NULL = static cost */
  const char *variant_library;  /* --variant-library=; NULL = built-ins only */
  const char *schedule_options; /* --hot-path-options=; NULL = defaults */
  const char *target;           /* --target=cpu|cuda; NULL = cpu */
  const char *gpu_chip;         /* --gpu-chip=; NULL = sm_90 (cuda only) */
  const char *gpu_format;       /* --gpu-format=isa|bin|fatbin; NULL = isa */
  const char *gpu_block;        /* --gpu-block=X,Y; NULL = 16,16 */
  const char *gpu_mapping;      /* --gpu-mapping=inner-x|outer-x; NULL = inner-x */
  const char *gpu_schedule;     /* --gpu-schedule=BMxBN/TMxTN/kBK; NULL = none */
  const char *gpu_sites;        /* --gpu-sites=off|LIST; NULL = the built-in family */
  const char *gpu_tf32;         /* --gpu-tf32=off|on; NULL = off */
  const char *default_lowering; /* --default-lowering=fast|loops; NULL = fast */
  const char *emit;             /* --emit=mlir|llvm|obj; NULL = mlir */
} stc_opt_tune_options;

typedef struct stc_opt_options {
  const char *input;  /* "-" = stdin */
  const char *output; /* "-" = stdout */
  stc_opt_source *sources;
  size_t num_sources;
  bool split_input_file;
  bool verify_diagnostics;
  bool print_ir_after_all;
  bool timing;
  bool print_debuginfo;
  bool print_generic;
  stc_opt_tune_options tune;
} stc_opt_options;

/* Parses argv into options. Returns STC_OPT_CONTINUE, or an exit code after
 * printing --help / --version or a usage error. options is always
 * initialized and must be freed with stc_opt_options_free. */
int stc_opt_options_parse(int argc, char **argv, stc_opt_options *options);
void stc_opt_options_free(stc_opt_options *options);

/* ---- pipeline.c ------------------------------------------------------ */

typedef struct stc_opt_pipeline stc_opt_pipeline;

/* Tokenizes and parses every pipeline source; resolves stc passes. Returns
 * NULL after printing a usage error pointing at the offending column. */
stc_opt_pipeline *stc_opt_pipeline_parse(const stc_opt_options *options);
/* Adds the parsed pipeline to pm (anchored on builtin.module): runs of
 * upstream elements through mlirOpPassManagerAddPipeline, stc passes from
 * their specs. Returns STC_OPT_EXIT_OK or a printed STC_OPT_EXIT_USAGE. */
int stc_opt_pipeline_build(const stc_opt_pipeline *pipeline,
                           const stc_opt_options *options, MlirContext ctx,
                           MlirPassManager pm);
void stc_opt_pipeline_destroy(stc_opt_pipeline *pipeline);

/* ---- split.c --------------------------------------------------------- */

/* One chunk of the input: text holds the chunk preceded by one blank line
 * per input line before it, so that the parser reports input line numbers. */
typedef struct stc_opt_chunk {
  stc_text text;
  unsigned first_line; /* 1-based input line of the chunk's first line */
} stc_opt_chunk;

/* Splits input on lines that are exactly "// -----" (when split is true;
 * else one chunk). Returns false on out of memory. */
bool stc_opt_split_input(const char *input, size_t length, bool split,
                         stc_opt_chunk **chunks, size_t *count);
void stc_opt_chunks_free(stc_opt_chunk *chunks, size_t count);

/* ---- parse.c --------------------------------------------------------- */

typedef struct stc_opt_diagnostics stc_opt_diagnostics;

/* Parses a chunk into a builtin.module (wrapping other top-level ops as
 * mlir-opt does), with file_name as the location source. Returns a null
 * module after the parser's diagnostics went to diagnostics (which must be
 * attached to ctx). */
MlirModule stc_opt_parse_module(MlirContext ctx, const stc_text *chunk,
                                const char *file_name,
                                stc_opt_diagnostics *diagnostics);

/* ---- diagnostics.c --------------------------------------------------- */

/* Collects every diagnostic of a context while attached. */
struct stc_opt_diagnostics {
  stc_diagnostic *items; /* owned, with their strings */
  size_t count, capacity;
  bool failed; /* out of memory while collecting */
};

void stc_opt_diagnostics_attach(stc_opt_diagnostics *diagnostics,
                                MlirContext ctx);
/* Frees the diagnostics collected from index `keep` on. */
void stc_opt_diagnostics_truncate(stc_opt_diagnostics *diagnostics,
                                  size_t keep);
void stc_opt_diagnostics_clear(stc_opt_diagnostics *diagnostics);
bool stc_opt_diagnostics_has_errors(const stc_opt_diagnostics *diagnostics);
/* Prints every collected diagnostic to out; source (may be NULL) is the text
 * of file_name, used to show the offending line with a caret. */
void stc_opt_diagnostics_print(const stc_opt_diagnostics *diagnostics,
                               FILE *out, const char *file_name,
                               const char *source);
/* Prints one "file:line:col: severity: message" (with source line). */
void stc_opt_diagnostic_print_at(FILE *out, const char *file, unsigned line,
                                 unsigned column, const char *severity,
                                 const char *message, const char *source);

/* ---- verify.c -------------------------------------------------------- */

/* Matches the expected-* comments of source (a chunk as parsed, so its line
 * numbers are those of file_name) against diagnostics; prints every
 * unmatched expectation and unexpected diagnostic to out. Returns true when
 * everything matched. */
bool stc_opt_verify_diagnostics(const stc_opt_diagnostics *diagnostics,
                                const char *file_name, const char *source,
                                FILE *out);

/* ---- tune_hot_paths.c (HOOK: a later issue implements these) ---------- */

/* Appends the --tune-hot-paths pipeline to pm. */
stc_status stc_opt_tune_hot_paths(MlirOpPassManager pm,
                                  const stc_opt_tune_options *tune,
                                  stc_error *err);
/* Whether --emit=<kind> can be produced; fills err when it cannot. */
bool stc_opt_emit_available(const char *kind, stc_error *err);
struct stc_opt_options;
/* After a successful run with --tune-hot-paths: checks that only LLVM
 * remains and writes --emit=llvm|obj itself (*printed = true: the driver
 * must not print the module). Returns an exit code (printed errors). */
int stc_opt_tune_finish(MlirOperation module, const struct stc_opt_options *options,
                        bool *printed);

/* ---- driver.c -------------------------------------------------------- */

/* One invocation's long-lived MLIR state. */
typedef struct stc_opt_driver {
  MlirContext ctx;
  MlirPassManager pm;
  stc_opt_pipeline *pipeline;
  stc_opt_diagnostics diagnostics;
} stc_opt_driver;

/* Creates the context (all dialects, passes, translations) and the pass
 * manager. Returns STC_OPT_EXIT_OK or a printed exit code. driver is always
 * initialized and must be destroyed. */
int stc_opt_driver_create(stc_opt_driver *driver,
                          const stc_opt_options *options);
/* Reads, splits, parses, runs, verifies and prints; returns the exit code. */
int stc_opt_driver_run(stc_opt_driver *driver, const stc_opt_options *options);
void stc_opt_driver_destroy(stc_opt_driver *driver);

#endif /* STC_OPT_H */
