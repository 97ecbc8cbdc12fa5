/* options.c - stc-opt's command line.
 * In:  argv. Out: stc_opt_options (flags, the input/output paths, and the
 * pipeline sources in command-line order), or --help / --version text, or a
 * usage error (exit 2). One table drives both parsing and --help. */
#include "stc_opt.h"

#include "stc_passes.h"
#include "tune_pipeline.h"

#include <llvm-c/Core.h>
#include <llvm/Config/llvm-config.h>
#include <stdlib.h>
#include <string.h>

typedef enum flag_id {
  FLAG_OUTPUT,
  FLAG_PASS_PIPELINE,
  FLAG_SPLIT_INPUT_FILE,
  FLAG_VERIFY_DIAGNOSTICS,
  FLAG_PRINT_IR_AFTER_ALL,
  FLAG_TIMING,
  FLAG_PRINT_DEBUGINFO,
  FLAG_PRINT_GENERIC,
  FLAG_TUNE_HOT_PATHS,
  FLAG_HOT_PATH_PROFILE,
  FLAG_VARIANT_LIBRARY,
  FLAG_HOT_PATH_OPTIONS,
  FLAG_TARGET,
  FLAG_GPU_CHIP,
  FLAG_GPU_FORMAT,
  FLAG_GPU_BLOCK,
  FLAG_GPU_MAPPING,
  FLAG_GPU_SCHEDULE,
  FLAG_GPU_SITES,
  FLAG_GPU_TF32,
  FLAG_DEFAULT_LOWERING,
  FLAG_EMIT,
  FLAG_HELP,
  FLAG_VERSION,
} flag_id;

typedef struct flag_spec {
  const char *name;
  const char *value_name; /* NULL = takes no value */
  flag_id id;
  const char *help;
} flag_spec;

