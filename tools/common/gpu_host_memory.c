/* gpu_host_memory.c - the --target=cuda pass that puts buffers in device
 * memory and gives host code that touches a buffer an explicit copy.
 *
 * In:  a module after gpu-kernel-outlining: every kernel is in a gpu.module,
 *      so every op of a func.func is host code. Buffers come from
 *      memref.alloc / alloca (bufferization), memref.get_global (constants),
 *      function arguments and call results; gpu_placement.c says which of
 *      them kernels reach.
 * Out: those buffers in device memory: their allocations are gpu.alloc
 *      (plain device memory, never managed) and their deallocations
 *      gpu.dealloc; constants kernels read are copied into a gpu.alloc;
 *      memref.copy touching one is gpu.memcpy; every host op that reads or
 *      writes one's contents (memref.load / store outside kernels, a call of
 *      an external function such as printMemrefF32) reads a host mirror:
 *      before it, a memref.alloc of the root buffer's shape and a gpu.memcpy
 *      device -> host, the view chain (cast, subview, reshapes) rebuilt on
 *      the mirror; after it, for ops that may write, a copy back; then the
 *      mirror is freed. Buffers no kernel reaches stay in host memory,
 *      untouched.
 *
 * External callees named stc_rt_cublas_* take device memory (they are the
 * runtime's cuBLAS entry points); every other external callee is host code.
 * A device buffer whose root has no identity layout cannot be mirrored with
 * gpu.memcpy: that is an error with the op's location, never a silent host
 * access to device memory.
 *
 * Constants (memref.get_global of a constant global) get one device copy
 * per process (runtime stc_rt_gpu_constant), not one per execution.
 *
 * Not done yet (docs/gpu.md): keeping host loops that touch device memory
 * on the device (each host access copies the whole root buffer: correct,
 * slow). */
#include "tune_pipeline_cuda.h"

#include "stc_passes.h"

#include <mlir-c/BuiltinAttributes.h>
#include <mlir-c/BuiltinTypes.h>
#include <mlir-c/AffineMap.h>
#include <mlir-c/Diagnostics.h>
#include <mlir-c/Dialect/LLVM.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct op_list {
  MlirOperation *ops;
  size_t count, capacity;
  bool out_of_memory;
} op_list;

static void push(op_list *list, MlirOperation op) {
  if (list->count == list->capacity) {
    size_t capacity = list->capacity ? 2 * list->capacity : 64;
    MlirOperation *grown = realloc(list->ops, capacity * sizeof *grown);
    if (!grown) {
      list->out_of_memory = true;
      return;
    }
    list->ops = grown;
    list->capacity = capacity;
  }
  list->ops[list->count++] = op;
}

static bool name_starts(MlirStringRef name, const char *prefix) {
  size_t n = strlen(prefix);
  return name.length >= n && memcmp(name.data, prefix, n) == 0;
}

static MlirWalkResult collect(MlirOperation op, void *user) {
  if (stc__op_is(op, "gpu.module"))
    return MlirWalkResultSkip;
  push(user, op);
  return MlirWalkResultAdvance;
}

/* ---- building ops ---- */

static MlirOperation create(const char *name, MlirLocation loc, intptr_t num_operands,
                            const MlirValue *operands, intptr_t num_results,
                            const MlirType *results, intptr_t num_attributes,
                            const MlirNamedAttribute *attributes) {
  MlirOperationState state = mlirOperationStateGet(stc__str(name), loc);
  if (num_operands)
    mlirOperationStateAddOperands(&state, num_operands, operands);
  if (num_results)
    mlirOperationStateAddResults(&state, num_results, results);
  if (num_attributes)
    mlirOperationStateAddAttributes(&state, num_attributes, attributes);
  return mlirOperationCreate(&state);
}

static MlirOperation before(MlirOperation reference, MlirOperation op) {
  mlirBlockInsertOwnedOperationBefore(mlirOperationGetBlock(reference), reference, op);
  return op;
}

static MlirOperation after(MlirOperation reference, MlirOperation op) {
  mlirBlockInsertOwnedOperationAfter(mlirOperationGetBlock(reference), reference, op);
  return op;
}

static MlirNamedAttribute segments(MlirContext ctx, int count, const int32_t *sizes) {
  return mlirNamedAttributeGet(mlirIdentifierGet(ctx, stc__str("operandSegmentSizes")),
                               mlirDenseI32ArrayGet(ctx, count, sizes));
}

