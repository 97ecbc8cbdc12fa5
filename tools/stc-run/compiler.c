/* compiler.c - stc-run's compiler module (compiler.h): parse, the
 * --tune-hot-paths pipeline, the checks on the module (lowered to the LLVM
 * dialect; the entry point), then translation and code generation
 * (tools/common/stc_emit.c). Loaded by the driver on an object-cache miss;
 * exports only stc_run_compiler_table (CMakeLists.txt hides the rest). */
#include "compiler.h"

#include "stc_diagnostics.h"
#include "stc_emit.h"
#include "tune_pipeline.h"

#include <mlir-c/BuiltinAttributes.h>
#include <mlir-c/BuiltinTypes.h>
#include <mlir-c/Diagnostics.h>
#include <mlir-c/Dialect/LLVM.h>
#include <mlir-c/IR.h>
#include <mlir-c/Pass.h>
#include <mlir-c/RegisterEverything.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The request's --remarks. */
static bool g_show_remarks;

static bool string_ref_equals(MlirStringRef ref, const char *text) {
  return ref.length == strlen(text) && memcmp(ref.data, text, ref.length) == 0;
}

/* The diagnostics of a compile, replayed on a cache hit so that a warm start
 * says what a cold one said ("diag" lines of the metadata). */
static byte_buffer g_diagnostics;
static bool g_top_is_remark; /* the current top-level diagnostic's kind */

static void print_record(stc_diagnostic record, void *user) {
  (void)user;
  if (!record.is_note)
    g_top_is_remark = record.severity == MlirDiagnosticRemark;
  buffer_printf(&g_diagnostics, "diag %d %d %u %u ", g_top_is_remark ? 1 : 0,
                (int)record.severity, record.line, record.column);
  buffer_string(&g_diagnostics, record.file,
                record.file ? strlen(record.file) : 0);
  buffer_append(&g_diagnostics, " ", 1);
  buffer_string(&g_diagnostics, record.message, strlen(record.message));
  buffer_append(&g_diagnostics, "\n", 1);
  if (!g_top_is_remark || g_show_remarks)
    stc_run_print_line(record.file, record.line, record.column,
                       stc_diagnostic_severity_name(record.severity),
                       record.message);
  stc_diagnostic_free(&record);
}

static MlirLogicalResult on_diagnostic(MlirDiagnostic diagnostic, void *user) {
  (void)user;
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
  stc_run_print_line(name, line, column, "error", message);
  free(name);
}

/* ---- checks on the module ---- */

