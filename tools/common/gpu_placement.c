/* gpu_placement.c - which buffers of a --target=cuda module must live in
 * device memory (used by stc-gpu-host-memory, gpu_host_memory.c).
 *
 * In:  a module after gpu-kernel-outlining (kernels in gpu.modules, host
 *      code in func.funcs).
 * Out: alias classes of the memref values of host code, and whether each
 *      class reaches a kernel (a gpu.launch_func operand, or an argument of
 *      a stc_rt_cublas_* call). A buffer whose class never reaches a kernel
 *      stays in host memory: e.g. the metadata buffers of the deallocation
 *      helper, which host loops read and write element by element.
 *
 * Classes join: a view with its source; a call's operands with the
 * callee's parameters and its results with the callee's returned values;
 * and, conservatively, every memref operand, result and region argument
 * (and region terminator operand) of any other op that is not known to keep
 * its buffers apart (memref.load/store/dim/copy/dealloc, external calls,
 * launches), and a memref.copy into a fresh memref.alloc (a clone, e.g.
 * what ownership-based deallocation returns for a public function's result
 * that is one of its arguments): a clone lives where its source lives,
 * else returning a device argument would return a host copy made by a
 * device-to-host transfer in every call (the slowdown of the matmul bench
 * after 0a571f3). Joining too much only keeps more buffers on the device, which
 * is what the pass did without this analysis; joining too little would put
 * a kernel's buffer in host memory, so unknown values count as device. */
#include "tune_pipeline_cuda.h"

#include "stc_passes.h"

#include <mlir-c/BuiltinAttributes.h>
#include <mlir-c/BuiltinTypes.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct stc_gpu_placement {
  const void **keys; /* MlirValue.ptr, open addressing; NULL = empty */
  uint32_t *index;   /* keys[i] -> node */
  size_t capacity;   /* power of two */
  uint32_t *parent;  /* union-find over nodes */
  bool *device;      /* per node; meaningful at roots */
  uint32_t count, nodes_capacity;
  MlirSymbolTable symbols;
  bool out_of_memory;
};

static size_t slot_of(const stc_gpu_placement *p, const void *key) {
  size_t h = ((uintptr_t)key >> 4) * 0x9E3779B97F4A7C15ull;
  size_t mask = p->capacity - 1;
  for (size_t i = h & mask;; i = (i + 1) & mask)
    if (!p->keys[i] || p->keys[i] == key)
      return i;
}

static bool grow(stc_gpu_placement *p) {
  size_t capacity = p->capacity ? 2 * p->capacity : 1024;
  const void **keys = calloc(capacity, sizeof *keys);
  uint32_t *index = calloc(capacity, sizeof *index);
  if (!keys || !index) {
    free(keys), free(index);
    return false;
  }
  const void **old_keys = p->keys;
  uint32_t *old_index = p->index;
  size_t old_capacity = p->capacity;
  p->keys = keys, p->index = index, p->capacity = capacity;
  for (size_t i = 0; i < old_capacity; i++)
    if (old_keys[i]) {
      size_t s = slot_of(p, old_keys[i]);
      keys[s] = old_keys[i];
      index[s] = old_index[i];
    }
  free(old_keys), free(old_index);
  return true;
}

static uint32_t find(stc_gpu_placement *p, uint32_t n) {
  while (p->parent[n] != n) {
    p->parent[n] = p->parent[p->parent[n]];
    n = p->parent[n];
  }
  return n;
}

/* The node of a value, created on first sight; UINT32_MAX on OOM. */
static uint32_t node(stc_gpu_placement *p, MlirValue v) {
  if (p->out_of_memory)
    return UINT32_MAX;
  if ((p->count + 1) * 2 > p->capacity && !grow(p)) {
    p->out_of_memory = true;
    return UINT32_MAX;
  }
  size_t s = slot_of(p, v.ptr);
  if (p->keys[s])
    return p->index[s];
  if (p->count == p->nodes_capacity) {
    uint32_t capacity = p->nodes_capacity ? 2 * p->nodes_capacity : 1024;
    uint32_t *parent = realloc(p->parent, capacity * sizeof *parent);
    if (parent)
      p->parent = parent;
    bool *device = realloc(p->device, capacity * sizeof *device);
    if (device)
      p->device = device;
    if (!parent || !device) {
      p->out_of_memory = true;
      return UINT32_MAX;
    }
    p->nodes_capacity = capacity;
  }
  uint32_t n = p->count++;
  p->parent[n] = n;
  p->device[n] = false;
  p->keys[s] = v.ptr;
  p->index[s] = n;
  return n;
}