/* gpu.alloc of `type` with the given dynamic sizes and symbol operands. */
static MlirOperation gpu_alloc(MlirLocation loc, MlirType type, intptr_t num_dynamic,
                               const MlirValue *operands, intptr_t num_symbols) {
  MlirContext ctx = mlirLocationGetContext(loc);
  int32_t sizes[3] = {0, (int32_t)num_dynamic, (int32_t)num_symbols};
  MlirNamedAttribute attribute = segments(ctx, 3, sizes);
  return create("gpu.alloc", loc, num_dynamic + num_symbols, operands, 1, &type, 1,
                &attribute);
}

static MlirOperation gpu_memcpy(MlirLocation loc, MlirValue dst, MlirValue src) {
  MlirValue operands[2] = {dst, src};
  return create("gpu.memcpy", loc, 2, operands, 0, NULL, 0, NULL);
}

static MlirValue result(MlirOperation op) { return mlirOperationGetResult(op, 0); }

/* The dynamic sizes of `buffer` (memref.dim ops inserted before `at`). */
static intptr_t dynamic_sizes(MlirOperation at, MlirValue buffer, MlirValue *sizes) {
  MlirType type = mlirValueGetType(buffer);
  MlirLocation loc = mlirOperationGetLocation(at);
  MlirContext ctx = mlirLocationGetContext(loc);
  MlirType index = mlirIndexTypeGet(ctx);
  intptr_t count = 0;
  for (intptr_t d = 0; d < mlirShapedTypeGetRank(type); d++) {
    if (!mlirShapedTypeIsDynamicDim(type, d))
      continue;
    MlirNamedAttribute value = mlirNamedAttributeGet(
        mlirIdentifierGet(ctx, stc__str("value")), mlirIntegerAttrGet(index, d));
    MlirOperation constant =
        before(at, create("arith.constant", loc, 0, NULL, 1, &index, 1, &value));
    MlirValue operands[2] = {buffer, result(constant)};
    sizes[count++] = result(before(at, create("memref.dim", loc, 2, operands, 1, &index, 0, NULL)));
  }
  return count;
}

/* ---- device allocations ---- */

/* memref.alloc / alloca -> gpu.alloc. */
static void to_device_alloc(MlirOperation op) {
  MlirValue old = result(op);
  MlirType type = mlirValueGetType(old);
  intptr_t num_operands = mlirOperationGetNumOperands(op);
  MlirValue operands[64];
  if (num_operands > 64)
    return;
  intptr_t num_dynamic = 0;
  for (intptr_t d = 0; d < mlirShapedTypeGetRank(type); d++)
    num_dynamic += mlirShapedTypeIsDynamicDim(type, d);
  for (intptr_t i = 0; i < num_operands; i++)
    operands[i] = mlirOperationGetOperand(op, i);
  MlirOperation alloc = before(op, gpu_alloc(mlirOperationGetLocation(op), type, num_dynamic,
                                             operands, num_operands - num_dynamic));
  mlirValueReplaceAllUsesOfWith(old, result(alloc));
  mlirOperationDestroy(op);
}

/* memref.get_global -> gpu.alloc + gpu.memcpy from the global (host): a
 * fresh copy at every execution, for globals kernels may write. */
static void global_to_device(MlirOperation op) {
  MlirValue global = result(op);
  MlirType type = mlirValueGetType(global);
  MlirLocation loc = mlirOperationGetLocation(op);
  MlirOperation alloc = after(op, gpu_alloc(loc, type, 0, NULL, 0));
  mlirValueReplaceAllUsesOfWith(global, result(alloc));
  after(alloc, gpu_memcpy(loc, result(alloc), global));
}

/* Bytes of one element of a memref of `element` (the LLVM lowering's
 * storage size: i1 takes a byte); 0 for types this does not know. */
static int64_t element_bytes(MlirType element) {
  if (mlirTypeIsAIndex(element))
    return 8;
  if (mlirTypeIsAInteger(element))
    return (mlirIntegerTypeGetWidth(element) + 7) / 8;
  if (mlirTypeIsAFloat(element))
    return (mlirFloatTypeGetWidth(element) + 7) / 8;
  return 0;
}

