/* libFuzzer target: stc-opt's --pass-pipeline parser (tools/stc-opt/
 * pipeline.c) - tokenizing, nesting, stc pass options in braces, resolution
 * against the stc pass registry - and, for a pipeline that parses, building
 * the pass manager from it (which hands the upstream parts to MLIR's own
 * pipeline parser and creates the stc passes from their options).
 *
 * In: arbitrary bytes as one --pass-pipeline= text. Checks: no crash, leak
 * or undefined behaviour in stc's code. stc-opt's usage errors go to
 * stderr; they are sent to /dev/null while the input runs. */
#include "stc_opt.h"

#include <fcntl.h>
#include <mlir-c/RegisterEverything.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static MlirContext g_ctx;

static void setup(void) {
  MlirDialectRegistry registry = mlirDialectRegistryCreate();
  mlirRegisterAllDialects(registry);
  g_ctx = mlirContextCreateWithRegistry(registry, false);
  mlirDialectRegistryDestroy(registry);
  mlirRegisterAllPasses();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (mlirContextIsNull(g_ctx))
    setup();
  if (memchr(data, 0, size))
    return 0; /* a command-line argument never holds a NUL */
  stc_opt_source source = {STC_OPT_SOURCE_PIPELINE,
                           strndup((const char *)data, size),
                           "--pass-pipeline"};
  if (!source.text)
    abort();
  stc_opt_options options = {0};
  options.input = "-";
  options.output = "-";
  options.sources = &source;
  options.num_sources = 1;
  fflush(stderr);
  int saved = dup(2), null_fd = open("/dev/null", O_WRONLY);
  dup2(null_fd, 2);
  close(null_fd);
  stc_opt_pipeline *pipeline = stc_opt_pipeline_parse(&options);
  if (pipeline) {
    MlirPassManager pm = mlirPassManagerCreateOnOperation(
        g_ctx, mlirStringRefCreateFromCString("builtin.module"));
    (void)stc_opt_pipeline_build(pipeline, &options, g_ctx, pm);
    mlirPassManagerDestroy(pm);
    stc_opt_pipeline_destroy(pipeline);
  }
  fflush(stderr);
  dup2(saved, 2);
  close(saved);
  free(source.text);
  return 0;
}