static bool is_buffer(MlirValue v) {
  MlirType t = mlirValueGetType(v);
  return mlirTypeIsAMemRef(t) || mlirTypeIsAUnrankedMemRef(t);
}

static void join(stc_gpu_placement *p, MlirValue a, MlirValue b) {
  if (!is_buffer(a) || !is_buffer(b))
    return;
  uint32_t x = node(p, a), y = node(p, b);
  if (x == UINT32_MAX || y == UINT32_MAX)
    return;
  x = find(p, x), y = find(p, y);
  if (x != y) {
    p->parent[x] = y;
    p->device[y] |= p->device[x];
  }
}

static void seed(stc_gpu_placement *p, MlirValue v) {
  if (!is_buffer(v))
    return;
  uint32_t n = node(p, v);
  if (n != UINT32_MAX)
    p->device[find(p, n)] = true;
}

static bool name_starts(MlirStringRef name, const char *prefix) {
  size_t n = strlen(prefix);
  return name.length >= n && memcmp(name.data, prefix, n) == 0;
}

/* Ops whose buffers are distinct (or read-only metadata): no join. */
static bool keeps_apart(MlirOperation op) {
  static const char *const names[] = {
      "memref.load", "memref.store", "memref.dim", "memref.copy",
      "memref.dealloc", "memref.alloc", "memref.alloca", "memref.get_global",
      "memref.extract_aligned_pointer_as_index", "memref.rank",
      "func.return", "func.func", "builtin.module", "gpu.launch_func", NULL};
  for (const char *const *n = names; *n; n++)
    if (stc__op_is(op, *n))
      return true;
  return false;
}

static bool is_view(MlirOperation op) {
  static const char *const views[] = {
      "memref.cast", "memref.subview", "memref.collapse_shape",
      "memref.expand_shape", "memref.reinterpret_cast", "memref.transpose",
      "memref.memory_space_cast", "memref.view", "memref.reshape",
      "memref.extract_strided_metadata", NULL};
  for (const char *const *v = views; *v; v++)
    if (stc__op_is(op, *v))
      return true;
  return false;
}

/* The callee's body entry block, or a null block for an external callee;
 * *name gets the callee's name. */
static MlirBlock callee_body(stc_gpu_placement *p, MlirOperation call,
                             MlirStringRef *name, MlirOperation *callee) {
  MlirBlock none = {NULL};
  MlirAttribute attribute = mlirOperationGetAttributeByName(call, stc__str("callee"));
  if (mlirAttributeIsNull(attribute) || !mlirAttributeIsAFlatSymbolRef(attribute))
    return none;
  *name = mlirFlatSymbolRefAttrGetValue(attribute);
  *callee = mlirSymbolTableLookup(p->symbols, *name);
  if (mlirOperationIsNull(*callee) || mlirOperationGetNumRegions(*callee) == 0)
    return none;
  return mlirRegionGetFirstBlock(mlirOperationGetRegion(*callee, 0));
}

static void visit_call(stc_gpu_placement *p, MlirOperation call) {
  MlirStringRef name = {NULL, 0};
  MlirOperation callee = {NULL};
  MlirBlock entry = callee_body(p, call, &name, &callee);
  intptr_t num_operands = mlirOperationGetNumOperands(call);
  if (mlirBlockIsNull(entry)) {
    if (name.data && name_starts(name, "stc_rt_cublas_"))
      for (intptr_t i = 0; i < num_operands; i++)
        seed(p, mlirOperationGetOperand(call, i));
    return;
  }
  for (intptr_t i = 0; i < num_operands && i < mlirBlockGetNumArguments(entry); i++)
    join(p, mlirOperationGetOperand(call, i), mlirBlockGetArgument(entry, i));
  /* Results join the returned values of every func.return of the body. */
  MlirRegion body = mlirOperationGetRegion(callee, 0);
  for (MlirBlock b = mlirRegionGetFirstBlock(body); !mlirBlockIsNull(b);
       b = mlirBlockGetNextInRegion(b)) {
    MlirOperation terminator = mlirBlockGetTerminator(b);
    if (mlirOperationIsNull(terminator) || !stc__op_is(terminator, "func.return"))
      continue;
    for (intptr_t r = 0; r < mlirOperationGetNumResults(call) &&
                         r < mlirOperationGetNumOperands(terminator);
         r++)
      join(p, mlirOperationGetResult(call, r), mlirOperationGetOperand(terminator, r));
  }
}