static const flag_spec flags[] = {
    {"o", "file", FLAG_OUTPUT, "write the output to <file> (default: stdout)"},
    {"pass-pipeline", "pipeline", FLAG_PASS_PIPELINE,
     "run 'builtin.module(...)': upstream and stc passes mixed, nested "
     "'op(...)' groups, '{k=v ...}' options"},
    {"split-input-file", NULL, FLAG_SPLIT_INPUT_FILE,
     "split the input on lines '// -----' and process each chunk alone"},
    {"verify-diagnostics", NULL, FLAG_VERIFY_DIAGNOSTICS,
     "check diagnostics against expected-{error,warning,remark,note}"
     "[-re][@+N|@-N|@above|@below|@unknown] {{message}} comments"},
    {"mlir-print-ir-after-all", NULL, FLAG_PRINT_IR_AFTER_ALL,
     "print the IR to stderr after every pass"},
    {"mlir-timing", NULL, FLAG_TIMING,
     "print a pass execution time report to stderr"},
    {"mlir-print-debuginfo", NULL, FLAG_PRINT_DEBUGINFO,
     "print locations in the output"},
    {"mlir-print-op-generic", NULL, FLAG_PRINT_GENERIC,
     "print the output in the generic op form"},
    {"tune-hot-paths", NULL, FLAG_TUNE_HOT_PATHS,
     "lower a program to the LLVM dialect, with variants and runtime "
     "dispatch for hot sites; input: linalg (on tensors or memrefs) with "
     "func/arith/math/tensor/scf, or TOSA (converted to linalg first)"},
    {"hot-path-profile", "file", FLAG_HOT_PATH_PROFILE,
     "profile for --tune-hot-paths (default: static cost estimate)"},
    {"hot-path-options", "k=v ...", FLAG_HOT_PATH_OPTIONS,
     "stc-hot-path-schedule options for --tune-hot-paths, e.g. "
     "'min-samples=2 variants-per-warm=0'"},
    {"variant-library", "file", FLAG_VARIANT_LIBRARY,
     "YAML file of extra schedules for --tune-hot-paths' multi-variant step"},
    {"target", "cpu|cuda", FLAG_TARGET,
     "target of --tune-hot-paths (cuda: every op as a GPU kernel, docs/gpu.md)"},
    {"gpu-chip", "sm_N", FLAG_GPU_CHIP,
     "GPU of --target=cuda (default sm_90)"},
    {"gpu-format", "isa|bin|fatbin", FLAG_GPU_FORMAT,
     "kernel binary of --target=cuda: isa = PTX, JIT-compiled at load "
     "(default); bin = cubin from the toolkit's ptxas"},
    {"gpu-block", "X[,Y[,Z]]", FLAG_GPU_BLOCK,
     "threads per block of --target=cuda's default kernels (default 16,16)"},
    {"gpu-mapping", "inner-x|outer-x", FLAG_GPU_MAPPING,
     "loop dimension on threads' x with --target=cuda: the last, contiguous "
     "one (inner-x, default) or the first (outer-x)"},
    {"gpu-schedule", "BMxBN/TMxTN/kBK", FLAG_GPU_SCHEDULE,
     "--target=cuda: matmul / batch_matmul kernels with BMxBN block tiles and "
     "TMxTN register tiles per thread, reduction steps of BK (e.g. "
     "64x64/4x4/k8); default: one thread per output element"},
    {"gpu-sites", "off|LIST", FLAG_GPU_SITES,
     "--target=cuda without --gpu-schedule: the variants of GPU dispatch "
     "sites, comma-separated schedules (BMxBN/TMxTN/kBK[/shared]), "
     "conv:PxF, red:warp[/v4], red:block and cublas; off = no sites "
     "(default: the built-in family, docs/gpu.md)"},
    {"gpu-tf32", "off|on", FLAG_GPU_TF32,
     "--target=cuda: on allows TF32 tensor-core matmul variants "
     "(BMxBN/WMxWN/kBK/tf32; f32 results change within the TF32 tolerance, "
     "docs/gpu.md) and adds them to the built-in site family; the runtime "
     "tries them only with STC_TUNE_ALLOW_TF32=1 (default off)"},
    {"default-lowering", "fast|loops", FLAG_DEFAULT_LOWERING,
     "what ops without variants, and every site's reference, become with "
     "--tune-hot-paths: fast (tiled + vectorized, the default) or loops "
     "(scalar loops: the test oracle)"},
    {"emit", "mlir|llvm|obj", FLAG_EMIT,
     "output kind with --tune-hot-paths (default mlir; obj needs -o)"},
    {"help", NULL, FLAG_HELP, "print this help and exit"},
    {"version", NULL, FLAG_VERSION, "print the version and exit"},
};
enum { NUM_FLAGS = sizeof flags / sizeof flags[0] };

static void print_help(FILE *out) {
  fputs("OVERVIEW: stc-opt - MLIR optimizer driver with stc's profile-guided "
        "passes\n\n"
        "USAGE: stc-opt [options] [input-file|-]\n\n"
        "  Reads stdin when input-file is '-' or absent. Options take one or "
        "two dashes;\n  values go after '=' or in the next argument.\n\n"
        "OPTIONS:\n",
        out);
  for (size_t i = 0; i < NUM_FLAGS; i++) {
    char spelled[64];
    if (flags[i].value_name)
      snprintf(spelled, sizeof spelled, "%s%s%s<%s>",
               strlen(flags[i].name) == 1 ? "-" : "--", flags[i].name,
               strlen(flags[i].name) == 1 ? " " : "=", flags[i].value_name);
    else
      snprintf(spelled, sizeof spelled, "--%s", flags[i].name);
    fprintf(out, "  %-32s %s\n", spelled, flags[i].help);
  }
  fputs("  --stc-<pass>[='k=v ...']         append an stc pass (below) to the "
        "pipeline\n"
        "  --<upstream-pass>[='k=v ...']    append an upstream MLIR pass, e.g. "
        "--canonicalize, --cse\n"
        "\n  Pipeline flags and --pass-pipeline are appended in command-line "
        "order.\n",
        out);

  size_t count = 0;
  const stc_pass_spec *const *specs = stc_pass_specs(&count);
  fputs("\nSTC PASSES (in --pass-pipeline, or as --<name> flags):\n", out);
  for (size_t i = 0; i < count; i++) {
    const stc_pass_spec *spec = specs[i];
    const char *anchor =
        spec->op_name && spec->op_name[0] ? spec->op_name : "any op";
    fprintf(out, "  %s\n      %s\n      runs on: %s\n", spec->argument,
            spec->description, anchor);
    for (size_t k = 0; k < spec->num_options; k++) {
      const stc_pass_option_spec *option = &spec->options[k];
      fprintf(out, "      %s=<value>  %s", option->name, option->help);
      if (option->default_value)
        fprintf(out, " (default: %s)", option->default_value);
      fputc('\n', out);
    }
  }
  fputs("  (stc-test-* passes exist for stc-opt's own tests only.)\n", out);

  fprintf(out,
          "\nEXIT CODES:\n"
          "  %d  success (with --verify-diagnostics: every expectation met)\n"
          "  %d  a pass failed, or --verify-diagnostics found a mismatch\n"
          "  %d  bad usage: bad option, unknown pass, malformed pipeline, "
          "not implemented yet\n"
          "  %d  unreadable or unparsable input, or unwritable output\n",
          STC_OPT_EXIT_OK, STC_OPT_EXIT_FAILURE, STC_OPT_EXIT_USAGE,
          STC_OPT_EXIT_INPUT);
}

