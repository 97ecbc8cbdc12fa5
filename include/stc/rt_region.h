/* stc/rt_region.h - the region timer ABI between stc-instrument and the
 * runtime (DESIGN.md section 4, stc-instrument).
 *
 * stc-instrument brackets every region of a program (each computing linalg
 * op, outlined into its own function, and each function body) like this:
 *
 *     token = stc_rt_region_begin(id);
 *     ... the region ...
 *     stc_rt_region_end(id, token, bytes);
 *
 * and declares the two functions in the module as
 *
 *     func.func private @stc_rt_region_begin(!llvm.ptr) -> i64
 *     func.func private @stc_rt_region_end(!llvm.ptr, i64, i64)
 *
 * which lower to `llvm.func` declarations with exactly the C signatures
 * below (i64 is int64_t, !llvm.ptr is a pointer). The runtime (libstc_rt,
 * its hints recorder) defines them; an instrumented program links it.
 *
 * Contract:
 * - `id` is the region's stable id (region_id.h in passes/ gives the
 *   format), a NUL-terminated string in a constant global of the program:
 *   it lives as long as the program, so the runtime may keep the pointer
 *   without copying it. The same region always passes the same pointer.
 * - begin returns an opaque token that end receives unchanged, on the same
 *   thread. The instrumented code never inspects it.
 * - `bytes` is the static number of bytes the region's operands and results
 *   occupy (for a function body: its arguments and results), or 0 when some
 *   shape is dynamic. It feeds the record's bytes_total.
 * - Regions nest (a function body contains its ops' regions and the bodies
 *   of the functions it calls); every begin is matched by exactly one end on
 *   the same thread, in LIFO order; a function body is ended before each of
 *   its returns. The time recorded for a region is *inclusive*: everything
 *   between its begin and its end, nested regions included. Op regions never
 *   nest in each other (each is one outlined call), so their times are
 *   disjoint; the scheduling pass derives a function body's self time by
 *   subtracting the regions nested in it.
 * - Time the runtime spends tuning (trial runs of variants) inside a region
 *   is not counted: a profile measures steady-state execution.
 * - Neither function may fail, block on I/O or call back into the program;
 *   both must be safe to call from any thread. The profile is written at
 *   exit to the path in STC_PROFILE_OUT (no variable: nothing is written).
 */
#ifndef STC_RT_REGION_H
#define STC_RT_REGION_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Symbol names the pass declares; the runtime defines these functions. */
#define STC_RT_REGION_BEGIN_SYMBOL "stc_rt_region_begin"
#define STC_RT_REGION_END_SYMBOL "stc_rt_region_end"
/* The same declarations as MLIR types, as the pass emits them. */
#define STC_RT_REGION_BEGIN_MLIR_TYPE "(!llvm.ptr) -> i64"
#define STC_RT_REGION_END_MLIR_TYPE "(!llvm.ptr, i64, i64) -> ()"

/* Starts timing region `id` on this thread; returns a token for
 * stc_rt_region_end. */
int64_t stc_rt_region_begin(const char *id);

/* Ends the region begun with `token`: records one dispatch of `id` with the
 * time since begin (minus time spent tuning) and `bytes`. */
void stc_rt_region_end(const char *id, int64_t token, int64_t bytes);

#ifdef __cplusplus
}
#endif

#endif /* STC_RT_REGION_H */