/* Whether `get_global` reads a constant memref.global (never written). */
static bool reads_constant(MlirOperation get_global, MlirSymbolTable symbols) {
  MlirAttribute name = mlirOperationGetAttributeByName(get_global, stc__str("name"));
  if (mlirAttributeIsNull(name) || !mlirAttributeIsAFlatSymbolRef(name))
    return false;
  MlirOperation global = mlirSymbolTableLookup(symbols, mlirFlatSymbolRefAttrGetValue(name));
  return !mlirOperationIsNull(global) && stc__op_is(global, "memref.global") &&
         !mlirAttributeIsNull(mlirOperationGetAttributeByName(global, stc__str("constant")));
}

#define CONSTANT_CALLEE "stc_rt_gpu_constant"

static MlirOperation llvm_constant(MlirOperation at, MlirLocation loc, MlirType i64,
                                   int64_t value) {
  MlirNamedAttribute attribute = mlirNamedAttributeGet(
      mlirIdentifierGet(mlirLocationGetContext(loc), stc__str("value")),
      mlirIntegerAttrGet(i64, value));
  return before(at, create("llvm.mlir.constant", loc, 0, NULL, 1, &i64, 1, &attribute));
}

static MlirValue insert_value(MlirOperation at, MlirLocation loc, MlirValue container,
                              MlirValue value, int n, const int64_t *position) {
  MlirContext ctx = mlirLocationGetContext(loc);
  MlirNamedAttribute attribute = mlirNamedAttributeGet(
      mlirIdentifierGet(ctx, stc__str("position")), mlirDenseI64ArrayGet(ctx, n, position));
  MlirValue operands[2] = {container, value};
  MlirType type = mlirValueGetType(container);
  return result(before(at, create("llvm.insertvalue", loc, 2, operands, 1, &type, 1,
                                  &attribute)));
}

/* memref.get_global of a constant -> the process's one device copy of it
 * (runtime stc_rt_gpu_constant, by the global's host address):
 *   %p = memref.extract_aligned_pointer_as_index %global
 *   %d = func.call @stc_rt_gpu_constant(%p, <bytes>) : (index, index) -> index
 * and a memref descriptor on %d (LLVM dialect: the offset and strides of the
 * global's identity layout), cast to the global's type. A model called in
 * a loop then copies each constant once, instead of allocating and copying
 * it at every call and never freeing it. False (nothing changed) for
 * types it does not handle: the caller falls back to global_to_device. */