static void print_version(FILE *out) {
  unsigned major = 0, minor = 0, patch = 0;
  LLVMGetVersion(&major, &minor, &patch);
  fprintf(out,
          "stc-opt (stc) %s\n"
          "  built with MLIR/LLVM %s, running on LLVM %u.%u.%u\n",
          stc_version(), LLVM_VERSION_STRING, major, minor, patch);
}

static const flag_spec *find_flag(const char *name, size_t length) {
  for (size_t i = 0; i < NUM_FLAGS; i++)
    if (strlen(flags[i].name) == length &&
        strncmp(flags[i].name, name, length) == 0)
      return &flags[i];
  return NULL;
}

static bool add_source(stc_opt_options *options, stc_opt_source_kind kind,
                       const char *flag, char *text) {
  stc_opt_source *grown =
      realloc(options->sources, (options->num_sources + 1) * sizeof *grown);
  if (!grown) {
    free(text);
    stc_opt_error("out of memory");
    return false;
  }
  options->sources = grown;
  grown[options->num_sources++] = (stc_opt_source){kind, text, flag};
  return true;
}

/* A pass flag --name[=opts] becomes the pipeline element "name{opts}"; the
 * pipeline parser later says whether such a pass exists. */
static bool add_pass_flag(stc_opt_options *options, const char *arg,
                          const char *name, size_t name_length,
                          const char *value) {
  stc_text text = {0};
  stc_text_append(&text, name, name_length);
  if (value)
    stc_text_appendf(&text, "{%s}", value);
  if (text.out_of_memory) {
    stc_text_free(&text);
    stc_opt_error("out of memory");
    return false;
  }
  return add_source(options, STC_OPT_SOURCE_FLAG, arg, text.data);
}