/* Joins every buffer an unknown op touches, its regions' included. */
static void visit_other(stc_gpu_placement *p, MlirOperation op) {
  MlirValue first = {NULL};
  MlirValue all[256];
  size_t count = 0;
  for (intptr_t i = 0; i < mlirOperationGetNumOperands(op) && count < 256; i++)
    all[count++] = mlirOperationGetOperand(op, i);
  for (intptr_t i = 0; i < mlirOperationGetNumResults(op) && count < 256; i++)
    all[count++] = mlirOperationGetResult(op, i);
  for (intptr_t r = 0; r < mlirOperationGetNumRegions(op); r++)
    for (MlirBlock b = mlirRegionGetFirstBlock(mlirOperationGetRegion(op, r));
         !mlirBlockIsNull(b); b = mlirBlockGetNextInRegion(b)) {
      for (intptr_t a = 0; a < mlirBlockGetNumArguments(b) && count < 256; a++)
        all[count++] = mlirBlockGetArgument(b, a);
      MlirOperation terminator = mlirBlockGetTerminator(b);
      if (!mlirOperationIsNull(terminator))
        for (intptr_t i = 0; i < mlirOperationGetNumOperands(terminator) && count < 256; i++)
          all[count++] = mlirOperationGetOperand(terminator, i);
    }
  for (size_t i = 0; i < count; i++) {
    if (!is_buffer(all[i]))
      continue;
    if (!first.ptr)
      first = all[i];
    else
      join(p, first, all[i]);
  }
}

static MlirWalkResult visit(MlirOperation op, void *user) {
  stc_gpu_placement *p = user;
  if (stc__op_is(op, "gpu.module"))
    return MlirWalkResultSkip;
  /* Every buffer host code defines gets a class, joined or not: only values
   * never seen (made after the analysis) answer "device" by default. */
  for (intptr_t r = 0; r < mlirOperationGetNumResults(op); r++)
    if (is_buffer(mlirOperationGetResult(op, r)))
      node(p, mlirOperationGetResult(op, r));
  for (intptr_t r = 0; r < mlirOperationGetNumRegions(op); r++)
    for (MlirBlock b = mlirRegionGetFirstBlock(mlirOperationGetRegion(op, r));
         !mlirBlockIsNull(b); b = mlirBlockGetNextInRegion(b))
      for (intptr_t a = 0; a < mlirBlockGetNumArguments(b); a++)
        if (is_buffer(mlirBlockGetArgument(b, a)))
          node(p, mlirBlockGetArgument(b, a));
  if (stc__op_is(op, "gpu.launch_func")) {
    for (intptr_t i = 0; i < mlirOperationGetNumOperands(op); i++)
      seed(p, mlirOperationGetOperand(op, i));
  } else if (is_view(op)) {
    for (intptr_t r = 0; r < mlirOperationGetNumResults(op); r++)
      join(p, mlirOperationGetOperand(op, 0), mlirOperationGetResult(op, r));
  } else if (stc__op_is(op, "func.call")) {
    visit_call(p, op);
  } else if (stc__op_is(op, "memref.copy")) {
    MlirValue target = mlirOperationGetOperand(op, 1);
    if (mlirValueIsAOpResult(target) &&
        stc__op_is(mlirOpResultGetOwner(target), "memref.alloc"))
      join(p, mlirOperationGetOperand(op, 0), target);
  } else if (!keeps_apart(op)) {
    visit_other(p, op);
  }
  return MlirWalkResultAdvance;
}

stc_gpu_placement *stc_gpu_placement_create(MlirOperation module,
                                            MlirSymbolTable symbols) {
  stc_gpu_placement *p = calloc(1, sizeof *p);
  if (!p)
    return NULL;
  p->symbols = symbols;
  mlirOperationWalk(module, visit, p, MlirWalkPreOrder);
  if (p->out_of_memory) {
    stc_gpu_placement_destroy(p);
    return NULL;
  }
  return p;
}

bool stc_gpu_placement_on_device(stc_gpu_placement *p, MlirValue v) {
  if (!p || !is_buffer(v) || p->capacity == 0)
    return true;
  size_t s = slot_of(p, v.ptr);
  if (!p->keys[s])
    return true; /* never seen: the safe answer */
  return p->device[find(p, p->index[s])];
}

void stc_gpu_placement_destroy(stc_gpu_placement *p) {
  if (!p)
    return;
  free(p->keys), free(p->index), free(p->parent), free(p->device);
  free(p);
}