static bool constant_to_device(MlirOperation op, MlirOperation module,
                               MlirSymbolTable symbols) {
  MlirValue global = result(op);
  MlirType type = mlirValueGetType(global);
  MlirLocation loc = mlirOperationGetLocation(op);
  MlirContext ctx = mlirLocationGetContext(loc);
  int64_t rank = mlirShapedTypeGetRank(type), elements = 1;
  int64_t bytes = element_bytes(mlirShapedTypeGetElementType(type));
  if (!bytes || rank > 8 || !mlirShapedTypeHasStaticShape(type) ||
      !mlirAttributeIsNull(mlirMemRefTypeGetMemorySpace(type)))
    return false;
  MlirAttribute layout = mlirMemRefTypeGetLayout(type);
  if (!mlirAttributeIsNull(layout) &&
      !(mlirAttributeIsAAffineMap(layout) &&
        mlirAffineMapIsIdentity(mlirAffineMapAttrGetValue(layout))))
    return false;
  int64_t sizes[8], strides[8];
  for (int64_t d = 0; d < rank; d++)
    sizes[d] = mlirShapedTypeGetDimSize(type, d), elements *= sizes[d];
  for (int64_t d = rank, stride = 1; d-- > 0;)
    strides[d] = stride, stride *= sizes[d];
  if (elements == 0)
    return false;
  char text[256];
  if (rank)
    snprintf(text, sizeof text,
             "!llvm.struct<(ptr, ptr, i64, array<%lld x i64>, array<%lld x i64>)>",
             (long long)rank, (long long)rank);
  else
    snprintf(text, sizeof text, "!llvm.struct<(ptr, ptr, i64)>");
  MlirType descriptor = mlirTypeParseGet(ctx, stc__str(text));
  MlirType ptr = mlirTypeParseGet(ctx, stc__str("!llvm.ptr"));
  if (mlirTypeIsNull(descriptor) || mlirTypeIsNull(ptr))
    return false;
  MlirOperation callee = mlirSymbolTableLookup(symbols, stc__str(CONSTANT_CALLEE));
  if (mlirOperationIsNull(callee)) {
    callee = mlirOperationCreateParse(
        ctx, stc__str("func.func private @" CONSTANT_CALLEE "(index, index) -> index"),
        stc__str("stc-gpu-host-memory"));
    if (mlirOperationIsNull(callee))
      return false;
    MlirBlock body = mlirRegionGetFirstBlock(mlirOperationGetRegion(module, 0));
    mlirBlockInsertOwnedOperation(body, 0, callee);
    mlirSymbolTableInsert(symbols, callee);
  }
  MlirOperation next = mlirOperationGetNextInBlock(op);
  MlirType index = mlirIndexTypeGet(ctx), i64 = mlirIntegerTypeGet(ctx, 64);
  MlirValue host = result(before(next, create("memref.extract_aligned_pointer_as_index",
                                              loc, 1, &global, 1, &index, 0, NULL)));
  MlirNamedAttribute value = mlirNamedAttributeGet(
      mlirIdentifierGet(ctx, stc__str("value")), mlirIntegerAttrGet(index, elements * bytes));
  MlirValue size = result(before(next, create("arith.constant", loc, 0, NULL, 1, &index,
                                              1, &value)));
  MlirNamedAttribute target = mlirNamedAttributeGet(
      mlirIdentifierGet(ctx, stc__str("callee")),
      mlirFlatSymbolRefAttrGet(ctx, stc__str(CONSTANT_CALLEE)));
  MlirValue args[2] = {host, size};
  MlirValue device = result(before(next, create("func.call", loc, 2, args, 1, &index, 1,
                                                &target)));
  MlirValue word = result(before(next, create("arith.index_cast", loc, 1, &device, 1,
                                              &i64, 0, NULL)));
  MlirValue pointer = result(before(next, create("llvm.inttoptr", loc, 1, &word, 1, &ptr,
                                                 0, NULL)));
  MlirValue d = result(before(next, create("llvm.mlir.undef", loc, 0, NULL, 1,
                                           &descriptor, 0, NULL)));
  int64_t position[2] = {0, 0};
  d = insert_value(next, loc, d, pointer, 1, position);
  position[0] = 1;
  d = insert_value(next, loc, d, pointer, 1, position);
  position[0] = 2;
  d = insert_value(next, loc, d, result(llvm_constant(next, loc, i64, 0)), 1, position);
  for (int64_t k = 0; k < rank; k++) {
    position[0] = 3, position[1] = k;
    d = insert_value(next, loc, d, result(llvm_constant(next, loc, i64, sizes[k])), 2,
                     position);
    position[0] = 4;
    d = insert_value(next, loc, d, result(llvm_constant(next, loc, i64, strides[k])), 2,
                     position);
  }
  MlirOperation cast = before(next, create("builtin.unrealized_conversion_cast", loc, 1,
                                           &d, 1, &type, 0, NULL));
  /* Every use but the pointer extraction above reads the device copy. */
  MlirOperation extract = mlirOpResultGetOwner(host);
  mlirValueReplaceAllUsesExcept(global, result(cast), 1, &extract);
  return true;
}

static bool identity_layout(MlirType type) {
  if (!mlirTypeIsAMemRef(type))
    return false;
  MlirAttribute layout = mlirMemRefTypeGetLayout(type);
  return mlirAttributeIsNull(layout) ||
         (mlirAttributeIsAAffineMap(layout) &&
          mlirAffineMapIsIdentity(mlirAffineMapAttrGetValue(layout)));
}

/* ---- host mirrors ---- */

static bool is_view(MlirOperation op) {
  static const char *const views[] = {
      "memref.cast", "memref.subview", "memref.collapse_shape",
      "memref.expand_shape", "memref.reinterpret_cast", "memref.transpose",
      "memref.memory_space_cast", NULL};
  for (const char *const *v = views; *v; v++)
    if (stc__op_is(op, *v))
      return true;
  return false;
}

#define MAX_CHAIN 32

/* Mirrors operand `index` of the host op `op` in host memory, when its
 * root buffer is on the device. */