/* Dialects whose ops translate to LLVM IR (or are structural). */
static bool translatable_dialect(MlirStringRef op_name) {
  static const char *const dialects[] = {
      "builtin",   "llvm", "nvvm",     "rocdl",   "omp",
      "gpu",       "amx",  "arm_neon", "arm_sve", "arm_sme",
      "x86vector", "vcix", "dlti",     "ptr",     "xevm"};
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

static void facts_of(MlirOperation op, MlirContext ctx, entry_facts *facts) {
  memset(facts, 0, sizeof *facts);
  facts->found = true;
  facts->is_llvm_func = string_ref_equals(
      mlirIdentifierStr(mlirOperationGetName(op)), "llvm.func");
  if (!facts->is_llvm_func)
    return;
  facts->has_body =
      !mlirBlockIsNull(mlirRegionGetFirstBlock(mlirOperationGetRegion(op, 0)));
  MlirAttribute type_attr = mlirOperationGetAttributeByName(
      op, mlirStringRefCreateFromCString("function_type"));
  facts->has_type =
      !mlirAttributeIsNull(type_attr) && mlirAttributeIsAType(type_attr);
  if (!facts->has_type)
    return;
  MlirType type = mlirTypeAttrGetValue(type_attr);
  facts->num_inputs = mlirLLVMFunctionTypeGetNumInputs(type);
  MlirType result = mlirLLVMFunctionTypeGetReturnType(type);
  for (unsigned k = 0; k < 4; k++)
    if (type_matches(result, (result_kind)k, ctx))
      facts->matches |= 1u << k;
  text_buffer printed = {.length = 0};
  mlirTypePrint(result, append_to_buffer, &printed);
  memcpy(facts->result_text, printed.data, printed.length + 1);
}

/* Exit code of the entry-point checks, or -1 when the entry can be called
 * with no arguments and returns what --entry-point-result says. */
static int check_entry(MlirModule module,
                       const stc_run_compile_request *request) {
  MlirOperation module_op = mlirModuleGetOperation(module);
  MlirSymbolTable symbols = mlirSymbolTableCreate(module_op);
  MlirOperation entry = mlirSymbolTableLookup(
      symbols, mlirStringRefCreateFromCString(request->entry));
  mlirSymbolTableDestroy(symbols);
  entry_facts facts = {.found = false};
  if (!mlirOperationIsNull(entry))
    facts_of(entry, mlirModuleGetContext(module), &facts);
  return stc_run_check_entry_facts(&facts, request->entry, request->result);
}

/* Appends a "sym" line for every top-level symbol of module: what
 * stc_run_check_entry_facts needs on a cache hit, whatever -e names then. */
static void describe_symbols(MlirModule module, byte_buffer *meta) {
  MlirContext ctx = mlirModuleGetContext(module);
  MlirStringRef sym_name = mlirStringRefCreateFromCString("sym_name");
  for (MlirOperation op = mlirBlockGetFirstOperation(mlirModuleGetBody(module));
       !mlirOperationIsNull(op); op = mlirOperationGetNextInBlock(op)) {
    MlirAttribute name = mlirOperationGetAttributeByName(op, sym_name);
    if (mlirAttributeIsNull(name) || !mlirAttributeIsAString(name))
      continue;
    MlirStringRef text = mlirStringAttrGetValue(name);
    entry_facts facts;
    facts_of(op, ctx, &facts);
    buffer_append(meta, "sym ", 4);
    buffer_string(meta, text.data, text.length);
    buffer_printf(meta, " %d %d %d %" PRIdPTR " %u ", facts.is_llvm_func,
                  facts.has_body, facts.has_type, facts.num_inputs,
                  facts.matches);
    buffer_string(meta, facts.result_text, strlen(facts.result_text));
    buffer_append(meta, "\n", 1);
  }
}

/* ---- --tune-hot-paths ------------------------------------------------
 * The pipeline of tools/common/tune_pipeline.c (the same as stc-opt
 * --tune-hot-paths), run on `module` in place: linalg on tensors in, LLVM
 * dialect with runtime site dispatch out. The pass diagnostics go to the
 * context's handler (file:line:col on stderr). */
static stc_status tune_hot_paths(MlirModule module,
                                 const stc_run_compile_request *options,
                                 stc_error *err) {
  MlirContext ctx = mlirModuleGetContext(module);
  mlirRegisterAllPasses();
  MlirPassManager pm = mlirPassManagerCreateOnOperation(
      ctx, mlirStringRefCreateFromCString("builtin.module"));
  stc_status status =
      stc_tune_pipeline_add(mlirPassManagerGetAsOpPassManager(pm),
                            &(stc_tune_pipeline_options){
                                .hot_path_profile = options->hot_path_profile,
                                .schedule_options = options->schedule_options,
                                .variant_library = options->variant_library,
                                .default_lowering = options->default_lowering,
                            },
                            err);
  if (status == STC_OK && mlirLogicalResultIsFailure(mlirPassManagerRunOnOp(
                              pm, mlirModuleGetOperation(module)))) {
    stc_error_set(err, NULL, 0, 0,
                  "the --tune-hot-paths pipeline failed on '%s'",
                  stc_run_input_name);
    status = STC_ERR_INVALID;
  }
  mlirPassManagerDestroy(pm);
  return status;
}

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

/* The cold path: on success (-1) result holds the objects (and lazy
 * units), whether libomp is needed and the metadata a later hit needs. */
static int compile(const stc_run_compile_request *request,
                   stc_run_compile_result *result) {
  memset(result, 0, sizeof *result);
  stc_run_input_name = request->input_name;
  g_show_remarks = request->show_remarks;
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  MlirDialectRegistry registry = mlirDialectRegistryCreate();
  mlirRegisterAllDialects(registry);
  MlirContext ctx = mlirContextCreateWithRegistry(registry, false);
  mlirDialectRegistryDestroy(registry);
  mlirRegisterAllLLVMTranslations(ctx);
  mlirContextAttachDiagnosticHandler(ctx, on_diagnostic, NULL, NULL);

  int code = -1;
  MlirModule module = mlirModuleCreateParse(
      ctx, (MlirStringRef){.data = request->text, .length = request->length});
  if (mlirModuleIsNull(module))
    code = EXIT_INPUT; /* the diagnostic handler printed file:line:col */
  result->parse_s = stc_run_seconds_since(&t);

  clock_gettime(CLOCK_MONOTONIC, &t);
  if (code < 0 && request->tune_hot_paths) {
    stc_error err;
    stc_error_clear(&err);
    if (tune_hot_paths(module, request, &err) != STC_OK) {
      stc_run_error("%s", err.message);
      code = EXIT_FAILURE_RUN;
    }
  }
  result->pipeline_s = stc_run_seconds_since(&t);
  if (code < 0)
    code = check_lowered(module);
  if (code < 0)
    code = check_entry(module, request);
  if (code < 0) {
    result->openmp = uses_openmp(module);
    stc_error err;
    stc_error_clear(&err);
    if (stc_emit_objects_in_memory(
            mlirModuleGetOperation(module), request->opt_level,
            request->compile_threads,
            request->lazy_variants ? &result->lazy : NULL, &result->emit,
            &result->objects, &err) != STC_OK) {
      stc_run_error("cannot create the execution engine for '%s': %s",
                    stc_run_input_name, err.message);
      code = EXIT_FAILURE_RUN;
    }
    result->translate_s = result->emit.translate_optimize_s;
    result->codegen_s = result->emit.codegen_s;
  }
  if (code < 0) {
    byte_buffer *meta = &result->meta;
    buffer_printf(meta, "stc-run meta 1\nopenmp %d\n", result->openmp ? 1 : 0);
    describe_symbols(module, meta);
    buffer_append(meta, g_diagnostics.data, g_diagnostics.size);
    meta->failed |= g_diagnostics.failed;
  }
  free(g_diagnostics.data);
  memset(&g_diagnostics, 0, sizeof g_diagnostics);
  if (!mlirModuleIsNull(module))
    mlirModuleDestroy(module);
  mlirContextDestroy(ctx);
  return code;
}

static void result_free(stc_run_compile_result *result) {
  stc_emit_objects_free(&result->objects);
  stc_emit_lazy_free(result->lazy);
  free(result->meta.data);
  memset(result, 0, sizeof *result);
}

const stc_run_compiler *stc_run_compiler_table(void)
    __attribute__((visibility("default")));
const stc_run_compiler *stc_run_compiler_table(void) {
  static stc_run_compiler table = {
      .header.abi = STC_RUN_COMPILER_ABI,
      .compile = compile,
      .result_free = result_free,
      .lazy_units = stc_emit_lazy_units,
      .lazy_roots = stc_emit_lazy_roots,
      .lazy_compile = stc_emit_lazy_compile,
  };
  table.header.version = stc_version(); /* not a constant expression */
  return &table;
}
