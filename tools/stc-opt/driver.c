/* driver.c - the flow of one stc-opt invocation.
 * In:  options. Out: the output IR (to -o), diagnostics (to stderr), an exit
 * code. The whole flow:
 *   create: parse the pipeline -> context (all dialects, passes, LLVM
 *           translations) -> pass manager with the pipeline spliced in
 *   run:    read input -> split into chunks -> per chunk: parse -> run the
 *           pass manager -> verify or print diagnostics -> print the IR
 *           -> write the output. */
#include "stc_opt.h"

#include <errno.h>
#include <mlir-c/RegisterEverything.h>
#include <stdlib.h>
#include <string.h>

#define STDIN_NAME "<stdin>"

static MlirOpPrintingFlags printing_flags(const stc_opt_options *options) {
  MlirOpPrintingFlags flags = mlirOpPrintingFlagsCreate();
  if (options->print_debuginfo)
    mlirOpPrintingFlagsEnableDebugInfo(flags, true, false);
  if (options->print_generic)
    mlirOpPrintingFlagsPrintGenericOpForm(flags);
  return flags;
}

int stc_opt_driver_create(stc_opt_driver *driver,
                          const stc_opt_options *options) {
  *driver = (stc_opt_driver){0};
  driver->pipeline = stc_opt_pipeline_parse(options);
  if (!driver->pipeline)
    return STC_OPT_EXIT_USAGE;

  MlirDialectRegistry registry = mlirDialectRegistryCreate();
  mlirRegisterAllDialects(registry);
  driver->ctx = mlirContextCreateWithRegistry(registry, false);
  mlirDialectRegistryDestroy(registry);
  mlirRegisterAllLLVMTranslations(driver->ctx);
  mlirRegisterAllPasses();
  /* IR dumps of passes nested under many functions would interleave. */
  if (options->print_ir_after_all)
    mlirContextEnableMultithreading(driver->ctx, false);
  stc_opt_diagnostics_attach(&driver->diagnostics, driver->ctx);

  driver->pm = mlirPassManagerCreateOnOperation(
      driver->ctx, mlirStringRefCreateFromCString("builtin.module"));
  int code = stc_opt_pipeline_build(driver->pipeline, options, driver->ctx,
                                    driver->pm);
  if (code != STC_OPT_EXIT_OK)
    return code;
  if (options->print_ir_after_all) {
    MlirOpPrintingFlags flags = printing_flags(options);
    mlirPassManagerEnableIRPrinting(driver->pm, false, true, false, false,
                                    false, flags, mlirStringRefCreate(NULL, 0));
    mlirOpPrintingFlagsDestroy(flags);
  }
  if (options->timing)
    mlirPassManagerEnableTiming(driver->pm);
  return STC_OPT_EXIT_OK;
}

void stc_opt_driver_destroy(stc_opt_driver *driver) {
  /* Destroying the pass manager prints the --mlir-timing report. */
  if (driver->pm.ptr)
    mlirPassManagerDestroy(driver->pm);
  if (driver->ctx.ptr)
    mlirContextDestroy(driver->ctx);
  stc_opt_diagnostics_clear(&driver->diagnostics);
  free(driver->diagnostics.items);
  stc_opt_pipeline_destroy(driver->pipeline);
  *driver = (stc_opt_driver){0};
}

/* Parses and runs one chunk; appends its IR to output on success. Returns
 * the chunk's exit code. */
