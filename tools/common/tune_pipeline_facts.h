/* tune_pipeline_facts.h - what a driver needs to know about the
 * --tune-hot-paths pipeline (tune_pipeline.h) without building it, so
 * without MLIR: its revision, for compiled-code cache keys, and the
 * values of its options. */
#ifndef STC_TUNE_PIPELINE_FACTS_H
#define STC_TUNE_PIPELINE_FACTS_H

#include <stdbool.h>
#include <string.h>

/* The pipeline's revision: bumped whenever the code it emits for the same
 * input and options changes (2: stc-hoist-accumulators). stc-run's object
 * cache keys by it, so that a warm start never runs code an older pipeline
 * made for the same stc version. */
#define STC_TUNE_PIPELINE_REVISION 2

/* True for the values --default-lowering accepts ("fast", "loops"). */
static inline bool stc_tune_default_lowering_valid(const char *value) {
  return value && (strcmp(value, "fast") == 0 || strcmp(value, "loops") == 0);
}

#endif /* STC_TUNE_PIPELINE_FACTS_H */