static bool mirror_operand(MlirOperation op, intptr_t index, bool copy_back,
                           stc_gpu_placement *placement, MlirExternalPass pass) {
  MlirValue value = mlirOperationGetOperand(op, index);
  MlirOperation chain[MAX_CHAIN];
  size_t length = 0;
  MlirValue root = value;
  while (mlirValueIsAOpResult(root) && length < MAX_CHAIN) {
    MlirOperation owner = mlirOpResultGetOwner(root);
    if (!is_view(owner))
      break;
    chain[length++] = owner;
    root = mlirOperationGetOperand(owner, 0);
  }
  bool made_here = mlirValueIsAOpResult(root) &&
                   stc__op_is(mlirOpResultGetOwner(root), "gpu.alloc");
  if (!made_here && length < MAX_CHAIN &&
      !stc_gpu_placement_on_device(placement, root))
    return true; /* a host buffer: nothing to copy */
  MlirType root_type = mlirValueGetType(root);
  MlirLocation loc = mlirOperationGetLocation(op);
  if (!identity_layout(root_type) || length == MAX_CHAIN) {
    mlirEmitError(loc, "--target=cuda: host code touches a buffer whose root "
                       "has no identity layout; it cannot be copied to the host");
    mlirExternalPassSignalFailure(pass);
    return false;
  }
  MlirValue sizes[16];
  if (mlirShapedTypeGetRank(root_type) > 16)
    return false;
  intptr_t num_dynamic = dynamic_sizes(op, root, sizes);
  MlirContext ctx = mlirLocationGetContext(loc);
  int32_t segment[2] = {(int32_t)num_dynamic, 0};
  MlirNamedAttribute attribute = segments(ctx, 2, segment);
  MlirValue mirror = result(
      before(op, create("memref.alloc", loc, num_dynamic, sizes, 1, &root_type, 1, &attribute)));
  before(op, gpu_memcpy(loc, mirror, root));
  MlirValue view = mirror;
  for (size_t i = length; i-- > 0;) {
    MlirOperation clone = before(op, mlirOperationClone(chain[i]));
    mlirOperationSetOperand(clone, 0, view);
    view = result(clone);
  }
  mlirOperationSetOperand(op, index, view);
  MlirOperation last = op;
  if (copy_back)
    last = after(last, gpu_memcpy(loc, root, mirror));
  after(last, create("memref.dealloc", loc, 1, &mirror, 0, NULL, 0, NULL));
  return true;
}

/* The external callee of a func.call, or a null op when it has a body (a
 * compiled function, which takes device memory itself). */
static MlirOperation external_callee(MlirOperation call, MlirSymbolTable symbols,
                                     MlirStringRef *name) {
  MlirAttribute callee = mlirOperationGetAttributeByName(call, stc__str("callee"));
  MlirOperation none = {NULL};
  if (mlirAttributeIsNull(callee) || !mlirAttributeIsAFlatSymbolRef(callee))
    return none;
  *name = mlirFlatSymbolRefAttrGetValue(callee);
  MlirOperation function = mlirSymbolTableLookup(symbols, *name);
  if (mlirOperationIsNull(function) || mlirOperationGetNumRegions(function) == 0)
    return none;
  MlirBlock body = mlirRegionGetFirstBlock(mlirOperationGetRegion(function, 0));
  return mlirBlockIsNull(body) ? function : none;
}

static bool host_touch(MlirOperation op, MlirSymbolTable symbols,
                       stc_gpu_placement *placement, MlirExternalPass pass) {
  if (stc__op_is(op, "memref.load"))
    return mirror_operand(op, 0, false, placement, pass);
  if (stc__op_is(op, "memref.store"))
    return mirror_operand(op, 1, true, placement, pass);
  if (!stc__op_is(op, "func.call"))
    return true;
  MlirStringRef name = {NULL, 0};
  MlirOperation callee = external_callee(op, symbols, &name);
  if (mlirOperationIsNull(callee) || name_starts(name, "stc_rt_cublas_"))
    return true;
  /* MLIR's printers only read; any other external function may write. */
  bool reads_only = name_starts(name, "printMemref") || name_starts(name, "verifyMemRef");
  for (intptr_t i = 0; i < mlirOperationGetNumOperands(op); i++)
    if (mlirTypeIsAMemRef(mlirValueGetType(mlirOperationGetOperand(op, i))) ||
        mlirTypeIsAUnrankedMemRef(mlirValueGetType(mlirOperationGetOperand(op, i))))
      if (!mirror_operand(op, i, !reads_only, placement, pass))
        return false;
  return true;
}