static int process_chunk(stc_opt_driver *driver, const stc_opt_options *options,
                         const stc_opt_chunk *chunk, const char *file_name,
                         stc_text *output) {
  stc_opt_diagnostics_clear(&driver->diagnostics);
  int code = STC_OPT_EXIT_OK;
  MlirModule module = stc_opt_parse_module(driver->ctx, &chunk->text,
                                           file_name, &driver->diagnostics);
  if (mlirModuleIsNull(module)) {
    code = STC_OPT_EXIT_INPUT;
  } else {
    MlirOperation op = mlirModuleGetOperation(module);
    bool emitted = false;
    if (mlirLogicalResultIsSuccess(mlirPassManagerRunOnOp(driver->pm, op)) &&
        (code = stc_opt_tune_finish(op, options, &emitted)) == STC_OPT_EXIT_OK &&
        !emitted) {
      MlirOpPrintingFlags flags = printing_flags(options);
      mlirOperationPrintWithFlags(op, flags, stc_text_callback, output);
      mlirOpPrintingFlagsDestroy(flags);
      stc_text_append(output, "\n", 1);
    } else if (code == STC_OPT_EXIT_OK && !emitted) {
      code = STC_OPT_EXIT_FAILURE;
    }
    mlirModuleDestroy(module);
  }

  if (options->verify_diagnostics)
    return stc_opt_verify_diagnostics(&driver->diagnostics, file_name,
                                      chunk->text.data, stderr)
               ? STC_OPT_EXIT_OK
               : STC_OPT_EXIT_FAILURE;
  stc_opt_diagnostics_print(&driver->diagnostics, stderr, file_name,
                            chunk->text.data);
  if (code == STC_OPT_EXIT_FAILURE &&
      !stc_opt_diagnostics_has_errors(&driver->diagnostics))
    stc_opt_error("the pass pipeline failed on '%s' without a diagnostic",
                  file_name);
  return code;
}

/* Bad input outranks a failed pass: it is what the user must fix first. */
static int worse(int a, int b) {
  if (a == STC_OPT_EXIT_INPUT || b == STC_OPT_EXIT_INPUT)
    return STC_OPT_EXIT_INPUT;
  return a > b ? a : b;
}

static int write_output(const char *path, const stc_text *output) {
  bool to_stdout = strcmp(path, "-") == 0;
  FILE *file = to_stdout ? stdout : fopen(path, "wb");
  if (!file) {
    stc_opt_error("cannot write '%s': %s", path, strerror(errno));
    return STC_OPT_EXIT_INPUT;
  }
  bool ok = fwrite(output->data ? output->data : "", 1, output->length,
                   file) == output->length;
  ok = (to_stdout ? fflush(file) : fclose(file)) == 0 && ok;
  if (!ok) {
    stc_opt_error("cannot write '%s': %s", path, strerror(errno));
    return STC_OPT_EXIT_INPUT;
  }
  return STC_OPT_EXIT_OK;
}

int stc_opt_driver_run(stc_opt_driver *driver, const stc_opt_options *options) {
  stc_text input = {0};
  stc_error err;
  stc_error_clear(&err);
  if (!stc_opt_read_file(options->input, &input, &err)) {
    char message[sizeof err.file + sizeof err.message + 64];
    stc_error_format(&err, message, sizeof message);
    if (errno)
      stc_opt_error("cannot read '%s': %s", options->input, strerror(errno));
    else
      stc_opt_error("%s", message);
    stc_text_free(&input);
    return STC_OPT_EXIT_INPUT;
  }
  const char *file_name =
      strcmp(options->input, "-") == 0 ? STDIN_NAME : options->input;
  if (!stc_opt_check_nesting(&input, file_name)) {
    stc_text_free(&input);
    return STC_OPT_EXIT_INPUT;
  }

  stc_opt_chunk *chunks = NULL;
  size_t count = 0;
  int code = STC_OPT_EXIT_OK;
  stc_text output = {0};
  bool split = stc_opt_split_input(input.data, input.length,
                                   options->split_input_file, &chunks, &count);
  if (!split) {
    stc_opt_error("out of memory splitting '%s'", file_name);
    code = STC_OPT_EXIT_INPUT;
  }
  for (size_t i = 0; split && i < count; i++) {
    if (i > 0)
      stc_text_append(&output, "// -----\n", 9);
    code = worse(code,
                 process_chunk(driver, options, &chunks[i], file_name, &output));
  }
  if (output.out_of_memory) {
    stc_opt_error("out of memory printing the output");
    code = STC_OPT_EXIT_INPUT;
  }
  /* Like mlir-opt, an output file is only kept when everything succeeded. */
  /* --emit=llvm|obj: stc_opt_tune_finish wrote the output itself. */
  bool emitted = options->tune.requested && options->tune.emit &&
                 strcmp(options->tune.emit, "mlir") != 0;
  if (!emitted && (code == STC_OPT_EXIT_OK || strcmp(options->output, "-") == 0))
    code = worse(code, write_output(options->output, &output));
  stc_text_free(&output);
  stc_opt_chunks_free(chunks, count);
  stc_text_free(&input);
  return code;
}