static bool is_pass_name(const char *name, size_t length) {
  if (length == 0)
    return false;
  for (size_t i = 0; i < length; i++) {
    char c = name[i];
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
          (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.'))
      return false;
  }
  return true;
}

static bool one_of(const char *value, const char *const *allowed) {
  for (; *allowed; allowed++)
    if (strcmp(value, *allowed) == 0)
      return true;
  return false;
}

/* Applies a table flag; returns STC_OPT_CONTINUE or an exit code. */
static int apply_flag(stc_opt_options *options, const flag_spec *flag,
                      const char *arg, const char *value) {
  static const char *const targets[] = {"cpu", "cuda", NULL};
  static const char *const emits[] = {"mlir", "llvm", "obj", NULL};
  switch (flag->id) {
  case FLAG_OUTPUT:
    options->output = value;
    break;
  case FLAG_PASS_PIPELINE: {
    char *copy = strdup(value);
    if (!copy || !add_source(options, STC_OPT_SOURCE_PIPELINE, arg, copy)) {
      if (!copy)
        stc_opt_error("out of memory");
      return STC_OPT_EXIT_USAGE;
    }
    break;
  }
  case FLAG_SPLIT_INPUT_FILE:
    options->split_input_file = true;
    break;
  case FLAG_VERIFY_DIAGNOSTICS:
    options->verify_diagnostics = true;
    break;
  case FLAG_PRINT_IR_AFTER_ALL:
    options->print_ir_after_all = true;
    break;
  case FLAG_TIMING:
    options->timing = true;
    break;
  case FLAG_PRINT_DEBUGINFO:
    options->print_debuginfo = true;
    break;
  case FLAG_PRINT_GENERIC:
    options->print_generic = true;
    break;
  case FLAG_TUNE_HOT_PATHS:
    options->tune.requested = true;
    if (!add_source(options, STC_OPT_SOURCE_TUNE, arg, NULL))
      return STC_OPT_EXIT_USAGE;
    break;
  case FLAG_HOT_PATH_PROFILE:
    if (value[0] == '\0') {
      stc_opt_error("option '%s' needs a file name", arg);
      return STC_OPT_EXIT_USAGE;
    }
    options->tune.hot_path_profile = value;
    break;
  case FLAG_HOT_PATH_OPTIONS:
    options->tune.schedule_options = value;
    break;
  case FLAG_VARIANT_LIBRARY:
    if (value[0] == '\0') {
      stc_opt_error("option '%s' needs a file name", arg);
      return STC_OPT_EXIT_USAGE;
    }
    options->tune.variant_library = value;
    break;
  case FLAG_TARGET:
    if (!one_of(value, targets)) {
      stc_opt_error("invalid value '%s' for option '--target' (expected cpu "
                    "or cuda)",
                    value);
      return STC_OPT_EXIT_USAGE;
    }
    options->tune.target = value;
    break;
  case FLAG_DEFAULT_LOWERING:
    if (!stc_tune_default_lowering_valid(value)) {
      stc_opt_error("invalid value '%s' for option '--default-lowering' "
                    "(expected fast or loops)",
                    value);
      return STC_OPT_EXIT_USAGE;
    }
    options->tune.default_lowering = value;
    break;
  case FLAG_GPU_CHIP:
    options->tune.gpu_chip = value;
    break;
  case FLAG_GPU_FORMAT:
    options->tune.gpu_format = value;
    break;
  case FLAG_GPU_BLOCK:
    options->tune.gpu_block = value;
    break;
  case FLAG_GPU_MAPPING:
    options->tune.gpu_mapping = value;
    break;
  case FLAG_GPU_SCHEDULE:
    options->tune.gpu_schedule = value;
    break;
  case FLAG_GPU_SITES:
    options->tune.gpu_sites = value;
    break;
  case FLAG_GPU_TF32:
    if (strcmp(value, "on") != 0 && strcmp(value, "off") != 0) {
      stc_opt_error("invalid value '%s' for option '--gpu-tf32' (expected off or on)",
                    value);
      return STC_OPT_EXIT_USAGE;
    }
    options->tune.gpu_tf32 = value;
    break;
  case FLAG_EMIT:
    if (!one_of(value, emits)) {
      stc_opt_error("invalid value '%s' for option '--emit' (expected mlir, "
                    "llvm or obj)",
                    value);
      return STC_OPT_EXIT_USAGE;
    }
    options->tune.emit = value;
    break;
  case FLAG_HELP:
    print_help(stdout);
    return STC_OPT_EXIT_OK;
  case FLAG_VERSION:
    print_version(stdout);
    return STC_OPT_EXIT_OK;
  }
  return STC_OPT_CONTINUE;
}

/* Options that only make sense with --tune-hot-paths. */
static int check_tune_options(const stc_opt_options *options) {
  const stc_opt_tune_options *tune = &options->tune;
  if (!tune->requested && (tune->hot_path_profile || tune->variant_library ||
                           tune->schedule_options || tune->target ||
                           tune->default_lowering)) {
    stc_opt_error("'%s' needs --tune-hot-paths",
                  tune->hot_path_profile   ? "--hot-path-profile"
                  : tune->variant_library  ? "--variant-library"
                  : tune->schedule_options ? "--hot-path-options"
                  : tune->default_lowering ? "--default-lowering"
                                           : "--target");
    return STC_OPT_EXIT_USAGE;
  }
  if ((tune->gpu_chip || tune->gpu_format || tune->gpu_block || tune->gpu_mapping ||
       tune->gpu_schedule || tune->gpu_sites || tune->gpu_tf32) &&
      (!tune->target || strcmp(tune->target, "cuda") != 0)) {
    stc_opt_error("'%s' needs --target=cuda",
                  tune->gpu_chip       ? "--gpu-chip"
                  : tune->gpu_format   ? "--gpu-format"
                  : tune->gpu_block    ? "--gpu-block"
                  : tune->gpu_schedule ? "--gpu-schedule"
                  : tune->gpu_sites    ? "--gpu-sites"
                  : tune->gpu_tf32     ? "--gpu-tf32"
                                       : "--gpu-mapping");
    return STC_OPT_EXIT_USAGE;
  }
  if (!tune->requested && tune->emit && strcmp(tune->emit, "mlir") != 0) {
    stc_opt_error("'--emit=%s' needs --tune-hot-paths", tune->emit);
    return STC_OPT_EXIT_USAGE;
  }
  stc_error err;
  stc_error_clear(&err);
  if (tune->emit && !stc_opt_emit_available(tune->emit, &err)) {
    stc_opt_error("%s", err.message);
    return STC_OPT_EXIT_USAGE;
  }
  return STC_OPT_CONTINUE;
}

/* Parses one option argument at argv[*index]; may consume the next one. */
static int parse_option(stc_opt_options *options, int argc, char **argv,
                        int *index) {
  const char *arg = argv[*index];
  const char *name = arg + (arg[1] == '-' ? 2 : 1);
  const char *equals = strchr(name, '=');
  size_t name_length = equals ? (size_t)(equals - name) : strlen(name);
  const char *value = equals ? equals + 1 : NULL;

  if (strcmp(arg, "-h") == 0)
    return apply_flag(options, find_flag("help", 4), arg, NULL);
  const flag_spec *flag = find_flag(name, name_length);
  if (flag) {
    if (!flag->value_name && value) {
      stc_opt_error("option '%.*s' takes no value", (int)(equals - arg), arg);
      return STC_OPT_EXIT_USAGE;
    }
    if (flag->value_name && !value) {
      if (*index + 1 >= argc) {
        stc_opt_error("option '%s' needs a value <%s>", arg,
                      flag->value_name);
        return STC_OPT_EXIT_USAGE;
      }
      value = argv[++*index];
    }
    return apply_flag(options, flag, arg, value);
  }
  if (!is_pass_name(name, name_length)) {
    stc_opt_error("unknown option '%s' (see --help)", arg);
    return STC_OPT_EXIT_USAGE;
  }
  if (name_length > 4 && strncmp(name, "stc-", 4) == 0) {
    char pass_name[256];
    snprintf(pass_name, sizeof pass_name, "%.*s", (int)name_length, name);
    if (!stc_pass_find(pass_name)) {
      stc_opt_error("unknown option '%s': no stc pass named '%s' (see --help)",
                    arg, pass_name);
      return STC_OPT_EXIT_USAGE;
    }
  }
  return add_pass_flag(options, arg, name, name_length, value)
             ? STC_OPT_CONTINUE
             : STC_OPT_EXIT_USAGE;
}

int stc_opt_options_parse(int argc, char **argv, stc_opt_options *options) {
  *options = (stc_opt_options){.input = NULL, .output = "-"};
  bool only_positional = false;
  for (int i = 1; i < argc; i++) {
    const char *arg = argv[i];
    if (!only_positional && strcmp(arg, "--") == 0) {
      only_positional = true;
      continue;
    }
    if (!only_positional && arg[0] == '-' && arg[1] != '\0') {
      int code = parse_option(options, argc, argv, &i);
      if (code != STC_OPT_CONTINUE)
        return code;
      continue;
    }
    if (options->input) {
      stc_opt_error("more than one input file: '%s' and '%s'", options->input,
                    arg);
      return STC_OPT_EXIT_USAGE;
    }
    options->input = arg;
  }
  if (!options->input)
    options->input = "-";
  return check_tune_options(options);
}

void stc_opt_options_free(stc_opt_options *options) {
  for (size_t i = 0; i < options->num_sources; i++)
    free(options->sources[i].text);
  free(options->sources);
  *options = (stc_opt_options){0};
}