static void run(MlirOperation module, MlirExternalPass pass, void *state) {
  (void)state;
  op_list ops = {0};
  mlirOperationWalk(module, collect, &ops, MlirWalkPreOrder);
  if (ops.out_of_memory) {
    mlirEmitError(mlirOperationGetLocation(module), "out of memory");
    mlirExternalPassSignalFailure(pass);
    free(ops.ops);
    return;
  }
  MlirSymbolTable symbols = mlirSymbolTableCreate(module);
  /* Decided before anything changes: which buffers kernels reach. */
  stc_gpu_placement *placement = stc_gpu_placement_create(module, symbols);
  if (!placement) {
    mlirEmitError(mlirOperationGetLocation(module), "out of memory");
    mlirExternalPassSignalFailure(pass);
    mlirSymbolTableDestroy(symbols);
    free(ops.ops);
    return;
  }
  /* Roots first, so that the mirrors below copy from device buffers. */
  for (size_t i = 0; i < ops.count; i++) {
    MlirOperation op = ops.ops[i];
    bool device_result = mlirOperationGetNumResults(op) == 1 &&
                         stc_gpu_placement_on_device(placement, result(op));
    bool device_operand =
        mlirOperationGetNumOperands(op) >= 1 &&
        stc_gpu_placement_on_device(placement, mlirOperationGetOperand(op, 0));
    if ((stc__op_is(op, "memref.alloc") || stc__op_is(op, "memref.alloca")) &&
        device_result) {
      to_device_alloc(op);
      ops.ops[i] = (MlirOperation){NULL};
    } else if (stc__op_is(op, "memref.alloc") || stc__op_is(op, "memref.alloca")) {
      ops.ops[i] = (MlirOperation){NULL}; /* a host buffer stays */
    } else if (stc__op_is(op, "memref.dealloc") && !device_operand) {
      ops.ops[i] = (MlirOperation){NULL};
    } else if (stc__op_is(op, "memref.get_global") && !device_result) {
      ops.ops[i] = (MlirOperation){NULL};
    } else if (stc__op_is(op, "memref.copy") && !device_operand &&
               !stc_gpu_placement_on_device(placement, mlirOperationGetOperand(op, 1))) {
      ops.ops[i] = (MlirOperation){NULL}; /* host to host: a plain copy */
    } else if (stc__op_is(op, "memref.dealloc")) {
      MlirValue buffer = mlirOperationGetOperand(op, 0);
      before(op, create("gpu.dealloc", mlirOperationGetLocation(op), 1, &buffer, 0, NULL, 0, NULL));
      mlirOperationDestroy(op);
      ops.ops[i] = (MlirOperation){NULL};
    } else if (stc__op_is(op, "memref.get_global")) {
      if (!reads_constant(op, symbols) || !constant_to_device(op, module, symbols))
        global_to_device(op);
    } else if (stc__op_is(op, "memref.copy") &&
               identity_layout(mlirValueGetType(mlirOperationGetOperand(op, 0))) &&
               identity_layout(mlirValueGetType(mlirOperationGetOperand(op, 1)))) {
      before(op, gpu_memcpy(mlirOperationGetLocation(op), mlirOperationGetOperand(op, 1),
                            mlirOperationGetOperand(op, 0)));
      mlirOperationDestroy(op);
      ops.ops[i] = (MlirOperation){NULL};
    }
  }
  for (size_t i = 0; i < ops.count; i++) {
    MlirOperation op = ops.ops[i];
    if (mlirOperationIsNull(op))
      continue;
    if (stc__op_is(op, "memref.copy")) {
      mlirEmitError(mlirOperationGetLocation(op),
                    "--target=cuda: memref.copy of non-identity layouts in host "
                    "code is not supported yet");
      mlirExternalPassSignalFailure(pass);
      break;
    }
    if (!host_touch(op, symbols, placement, pass))
      break;
  }
  stc_gpu_placement_destroy(placement);
  mlirSymbolTableDestroy(symbols);
  free(ops.ops);
}

static const stc_pass_spec spec = {
    "stc-gpu-host-memory",
    "--target=cuda: device allocations, explicit host mirrors where host code "
    "touches a buffer",
    "builtin.module", NULL, 0, NULL};

static _Alignas(8) const char type_id_anchor[8];

MlirPass stc_gpu_host_memory_pass_create(void) {
  /* llvm: constants' device copies are descriptors built in LLVM ops. */
  MlirDialectHandle dialects[] = {mlirGetDialectHandle__llvm__()};
  stc_pass_def def = {&spec, "StcGpuHostMemory", type_id_anchor,
                      dialects, 1, run, NULL, NULL};
  return stc__create_pass(&def, NULL);
}
