/* In: an MLIR module in the LLVM dialect. Out: LLVM IR text or a host object
 * file (written out, or in memory for stc-run's loader). The LLVM module is optimized with the new pass manager's
 * default<O{n}> pipeline before emission, for the host CPU and its features,
 * position independent so the object links into executables and shared
 * libraries alike. */
#include "stc_emit.h"
#include "stc_host.h"

#include "stc/rt_dispatch.h"

#include <llvm-c/BitReader.h>
#include <llvm-c/BitWriter.h>
#include <llvm-c/Comdat.h>
#include <llvm-c/Core.h>
#include <llvm-c/Error.h>
#include <llvm-c/Target.h>
#include <llvm-c/TargetMachine.h>
#include <llvm-c/Transforms/PassBuilder.h>
#include <mlir-c/Target/LLVMIR.h>

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

stc_status stc_emit_kind_parse(const char *text, stc_emit_kind *out) {
  static const char *const names[] = {"mlir", "llvm", "obj"};
  for (int i = 0; i < 3; i++)
    if (strcmp(text, names[i]) == 0) {
      *out = (stc_emit_kind)i;
      return STC_OK;
    }
  return STC_ERR_INVALID;
}

static stc_status write_bytes(const char *path, const char *data, size_t size,
                              stc_error *err) {
  FILE *file = strcmp(path, "-") == 0 ? stdout : fopen(path, "wb");
  if (!file) {
    stc_error_set(err, path, 0, 0, "cannot open output file");
    return STC_ERR_IO;
  }
  size_t written = fwrite(data, 1, size, file);
  int failed = written != size || fflush(file) != 0;
  if (file != stdout)
    failed |= fclose(file) != 0;
  if (failed) {
    stc_error_set(err, path, 0, 0, "cannot write output file");
    return STC_ERR_IO;
  }
  return STC_OK;
}

static stc_status optimize(LLVMModuleRef module, LLVMTargetMachineRef machine,
                           int opt_level, stc_error *err) {
  if (opt_level <= 0)
    return STC_OK;
  char pipeline[32];
  snprintf(pipeline, sizeof pipeline, "default<O%d>", opt_level > 3 ? 3 : opt_level);
  LLVMPassBuilderOptionsRef options = LLVMCreatePassBuilderOptions();
  LLVMErrorRef error = LLVMRunPasses(module, pipeline, machine, options);
  LLVMDisposePassBuilderOptions(options);
  if (error) {
    char *message = LLVMGetErrorMessage(error);
    stc_error_set(err, NULL, 0, 0, "LLVM optimization failed: %s", message);
    LLVMDisposeErrorMessage(message);
    return STC_ERR_INVALID;
  }
  return STC_OK;
}

static stc_status emit(LLVMModuleRef module, LLVMTargetMachineRef machine,
                       stc_emit_kind kind, const char *path, stc_error *err) {
  if (kind == STC_EMIT_LLVM) {
    char *text = LLVMPrintModuleToString(module);
    stc_status status = write_bytes(path, text, strlen(text), err);
    LLVMDisposeMessage(text);
    return status;
  }
  LLVMMemoryBufferRef buffer = NULL;
  char *message = NULL;
  if (LLVMTargetMachineEmitToMemoryBuffer(machine, module, LLVMObjectFile,
                                          &message, &buffer)) {
    stc_error_set(err, NULL, 0, 0, "cannot emit object code: %s",
                  message ? message : "");
    LLVMDisposeMessage(message);
    return STC_ERR_INVALID;
  }
  stc_status status =
      write_bytes(path, LLVMGetBufferStart(buffer), LLVMGetBufferSize(buffer), err);
  LLVMDisposeMemoryBuffer(buffer);
  return status;
}

/* ---- global constructors and destructors -------------------------------
 * An object loaded by ORC without a platform runtime does not run its
 * .init_array; so the entries of @llvm.global_ctors / @llvm.global_dtors
 * become calls, in ascending priority (stable, as ORC's CtorDtorRunner and
 * MLIR's ExecutionEngine order them), in one exported function each, which
 * the loader calls (STC_EMIT_CTORS_SYMBOL, STC_EMIT_DTORS_SYMBOL). */

typedef struct structor {
  uint64_t priority;
  LLVMValueRef function;
  size_t index;
} structor;

static int structor_order(const void *a_, const void *b_) {
  const structor *a = a_, *b = b_;
  if (a->priority != b->priority)
    return a->priority < b->priority ? -1 : 1;
  return a->index < b->index ? -1 : a->index > b->index;
}

static stc_status lower_structors(LLVMModuleRef module, const char *array,
                                  const char *symbol, stc_error *err) {
  LLVMContextRef context = LLVMGetModuleContext(module);
  LLVMTypeRef void_type = LLVMVoidTypeInContext(context);
  LLVMTypeRef fn_type = LLVMFunctionType(void_type, NULL, 0, 0);
  if (LLVMGetNamedFunction(module, symbol)) {
    stc_error_set(err, NULL, 0, 0, "the module defines '%s', reserved for "
                  "its global constructors", symbol);
    return STC_ERR_INVALID;
  }
  LLVMValueRef runner = LLVMAddFunction(module, symbol, fn_type);
  LLVMBuilderRef builder = LLVMCreateBuilderInContext(context);
  LLVMPositionBuilderAtEnd(builder,
                           LLVMAppendBasicBlockInContext(context, runner, ""));
  LLVMValueRef global = LLVMGetNamedGlobal(module, array);
  LLVMValueRef init = global ? LLVMGetInitializer(global) : NULL;
  int count = init && LLVMIsAConstantArray(init) ? LLVMGetNumOperands(init) : 0;
  structor *list = count ? calloc((size_t)count, sizeof *list) : NULL;
  if (count && !list) {
    LLVMDisposeBuilder(builder);
    stc_error_set(err, NULL, 0, 0, "out of memory");
    return STC_ERR_NOMEM;
  }
  size_t used = 0;
  for (int i = 0; i < count; i++) {
    LLVMValueRef element = LLVMGetOperand(init, (unsigned)i);
    if (!element || LLVMGetNumOperands(element) < 2)
      continue;
    LLVMValueRef priority = LLVMGetOperand(element, 0);
    LLVMValueRef function = LLVMGetOperand(element, 1);
    if (!function || LLVMIsNull(function))
      continue;
    list[used++] = (structor){
        priority && LLVMIsAConstantInt(priority)
            ? LLVMConstIntGetZExtValue(priority)
            : 65535,
        function, (size_t)i};
  }
  if (used > 1)
    qsort(list, used, sizeof *list, structor_order);
  for (size_t i = 0; i < used; i++)
    LLVMBuildCall2(builder, fn_type, list[i].function, NULL, 0, "");
  LLVMBuildRetVoid(builder);
  LLVMDisposeBuilder(builder);
  free(list);
  if (global)
    LLVMDeleteGlobal(global);
  return STC_OK;
}

/* Translation, target setup and optimization: the LLVM module is returned
 * in *out (in context), ready to print or emit. */
static stc_status translate(MlirOperation module, LLVMContextRef context,
                            LLVMTargetMachineRef machine, int opt_level,
                            bool lower_ctors, bool run_optimizer,
                            LLVMModuleRef *out,
                            stc_error *err) {
  LLVMModuleRef llvm_module = mlirTranslateModuleToLLVMIR(module, context);
  if (!llvm_module) {
    stc_error_set(err, NULL, 0, 0,
                  "cannot translate to LLVM IR: the module must contain only "
                  "LLVM dialect operations");
    return STC_ERR_INVALID;
  }
  char *triple = LLVMGetTargetMachineTriple(machine);
  LLVMSetTarget(llvm_module, triple);
  LLVMDisposeMessage(triple);
  LLVMTargetDataRef layout = LLVMCreateTargetDataLayout(machine);
  LLVMSetModuleDataLayout(llvm_module, layout);
  LLVMDisposeTargetData(layout);
  stc_status status = STC_OK;
  if (lower_ctors) {
    status = lower_structors(llvm_module, "llvm.global_ctors",
                             STC_EMIT_CTORS_SYMBOL, err);
    if (status == STC_OK)
      status = lower_structors(llvm_module, "llvm.global_dtors",
                               STC_EMIT_DTORS_SYMBOL, err);
  }
  if (status == STC_OK && run_optimizer)
    status = optimize(llvm_module, machine, opt_level, err);
  if (status != STC_OK) {
    LLVMDisposeModule(llvm_module);
    return status;
  }
  *out = llvm_module;
  return STC_OK;
}

stc_status stc_emit_module(MlirOperation module, stc_emit_kind kind,
                           int opt_level, const char *path, stc_error *err) {
  if (kind == STC_EMIT_MLIR) {
    stc_error_set(err, NULL, 0, 0, "stc_emit_module does not print MLIR");
    return STC_ERR_INVALID;
  }
  LLVMTargetMachineRef machine =
      stc_host_machine(LLVMCodeGenLevelAggressive, err);
  if (!machine)
    return STC_ERR_INVALID;
  LLVMContextRef context = LLVMContextCreate();
  LLVMModuleRef llvm_module = NULL;
  stc_status status =
      translate(module, context, machine, opt_level, false, true, &llvm_module,
                err);
  if (status == STC_OK) {
    status = emit(llvm_module, machine, kind, path, err);
    LLVMDisposeModule(llvm_module);
  }
  LLVMContextDispose(context);
  LLVMDisposeTargetMachine(machine);
  return status;
}

/* ---- partitions: optimize and emit on several threads ------------------
 * The translated module (structors already lowered) is cut into K
 * partitions of whole functions, balanced by instruction count; each is
 * optimized and emitted on its own thread in its own LLVMContext, and the K
 * objects are linked side by side into one JITDylib.
 *  - A local (private/internal) function referenced by one function only
 *    (an outlined OpenMP body, a helper) stays with it, so that the
 *    optimizer still sees the pair.
 *  - Global variables are defined in partition 0 and declared elsewhere,
 *    except local unnamed_addr constants whose initializer names no other
 *    global (string and data constants): those are defined in every
 *    partition that uses them, so loads from them still fold.
 *  - A local symbol referenced from a partition that does not define it
 *    becomes external with hidden visibility, renamed with a reserved
 *    prefix so that it cannot meet a runtime or process symbol;
 *    linkonce definitions so referenced become weak (not discardable).
 * The plan is applied to the shared module once, before it is written as
 * bitcode; each worker parses that bitcode into its own context and drops
 * what its partition does not define (bodies of other partitions' functions,
 * initializers of variables defined elsewhere, unused local symbols), so
 * every partition agrees on every symbol. Modules with aliases, ifuncs,
 * comdats, block addresses or other llvm.* variables are compiled whole. */

#define LOCAL_PREFIX "__stc_local."
#define STC_EMIT_MIN_PARTITION_INSTRUCTIONS 2000
/* Partitions beyond one per CPU (stc_emit.h: a negative thread count) only
 * for modules this big per partition: measured on 2 CPUs, the tuned
 * transformer (38k instructions) compiled 14% faster in 4 than in 2, the
 * convnet (16k) 10-20% slower. */
#define STC_EMIT_MIN_EXTRA_PARTITION_INSTRUCTIONS 8000

typedef struct value_map { /* pointer -> index, open addressing */
  LLVMValueRef *keys;
  size_t *values;
  size_t mask;
} value_map;

static size_t value_hash(LLVMValueRef v) {
  uintptr_t x = (uintptr_t)v;
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  return (size_t)x;
}

static bool value_map_init(value_map *map, size_t count) {
  size_t capacity = 16;
  while (capacity < 2 * count + 2)
    capacity *= 2;
  map->keys = calloc(capacity, sizeof *map->keys);
  map->values = calloc(capacity, sizeof *map->values);
  map->mask = capacity - 1;
  return map->keys && map->values;
}

static void value_map_put(value_map *map, LLVMValueRef key, size_t value) {
  size_t at = value_hash(key) & map->mask;
  while (map->keys[at] && map->keys[at] != key)
    at = (at + 1) & map->mask;
  map->keys[at] = key;
  map->values[at] = value;
}

static bool value_map_get(const value_map *map, LLVMValueRef key,
                          size_t *value) {
  size_t at = value_hash(key) & map->mask;
  while (map->keys[at]) {
    if (map->keys[at] == key) {
      *value = map->values[at];
      return true;
    }
    at = (at + 1) & map->mask;
  }
  return false;
}

/* One global value (function or variable) of the shared module; functions
 * first, in module order, then variables, in module order. */
typedef struct symbol {
  LLVMValueRef value;
  bool is_function, defined;
  unsigned defined_in;    /* mask of partitions that define it */
  unsigned referenced_in; /* mask of partitions that reference it */
  /* functions: */
  size_t instructions;
  size_t *refs; /* indices of the symbols its body references */
  size_t num_refs, cap_refs;
  long referrer;      /* the one function referencing it; -1 none, -2 many */
  bool in_initializer; /* referenced by a variable's initializer */
  size_t cluster;
  int partition;
  /* lazy variant units (stc_emit_lazy): the unit that defines it, -1 for
   * the eagerly compiled partitions */
  int unit;
  bool root;   /* a unit's entry: the dispatch table names it */
  bool pinned; /* a site's reference: always compiled eagerly */
  /* variables: */
  bool leaf_constant; /* local constant whose initializer names no global */
} symbol;

typedef struct plan {
  symbol *symbols;
  size_t num_functions, num_symbols;
  value_map map;
  bool failed;
  size_t num_units; /* lazy variant units */
} plan;

/* The defined_in / referenced_in bit of the lazy units (all of them: a
 * unit only ever references another unit's functions through its
 * promoted, external entries). */
#define LAZY_BIT (1u << 31)

static void plan_free(plan *p) {
  for (size_t i = 0; i < p->num_symbols; i++)
    free(p->symbols[i].refs);
  free(p->symbols);
  free(p->map.keys);
  free(p->map.values);
  memset(p, 0, sizeof *p);
}

static bool is_local(LLVMValueRef v) {
  LLVMLinkage linkage = LLVMGetLinkage(v);
  return linkage == LLVMInternalLinkage || linkage == LLVMPrivateLinkage;
}

/* Calls visit(ctx, index) for every symbol `v` names, looking through
 * constant expressions and aggregates. */
static void collect_refs(plan *p, LLVMValueRef v, int depth,
                         void (*visit)(plan *, size_t, void *), void *ctx) {
  size_t index;
  if (LLVMIsAGlobalValue(v)) {
    if (value_map_get(&p->map, v, &index))
      visit(p, index, ctx);
    else
      p->failed = true; /* an alias or ifunc: not planned */
    return;
  }
  if (!LLVMIsAConstant(v) || depth > 64)
    return;
  if (LLVMIsABlockAddress(v)) {
    p->failed = true; /* a block's address pins it to its function's object */
    return;
  }
  int n = LLVMGetNumOperands(v);
  for (int i = 0; i < n; i++)
    collect_refs(p, LLVMGetOperand(v, (unsigned)i), depth + 1, visit, ctx);
}

static void add_function_ref(plan *p, size_t target, void *ctx) {
  size_t from = *(size_t *)ctx;
  symbol *s = &p->symbols[from];
  if (s->num_refs == s->cap_refs) {
    size_t cap = s->cap_refs ? 2 * s->cap_refs : 8;
    size_t *refs = realloc(s->refs, cap * sizeof *refs);
    if (!refs) {
      p->failed = true;
      return;
    }
    s->refs = refs;
    s->cap_refs = cap;
  }
  s->refs[s->num_refs++] = target;
  symbol *t = &p->symbols[target];
  if (t->referrer == -1)
    t->referrer = (long)from;
  else if (t->referrer != (long)from)
    t->referrer = -2;
}

static void mark_in_initializer(plan *p, size_t target, void *ctx) {
  p->symbols[target].in_initializer = true;
  *(bool *)ctx = true;
}

static void mark_referenced(plan *p, size_t target, void *ctx) {
  p->symbols[target].referenced_in |= *(unsigned *)ctx;
}

static size_t find_root(size_t *parent, size_t i) {
  while (parent[i] != i)
    i = parent[i] = parent[parent[i]];
  return i;
}

typedef struct cluster {
  size_t root, weight;
} cluster;

static int cluster_order(const void *a_, const void *b_) {
  const cluster *a = a_, *b = b_;
  if (a->weight != b->weight)
    return a->weight > b->weight ? -1 : 1;
  return a->root < b->root ? -1 : a->root > b->root;
}

/* True when nothing in the module stops a split. */
static bool splittable(LLVMModuleRef module) {
  if (LLVMGetFirstGlobalAlias(module) || LLVMGetFirstGlobalIFunc(module))
    return false;
  for (LLVMValueRef f = LLVMGetFirstFunction(module); f;
       f = LLVMGetNextFunction(f))
    if (LLVMGetComdat(f))
      return false;
  for (LLVMValueRef g = LLVMGetFirstGlobal(module); g;
       g = LLVMGetNextGlobal(g)) {
    size_t length = 0;
    const char *name = LLVMGetValueName2(g, &length);
    if (LLVMGetComdat(g) || (length > 5 && strncmp(name, "llvm.", 5) == 0))
      return false;
  }
  return true;
}

/* ---- lazy variant units ----------------------------------------------
 * A tuned module's dispatch tables (stc/rt_dispatch.h: per site an
 * stc_rt_site whose `variants` array names each variant's unpacked entry
 * and _mlir_ciface_ wrapper) tell which functions only run when the runtime
 * selects them. Each non-reference variant (entry and wrapper, plus every
 * local function only it references, transitively) becomes a unit compiled
 * on its own, on demand; the references stay in the eager partitions. */

/* The integer value of a constant operand, or -1. */
static long long const_int_operand(LLVMValueRef v, unsigned index) {
  if (!v || (unsigned)LLVMGetNumOperands(v) <= index)
    return -1;
  LLVMValueRef op = LLVMGetOperand(v, index);
  return op && LLVMIsAConstantInt(op) ? (long long)LLVMConstIntGetZExtValue(op)
                                      : -1;
}

/* The function a variant record names at field `index`, if defined here. */
static bool variant_function(plan *p, LLVMValueRef record, unsigned index,
                             size_t *out) {
  if ((unsigned)LLVMGetNumOperands(record) <= index)
    return false;
  LLVMValueRef f = LLVMGetOperand(record, index);
  return f && LLVMIsAFunction(f) && value_map_get(&p->map, f, out) &&
         *out < p->num_functions && p->symbols[*out].defined;
}

/* Marks the references (pinned) and the other variants' roots (unit) of
 * every well-formed site table of the module; returns the number of units.
 * A table of another layout is not a site: nothing of it is lazy. A
 * function that is some site's reference is never lazy. */
static long find_variant_roots(plan *p) {
  long units = 0;
  /* Pass 1 pins every reference; pass 2 makes units of the rest. */
  for (int pass = 0; pass < 2; pass++)
    for (size_t i = p->num_functions; i < p->num_symbols; i++) {
      LLVMValueRef site = p->symbols[i].value;
      LLVMTypeRef type = LLVMGlobalGetValueType(site);
      LLVMValueRef init = p->symbols[i].defined ? LLVMGetInitializer(site)
                                                : NULL;
      if (LLVMGetTypeKind(type) != LLVMStructTypeKind ||
          LLVMCountStructElementTypes(type) != 10 || !init ||
          !LLVMIsAConstantStruct(init) ||
          const_int_operand(init, 0) != STC_RT_DISPATCH_ABI_VERSION)
        continue;
      long long count = const_int_operand(init, 5);
      long long reference = const_int_operand(init, 6);
      LLVMValueRef table = LLVMGetOperand(init, 7);
      LLVMValueRef records = table && LLVMIsAGlobalVariable(table)
                                 ? LLVMGetInitializer(table)
                                 : NULL;
      if (count < 1 || reference < 0 || reference >= count || !records ||
          !LLVMIsAConstantArray(records) ||
          LLVMGetNumOperands(records) != count)
        continue;
      for (long long v = 0; v < count; v++) {
        LLVMValueRef record = LLVMGetOperand(records, (unsigned)v);
        if (!record || !LLVMIsAConstantStruct(record))
          continue;
        size_t entry, ciface;
        bool has_entry = variant_function(p, record, 2, &entry);
        bool has_ciface = variant_function(p, record, 3, &ciface);
        if (pass == 0) {
          if (v == reference && has_entry)
            p->symbols[entry].pinned = true;
          if (v == reference && has_ciface)
            p->symbols[ciface].pinned = true;
          continue;
        }
        if (v == reference || !has_entry || !has_ciface ||
            p->symbols[entry].pinned || p->symbols[ciface].pinned)
          continue;
        int unit = p->symbols[entry].unit >= 0    ? p->symbols[entry].unit
                   : p->symbols[ciface].unit >= 0 ? p->symbols[ciface].unit
                                                  : (int)units++;
        if ((p->symbols[entry].unit >= 0 && p->symbols[entry].unit != unit) ||
            (p->symbols[ciface].unit >= 0 && p->symbols[ciface].unit != unit))
          continue; /* shared between variants: keep what was assigned */
        p->symbols[entry].unit = p->symbols[ciface].unit = unit;
        p->symbols[entry].root = p->symbols[ciface].root = true;
      }
    }
  return units;
}

/* Adds to each unit the local functions referenced from that unit only,
 * transitively; returns false without memory. */
static bool close_units(plan *p) {
  size_t nf = p->num_functions;
  long *from = calloc(nf ? nf : 1, sizeof *from);
  if (!from)
    return false;
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t i = 0; i < nf; i++)
      from[i] = -1; /* -1 nobody, -2 eager or several units, else the unit */
    for (size_t i = 0; i < nf; i++) {
      const symbol *s = &p->symbols[i];
      long unit = s->unit >= 0 ? s->unit : -2;
      for (size_t r = 0; r < s->num_refs; r++) {
        size_t t = s->refs[r];
        if (t >= nf || (size_t)t == i)
          continue;
        from[t] = from[t] == -1 || from[t] == unit ? unit : -2;
      }
    }
    for (size_t i = 0; i < nf; i++) {
      symbol *s = &p->symbols[i];
      if (s->unit < 0 && !s->pinned && s->defined && from[i] >= 0 &&
          is_local(s->value) && !s->in_initializer) {
        s->unit = (int)from[i];
        changed = true;
      }
    }
  }
  free(from);
  return true;
}

/* Plans up to `wanted` partitions (automatic: fewer for a small module, so
 * that each has some STC_EMIT_MIN_PARTITION_INSTRUCTIONS instructions, and
 * more than one_per_cpu only with STC_EMIT_MIN_EXTRA_PARTITION_INSTRUCTIONS
 * each) and,
 * with lazy, the lazy variant units (p->num_units); returns how many
 * partitions. When p->symbols is NULL afterwards (one partition, no unit),
 * the module is untouched: compile it whole. Otherwise its symbols are made
 * ready (promoted and renamed) and p says which partition or unit defines
 * what. -1: out of memory after renaming began. */
static int plan_partitions(LLVMModuleRef module, int wanted, int one_per_cpu,
                           bool automatic, bool lazy, plan *p) {
  memset(p, 0, sizeof *p);
  if ((wanted < 2 && !lazy) || !splittable(module))
    return 1;
  size_t nf = 0, ng = 0;
  for (LLVMValueRef f = LLVMGetFirstFunction(module); f;
       f = LLVMGetNextFunction(f))
    nf++;
  for (LLVMValueRef g = LLVMGetFirstGlobal(module); g;
       g = LLVMGetNextGlobal(g))
    ng++;
  p->num_functions = nf;
  p->num_symbols = nf + ng;
  p->symbols = calloc(p->num_symbols ? p->num_symbols : 1, sizeof *p->symbols);
  size_t *parent = calloc(nf ? nf : 1, sizeof *parent);
  if (!p->symbols || !parent || !value_map_init(&p->map, p->num_symbols)) {
    free(parent);
    plan_free(p);
    return 1;
  }
  size_t i = 0;
  for (LLVMValueRef f = LLVMGetFirstFunction(module); f;
       f = LLVMGetNextFunction(f), i++)
    p->symbols[i] = (symbol){.value = f, .is_function = true,
                             .defined = !LLVMIsDeclaration(f),
                             .referrer = -1, .unit = -1};
  for (LLVMValueRef g = LLVMGetFirstGlobal(module); g;
       g = LLVMGetNextGlobal(g), i++)
    p->symbols[i] = (symbol){.value = g, .defined = !LLVMIsDeclaration(g),
                             .referrer = -1, .unit = -1};
  for (i = 0; i < p->num_symbols; i++)
    value_map_put(&p->map, p->symbols[i].value, i);

  /* References: function bodies, then initializers. */
  size_t functions_with_bodies = 0;
  for (i = 0; i < nf; i++) {
    symbol *s = &p->symbols[i];
    parent[i] = i;
    if (!s->defined)
      continue;
    functions_with_bodies++;
    if (LLVMHasPersonalityFn(s->value))
      collect_refs(p, LLVMGetPersonalityFn(s->value), 0, add_function_ref, &i);
    for (LLVMBasicBlockRef b = LLVMGetFirstBasicBlock(s->value); b;
         b = LLVMGetNextBasicBlock(b))
      for (LLVMValueRef in = LLVMGetFirstInstruction(b); in;
           in = LLVMGetNextInstruction(in)) {
        p->symbols[i].instructions++;
        int n = LLVMGetNumOperands(in);
        for (int k = 0; k < n; k++)
          collect_refs(p, LLVMGetOperand(in, (unsigned)k), 0,
                       add_function_ref, &i);
      }
  }
  for (i = nf; i < p->num_symbols; i++) {
    symbol *s = &p->symbols[i];
    bool names_global = false;
    if (s->defined)
      collect_refs(p, LLVMGetInitializer(s->value), 0, mark_in_initializer,
                   &names_global);
    /* Copies of a constant are one object only if its address does not
     * matter (unnamed_addr). */
    s->leaf_constant = s->defined && !names_global && is_local(s->value) &&
                       LLVMIsGlobalConstant(s->value) &&
                       LLVMGetUnnamedAddress(s->value) != LLVMNoUnnamedAddr;
  }
  if (p->failed || functions_with_bodies < 2) {
    free(parent);
    plan_free(p);
    return 1;
  }
  if (lazy) {
    long units = find_variant_roots(p);
    if (units > 0 && !close_units(p)) {
      free(parent);
      plan_free(p);
      return 1;
    }
    p->num_units = (size_t)units;
  }

  /* Clusters: a local function with one referring function joins it. */
  for (i = 0; i < nf; i++) {
    symbol *s = &p->symbols[i];
    if (s->defined && s->unit < 0 && is_local(s->value) &&
        !s->in_initializer && s->referrer >= 0 && (size_t)s->referrer < nf &&
        p->symbols[s->referrer].unit < 0) {
      size_t a = find_root(parent, i), b = find_root(parent, (size_t)s->referrer);
      if (a != b)
        parent[a] = b;
    }
  }
  cluster *clusters = calloc(nf ? nf : 1, sizeof *clusters);
  size_t *weight = calloc(nf ? nf : 1, sizeof *weight);
  size_t num_clusters = 0, total = 0;
  if (!clusters || !weight) {
    free(clusters);
    free(weight);
    free(parent);
    plan_free(p);
    return 1;
  }
  for (i = 0; i < nf; i++)
    if (p->symbols[i].defined && p->symbols[i].unit < 0) {
      weight[find_root(parent, i)] += p->symbols[i].instructions + 1;
      total += p->symbols[i].instructions + 1;
    }
  for (i = 0; i < nf; i++)
    if (p->symbols[i].defined && p->symbols[i].unit < 0 &&
        find_root(parent, i) == i)
      clusters[num_clusters++] = (cluster){i, weight[i]};
  free(weight);
  int count = wanted < (int)num_clusters ? wanted : (int)num_clusters;
  if (automatic) {
    size_t limit = total / STC_EMIT_MIN_PARTITION_INSTRUCTIONS;
    size_t extra = total / STC_EMIT_MIN_EXTRA_PARTITION_INSTRUCTIONS;
    if (limit > (size_t)one_per_cpu)
      limit = (size_t)one_per_cpu;
    if (extra > limit)
      limit = extra;
    if ((size_t)count > limit)
      count = (int)limit;
  }
  if (count < 2 && !p->num_units) {
    free(clusters);
    free(parent);
    plan_free(p);
    return 1;
  }
  if (count < 1)
    count = 1;
  /* Longest processing time first: the heaviest cluster goes to the
   * lightest partition. */
  qsort(clusters, num_clusters, sizeof *clusters, cluster_order);
  size_t load[STC_EMIT_MAX_PARTITIONS] = {0};
  int *cluster_partition = calloc(nf ? nf : 1, sizeof *cluster_partition);
  if (!cluster_partition) {
    free(clusters);
    free(parent);
    plan_free(p);
    return 1;
  }
  for (size_t c = 0; c < num_clusters; c++) {
    int best = 0;
    for (int k = 1; k < count; k++)
      if (load[k] < load[best])
        best = k;
    load[best] += clusters[c].weight;
    cluster_partition[clusters[c].root] = best;
  }
  for (i = 0; i < nf; i++) {
    symbol *s = &p->symbols[i];
    if (s->defined && s->unit >= 0) {
      s->partition = -1;
      s->defined_in = LAZY_BIT;
    } else if (s->defined) {
      s->partition = cluster_partition[find_root(parent, i)];
      s->defined_in = 1u << s->partition;
    }
  }
  free(cluster_partition);
  free(clusters);
  free(parent);

  /* Who references what; then where each variable is defined. */
  for (i = 0; i < nf; i++) {
    symbol *s = &p->symbols[i];
    for (size_t r = 0; r < s->num_refs; r++)
      p->symbols[s->refs[r]].referenced_in |= s->defined_in;
  }
  for (i = nf; i < p->num_symbols; i++) {
    symbol *s = &p->symbols[i];
    if (!s->defined)
      continue;
    if (s->leaf_constant)
      s->defined_in = s->referenced_in | (s->in_initializer ? 1u : 0u);
    if (!s->defined_in)
      s->defined_in = 1u;
  }
  for (i = nf; i < p->num_symbols; i++) {
    symbol *s = &p->symbols[i];
    unsigned where = s->defined_in;
    if (s->defined)
      collect_refs(p, LLVMGetInitializer(s->value), 0, mark_referenced,
                   &where);
  }

  /* Symbols used where they are not defined must be linkable there. */
  for (i = 0; i < p->num_symbols; i++) {
    symbol *s = &p->symbols[i];
    if (!s->defined || !(s->referenced_in & ~s->defined_in))
      continue;
    LLVMLinkage linkage = LLVMGetLinkage(s->value);
    if (is_local(s->value)) {
      size_t length = 0;
      const char *name = LLVMGetValueName2(s->value, &length);
      size_t size = sizeof LOCAL_PREFIX + length + 24;
      char *renamed = malloc(size);
      if (!renamed) {
        p->failed = true;
        break;
      }
      if (length)
        snprintf(renamed, size, "%s%.*s", LOCAL_PREFIX, (int)length, name);
      else
        snprintf(renamed, size, "%sanon.%zu", LOCAL_PREFIX, i);
      LLVMSetValueName2(s->value, renamed, strlen(renamed)); /* uniqued */
      free(renamed);
      LLVMSetLinkage(s->value, LLVMExternalLinkage);
      LLVMSetVisibility(s->value, LLVMHiddenVisibility);
    } else if (linkage == LLVMLinkOnceAnyLinkage) {
      LLVMSetLinkage(s->value, LLVMWeakAnyLinkage);
    } else if (linkage == LLVMLinkOnceODRLinkage) {
      LLVMSetLinkage(s->value, LLVMWeakODRLinkage);
    }
  }
  if (p->failed) {
    /* Renaming may have begun: the caller must not compile this module. */
    plan_free(p);
    return -1;
  }
  return count;
}

/* Empties a function's body: it becomes a declaration. */
static void drop_body(LLVMValueRef function) {
  for (LLVMBasicBlockRef b = LLVMGetFirstBasicBlock(function); b;
       b = LLVMGetNextBasicBlock(b))
    for (LLVMValueRef in = LLVMGetFirstInstruction(b); in;
         in = LLVMGetNextInstruction(in))
      if (LLVMGetFirstUse(in))
        LLVMReplaceAllUsesWith(in, LLVMGetPoison(LLVMTypeOf(in)));
  for (LLVMBasicBlockRef b = LLVMGetFirstBasicBlock(function); b;
       b = LLVMGetNextBasicBlock(b)) {
    LLVMValueRef in;
    while ((in = LLVMGetLastInstruction(b)))
      LLVMInstructionEraseFromParent(in);
  }
  LLVMBasicBlockRef b;
  while ((b = LLVMGetFirstBasicBlock(function)))
    LLVMDeleteBasicBlock(b);
  if (LLVMHasPersonalityFn(function))
    LLVMSetPersonalityFn(function, NULL);
}

typedef struct worker {
  int index; /* the eager partition */
  int unit;  /* or the lazy unit (index unused); -1: eager */
  const plan *plan;
  const char *bitcode;
  size_t bitcode_size;
  LLVMTargetMachineRef machine;
  int opt_level;
  double optimize_s, codegen_s;
  double cpu_s; /* this thread's CPU time */
  char *data;
  size_t size;
  stc_status status;
  stc_error err;
} worker;

static double elapsed(const struct timespec *a, const struct timespec *b) {
  return (double)(b->tv_sec - a->tv_sec) + (b->tv_nsec - a->tv_nsec) * 1e-9;
}

/* True when `v` is used by an instruction or a global's initializer,
 * directly or through constants; constant expressions left behind by a
 * dropped body or initializer, which nothing uses, do not count. */
static bool has_live_users(LLVMValueRef v, int depth) {
  for (LLVMUseRef use = LLVMGetFirstUse(v); use; use = LLVMGetNextUse(use)) {
    LLVMValueRef user = LLVMGetUser(use);
    if (!LLVMIsAConstant(user) || LLVMIsAGlobalValue(user) || depth > 64 ||
        has_live_users(user, depth + 1))
      return true;
  }
  return false;
}

/* Replaces the declaration `old` of a symbol another partition defines with
 * a fresh one of the same name, type, calling convention and attributes.
 * A promoted local keeps the dso_local flag it had as a local (llvm-c
 * cannot clear it), which would make this partition reach it PC-relative,
 * 32 bits, while ORC may place the other object farther away than that; a
 * fresh external declaration is reached through the GOT or a stub, which
 * JITLink relaxes to a direct access when in range. */
static stc_status redeclare(LLVMModuleRef module, LLVMValueRef old) {
  LLVMValueRef fresh;
  if (LLVMIsAFunction(old)) {
    fresh = LLVMAddFunction(module, "", LLVMGlobalGetValueType(old));
    LLVMSetFunctionCallConv(fresh, LLVMGetFunctionCallConv(old));
    unsigned params = LLVMCountParams(old);
    for (long index = -1; index <= (long)params; index++) {
      LLVMAttributeIndex at = index < 0
                                  ? (LLVMAttributeIndex)LLVMAttributeFunctionIndex
                                  : (LLVMAttributeIndex)index;
      unsigned count = LLVMGetAttributeCountAtIndex(old, at);
      if (!count)
        continue;
      LLVMAttributeRef *attributes = calloc(count, sizeof *attributes);
      if (!attributes)
        return STC_ERR_NOMEM;
      LLVMGetAttributesAtIndex(old, at, attributes);
      for (unsigned k = 0; k < count; k++)
        LLVMAddAttributeAtIndex(fresh, at, attributes[k]);
      free(attributes);
    }
  } else {
    fresh = LLVMAddGlobalInAddressSpace(
        module, LLVMGlobalGetValueType(old), "",
        LLVMGetPointerAddressSpace(LLVMTypeOf(old)));
    LLVMSetGlobalConstant(fresh, LLVMIsGlobalConstant(old));
    LLVMSetThreadLocalMode(fresh, LLVMGetThreadLocalMode(old));
    LLVMSetExternallyInitialized(fresh, LLVMIsExternallyInitialized(old));
  }
  LLVMSetAlignment(fresh, LLVMGetAlignment(old));
  LLVMReplaceAllUsesWith(old, fresh);
  size_t length = 0;
  const char *name = LLVMGetValueName2(old, &length);
  char *copy = malloc(length + 1);
  if (!copy)
    return STC_ERR_NOMEM;
  memcpy(copy, name, length);
  copy[length] = 0;
  LLVMSetValueName2(old, "", 0);
  LLVMSetValueName2(fresh, copy, length);
  free(copy);
  if (LLVMIsAFunction(old))
    LLVMDeleteFunction(old);
  else
    LLVMDeleteGlobal(old);
  return STC_OK;
}

/* True when w's object defines s. */
static bool defines(const worker *w, const symbol *s) {
  if (w->unit < 0)
    return (s->defined_in & (1u << w->index)) != 0;
  return s->is_function ? s->unit == w->unit : (s->defined_in & LAZY_BIT) != 0;
}

/* Renames a lazy unit's entries (STC_EMIT_LAZY_PREFIX): their own names
 * belong to the loader's lazy stubs. */
static stc_status rename_roots(LLVMValueRef *roots, size_t count) {
  for (size_t k = 0; k < count; k++) {
    LLVMValueRef f = roots[k];
    size_t length = 0;
    const char *name = LLVMGetValueName2(f, &length);
    size_t size = sizeof STC_EMIT_LAZY_PREFIX + length;
    char *renamed = malloc(size);
    if (!renamed)
      return STC_ERR_NOMEM;
    snprintf(renamed, size, "%s%.*s", STC_EMIT_LAZY_PREFIX, (int)length, name);
    LLVMSetValueName2(f, renamed, strlen(renamed));
    free(renamed);
    LLVMSetLinkage(f, LLVMExternalLinkage);
    LLVMSetVisibility(f, LLVMDefaultVisibility);
  }
  return STC_OK;
}

/* Keeps what partition w->index (or unit w->unit) defines of the parsed
 * module. */
static stc_status cut_partition(LLVMModuleRef module, worker *w) {
  const plan *p = w->plan;
  LLVMValueRef *doomed = calloc(p->num_symbols ? p->num_symbols : 1,
                                sizeof *doomed);
  LLVMValueRef *declared = calloc(p->num_symbols ? p->num_symbols : 1,
                                  sizeof *declared);
  LLVMValueRef *roots = calloc(p->num_symbols ? p->num_symbols : 1,
                               sizeof *roots);
  if (!doomed || !declared || !roots) {
    free(doomed);
    free(declared);
    free(roots);
    return STC_ERR_NOMEM;
  }
  size_t num_doomed = 0, num_declared = 0, num_roots = 0, i = 0;
  bool mismatch = false;
  for (LLVMValueRef f = LLVMGetFirstFunction(module); f;
       f = LLVMGetNextFunction(f), i++) {
    if (i >= p->num_functions) {
      mismatch = true;
      break;
    }
    const symbol *s = &p->symbols[i];
    if (s->defined && w->unit >= 0 && s->root && s->unit == w->unit)
      roots[num_roots++] = f;
    if (!s->defined || defines(w, s))
      continue;
    drop_body(f);
    if (is_local(f))
      doomed[num_doomed++] = f;
    else if (LLVMGetFirstUse(f))
      declared[num_declared++] = f;
    else
      LLVMSetLinkage(f, LLVMExternalLinkage);
  }
  if (i != p->num_functions)
    mismatch = true;
  for (LLVMValueRef g = LLVMGetFirstGlobal(module); g && !mismatch;
       g = LLVMGetNextGlobal(g), i++) {
    if (i >= p->num_symbols) {
      mismatch = true;
      break;
    }
    const symbol *s = &p->symbols[i];
    if (!s->defined || defines(w, s))
      continue;
    LLVMSetInitializer(g, NULL);
    if (is_local(g))
      doomed[num_doomed++] = g;
    else if (LLVMGetFirstUse(g))
      declared[num_declared++] = g;
    else
      LLVMSetLinkage(g, LLVMExternalLinkage);
  }
  if (!mismatch && i != p->num_symbols)
    mismatch = true;
  /* Local symbols this partition neither defines nor references. */
  if (mismatch)
    stc_error_set(&w->err, NULL, 0, 0, "partition %d: the module's symbols "
                  "differ from its plan", w->index);
  for (size_t k = 0; k < num_doomed && !mismatch; k++)
    if (has_live_users(doomed[k], 0)) {
      size_t length = 0;
      const char *name = LLVMGetValueName2(doomed[k], &length);
      stc_error_set(&w->err, NULL, 0, 0, "partition %d: local symbol '%.*s' "
                    "is used where it is not planned", w->index, (int)length,
                    name);
      mismatch = true;
    }
  for (size_t k = 0; k < num_doomed && !mismatch; k++) {
    /* Replacing the symbol in its dead constant users destroys them. */
    if (LLVMGetFirstUse(doomed[k]))
      LLVMReplaceAllUsesWith(doomed[k], LLVMGetPoison(LLVMTypeOf(doomed[k])));
    if (LLVMIsAFunction(doomed[k]))
      LLVMDeleteFunction(doomed[k]);
    else
      LLVMDeleteGlobal(doomed[k]);
  }
  free(doomed);
  stc_status status = mismatch ? STC_ERR_INVALID : STC_OK;
  for (size_t k = 0; k < num_declared && status == STC_OK; k++)
    status = redeclare(module, declared[k]);
  free(declared);
  if (status == STC_OK)
    status = rename_roots(roots, num_roots);
  free(roots);
  return status;
}

static void *work(void *arg) {
  worker *w = arg;
  struct timespec t0, t1, t2;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  LLVMContextRef context = LLVMContextCreate();
  LLVMMemoryBufferRef buffer = LLVMCreateMemoryBufferWithMemoryRange(
      w->bitcode, w->bitcode_size, "stc-partition", 0);
  LLVMModuleRef module = NULL;
  w->status = STC_ERR_INVALID;
  if (LLVMParseBitcodeInContext2(context, buffer, &module)) {
    stc_error_set(&w->err, NULL, 0, 0,
                  "partition %d: cannot read the module's bitcode", w->index);
  } else if ((w->status = cut_partition(module, w)) != STC_OK) {
    if (!w->err.message[0])
      stc_error_set(&w->err, NULL, 0, 0, "partition %d: out of memory",
                    w->index);
  } else if ((w->status = optimize(module, w->machine, w->opt_level,
                                   &w->err)) == STC_OK) {
    clock_gettime(CLOCK_MONOTONIC, &t1);
    w->optimize_s = elapsed(&t0, &t1);
    LLVMMemoryBufferRef object = NULL;
    char *message = NULL;
    if (LLVMTargetMachineEmitToMemoryBuffer(w->machine, module, LLVMObjectFile,
                                            &message, &object)) {
      stc_error_set(&w->err, NULL, 0, 0, "cannot emit object code: %s",
                    message ? message : "");
      LLVMDisposeMessage(message);
      w->status = STC_ERR_INVALID;
    } else {
      w->size = LLVMGetBufferSize(object);
      w->data = malloc(w->size ? w->size : 1);
      if (w->data)
        memcpy(w->data, LLVMGetBufferStart(object), w->size);
      else
        w->status = STC_ERR_NOMEM;
      LLVMDisposeMemoryBuffer(object);
    }
    clock_gettime(CLOCK_MONOTONIC, &t2);
    w->codegen_s = elapsed(&t1, &t2);
  }
  if (module)
    LLVMDisposeModule(module);
  LLVMDisposeMemoryBuffer(buffer);
  LLVMContextDispose(context);
  struct timespec cpu;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu);
  w->cpu_s = (double)cpu.tv_sec + cpu.tv_nsec * 1e-9;
  return NULL;
}

void stc_emit_objects_free(stc_emit_objects *objects) {
  for (size_t i = 0; i < objects->count; i++)
    free(objects->data[i]);
  memset(objects, 0, sizeof *objects);
}

static stc_status emit_whole(LLVMModuleRef module, LLVMTargetMachineRef machine,
                             int opt_level, stc_emit_objects *out,
                             double *optimize_s, stc_error *err) {
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  stc_status status = optimize(module, machine, opt_level, err);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  *optimize_s = elapsed(&t0, &t1);
  if (status != STC_OK)
    return status;
  LLVMMemoryBufferRef buffer = NULL;
  char *message = NULL;
  if (LLVMTargetMachineEmitToMemoryBuffer(machine, module, LLVMObjectFile,
                                          &message, &buffer)) {
    stc_error_set(err, NULL, 0, 0, "cannot emit object code: %s",
                  message ? message : "");
    LLVMDisposeMessage(message);
    return STC_ERR_INVALID;
  }
  out->size[0] = LLVMGetBufferSize(buffer);
  out->data[0] = malloc(out->size[0] ? out->size[0] : 1);
  if (out->data[0]) {
    memcpy(out->data[0], LLVMGetBufferStart(buffer), out->size[0]);
    out->count = 1;
  } else {
    status = STC_ERR_NOMEM;
  }
  LLVMDisposeMemoryBuffer(buffer);
  return status;
}

/* Optimizes and emits the planned partitions of `module` (which this
 * consumes) on `count` threads. */
static stc_status emit_partitions(LLVMModuleRef module, LLVMContextRef context,
                                  const plan *p, int count, LLVMCodeGenOptLevel level,
                                  int opt_level, stc_emit_objects *out,
                                  double *optimize_s, stc_emit_timing *timing,
                                  LLVMMemoryBufferRef *keep_bitcode,
                                  stc_error *err) {
  LLVMMemoryBufferRef bitcode = LLVMWriteBitcodeToMemoryBuffer(module);
  LLVMDisposeModule(module);
  (void)context;
  if (!bitcode) {
    stc_error_set(err, NULL, 0, 0, "cannot write the module as bitcode");
    return STC_ERR_INVALID;
  }
  worker workers[STC_EMIT_MAX_PARTITIONS];
  pthread_t threads[STC_EMIT_MAX_PARTITIONS];
  bool started[STC_EMIT_MAX_PARTITIONS] = {false};
  stc_status status = STC_OK;
  for (int k = 0; k < count; k++) {
    workers[k] = (worker){.index = k, .unit = -1, .plan = p,
                          .bitcode = LLVMGetBufferStart(bitcode),
                          .bitcode_size = LLVMGetBufferSize(bitcode),
                          .opt_level = opt_level, .status = STC_OK};
    stc_error_clear(&workers[k].err);
    workers[k].machine = stc_host_machine(level, err);
    if (!workers[k].machine)
      status = STC_ERR_INVALID;
  }
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, (size_t)64 << 20);
  for (int k = 0; k < count && status == STC_OK; k++) {
    if (pthread_create(&threads[k], &attr, work, &workers[k]) != 0) {
      stc_error_set(err, NULL, 0, 0, "cannot start a compile thread");
      status = STC_ERR_UNAVAILABLE;
      break;
    }
    started[k] = true;
  }
  pthread_attr_destroy(&attr);
  *optimize_s = 0;
  for (int k = 0; k < count; k++) {
    if (started[k])
      pthread_join(threads[k], NULL);
    if (status == STC_OK && workers[k].status != STC_OK) {
      status = workers[k].status;
      *err = workers[k].err;
    }
    if (workers[k].optimize_s > *optimize_s)
      *optimize_s = workers[k].optimize_s;
    if (timing) {
      timing->partition_cpu_sum_s += workers[k].cpu_s;
      if (workers[k].cpu_s > timing->partition_cpu_max_s)
        timing->partition_cpu_max_s = workers[k].cpu_s;
    }
    if (workers[k].machine)
      LLVMDisposeTargetMachine(workers[k].machine);
  }
  for (int k = 0; k < count; k++) {
    if (status == STC_OK) {
      out->data[k] = workers[k].data;
      out->size[k] = workers[k].size;
      out->count = (size_t)k + 1;
    } else {
      free(workers[k].data);
    }
  }
  if (keep_bitcode && status == STC_OK)
    *keep_bitcode = bitcode;
  else
    LLVMDisposeMemoryBuffer(bitcode);
  return status;
}

/* The lazy variant units of a compile: the planned module as bitcode, the
 * plan (which symbols each unit defines) and each unit's entries. */
struct stc_emit_lazy {
  plan plan;
  LLVMMemoryBufferRef bitcode;
  int opt_level;
  LLVMCodeGenOptLevel level;
  char ***roots;     /* per unit, its entries' names (malloc'd) */
  size_t *num_roots; /* per unit */
};

void stc_emit_lazy_free(stc_emit_lazy *lazy) {
  if (!lazy)
    return;
  for (size_t u = 0; lazy->roots && u < lazy->plan.num_units; u++) {
    for (size_t k = 0; k < lazy->num_roots[u]; k++)
      free(lazy->roots[u][k]);
    free(lazy->roots[u]);
  }
  free(lazy->roots);
  free(lazy->num_roots);
  if (lazy->bitcode)
    LLVMDisposeMemoryBuffer(lazy->bitcode);
  plan_free(&lazy->plan);
  free(lazy);
}

size_t stc_emit_lazy_units(const stc_emit_lazy *lazy) {
  return lazy ? lazy->plan.num_units : 0;
}

size_t stc_emit_lazy_roots(const stc_emit_lazy *lazy, size_t unit,
                           const char *const **names) {
  *names = (const char *const *)lazy->roots[unit];
  return lazy->num_roots[unit];
}

stc_status stc_emit_lazy_compile(const stc_emit_lazy *lazy, size_t unit,
                                 char **data, size_t *size, stc_error *err) {
  *data = NULL;
  *size = 0;
  if (!lazy || unit >= lazy->plan.num_units) {
    stc_error_set(err, NULL, 0, 0, "no such lazy unit");
    return STC_ERR_INVALID;
  }
  worker w = {.index = (int)unit, .unit = (int)unit, .plan = &lazy->plan,
              .bitcode = LLVMGetBufferStart(lazy->bitcode),
              .bitcode_size = LLVMGetBufferSize(lazy->bitcode),
              .opt_level = lazy->opt_level, .status = STC_OK};
  stc_error_clear(&w.err);
  w.machine = stc_host_machine(lazy->level, err);
  if (!w.machine)
    return STC_ERR_INVALID;
  work(&w);
  LLVMDisposeTargetMachine(w.machine);
  if (w.status != STC_OK) {
    free(w.data);
    *err = w.err;
    return w.status;
  }
  *data = w.data;
  *size = w.size;
  return STC_OK;
}

/* Moves the plan and the bitcode into a new stc_emit_lazy, with each
 * unit's entry names read from the (planned) module; NULL without memory
 * (the caller then still owns both). */
static stc_emit_lazy *lazy_create(LLVMModuleRef module, plan *p,
                                  int opt_level, LLVMCodeGenOptLevel level) {
  stc_emit_lazy *lazy = calloc(1, sizeof *lazy);
  if (!lazy)
    return NULL;
  size_t units = p->num_units;
  lazy->roots = calloc(units, sizeof *lazy->roots);
  lazy->num_roots = calloc(units, sizeof *lazy->num_roots);
  bool ok = lazy->roots && lazy->num_roots;
  for (size_t i = 0; ok && i < p->num_functions; i++)
    if (p->symbols[i].root)
      lazy->num_roots[p->symbols[i].unit]++;
  for (size_t u = 0; ok && u < units; u++) {
    lazy->roots[u] = calloc(lazy->num_roots[u] + 1, sizeof **lazy->roots);
    ok = lazy->roots[u] != NULL;
    lazy->num_roots[u] = 0;
  }
  size_t i = 0;
  for (LLVMValueRef f = LLVMGetFirstFunction(module); ok && f;
       f = LLVMGetNextFunction(f), i++) {
    const symbol *s = &p->symbols[i];
    if (!s->root)
      continue;
    size_t length = 0;
    const char *name = LLVMGetValueName2(f, &length);
    char *copy = strndup(name, length);
    ok = copy != NULL;
    if (ok)
      lazy->roots[s->unit][lazy->num_roots[s->unit]++] = copy;
  }
  if (!ok) {
    for (size_t u = 0; lazy->roots && u < units; u++) {
      for (size_t k = 0; lazy->roots[u] && k < lazy->num_roots[u]; k++)
        free(lazy->roots[u][k]);
      free(lazy->roots[u]);
    }
    free(lazy->roots);
    free(lazy->num_roots);
    free(lazy);
    return NULL;
  }
  lazy->plan = *p;
  memset(p, 0, sizeof *p);
  lazy->opt_level = opt_level;
  lazy->level = level;
  return lazy;
}

stc_status stc_emit_objects_in_memory(MlirOperation module, int opt_level,
                                      int threads, stc_emit_lazy **lazy,
                                      stc_emit_timing *timing,
                                      stc_emit_objects *out, stc_error *err) {
  static const LLVMCodeGenOptLevel levels[] = {
      LLVMCodeGenLevelNone, LLVMCodeGenLevelLess, LLVMCodeGenLevelDefault,
      LLVMCodeGenLevelAggressive};
  memset(out, 0, sizeof *out);
  if (lazy)
    *lazy = NULL;
  LLVMCodeGenOptLevel level =
      levels[opt_level < 0 ? 0 : opt_level > 3 ? 3 : opt_level];
  LLVMTargetMachineRef machine = stc_host_machine(level, err);
  if (!machine)
    return STC_ERR_INVALID;
  struct timespec t0, t1, t2, cpu_start;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu_start);
  double cpu0 = (double)cpu_start.tv_sec + cpu_start.tv_nsec * 1e-9;
  if (timing)
    memset(timing, 0, sizeof *timing);
  LLVMContextRef context = LLVMContextCreate();
  LLVMModuleRef llvm_module = NULL;
  stc_status status = translate(module, context, machine, opt_level, true,
                                false, &llvm_module, err);
  int count = 1;
  double optimize_s = 0;
  plan p;
  memset(&p, 0, sizeof p);
  if (status == STC_OK) {
    bool automatic = threads <= 0;
    int one_per_cpu = threads; /* the automatic count without extras */
    if (automatic) {
      long cpus = sysconf(_SC_NPROCESSORS_ONLN);
      cpus = cpus < 1 ? 1 : cpus > STC_EMIT_MAX_PARTITIONS ? STC_EMIT_MAX_PARTITIONS
                                                            : cpus;
      long wanted = cpus * (threads < 0 ? -(long)threads : 1);
      one_per_cpu = (int)cpus;
      threads = wanted > STC_EMIT_MAX_PARTITIONS ? STC_EMIT_MAX_PARTITIONS
                                                 : (int)wanted;
    }
    if (threads > STC_EMIT_MAX_PARTITIONS)
      threads = STC_EMIT_MAX_PARTITIONS;
    count = plan_partitions(llvm_module, threads, one_per_cpu, automatic,
                            lazy != NULL, &p);
    if (count < 0) {
      stc_error_set(err, NULL, 0, 0, "out of memory while splitting the module");
      status = STC_ERR_NOMEM;
      LLVMDisposeModule(llvm_module);
    }
  }
  stc_emit_lazy *units = NULL;
  if (status == STC_OK && p.num_units &&
      !(units = lazy_create(llvm_module, &p, opt_level, level))) {
    /* The module's symbols are already renamed for the plan. */
    stc_error_set(err, NULL, 0, 0, "out of memory while splitting the module");
    status = STC_ERR_NOMEM;
    LLVMDisposeModule(llvm_module);
  }
  const plan *planned = units ? &units->plan : &p;
  if (status == STC_OK && !planned->symbols) {
    clock_gettime(CLOCK_MONOTONIC, &t1);
    status = emit_whole(llvm_module, machine, opt_level, out, &optimize_s, err);
    LLVMDisposeModule(llvm_module);
    clock_gettime(CLOCK_MONOTONIC, &t2);
    struct timespec cpu;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu);
    if (timing)
      timing->serial_cpu_s = (double)cpu.tv_sec + cpu.tv_nsec * 1e-9 - cpu0;
  } else if (status == STC_OK) {
    clock_gettime(CLOCK_MONOTONIC, &t1);
    stc_emit_timing parts = {0};
    status = emit_partitions(llvm_module, context, planned, count, level,
                             opt_level, out, &optimize_s, &parts,
                             units ? &units->bitcode : NULL, err);
    struct timespec cpu;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu);
    if (timing) {
      timing->serial_cpu_s = (double)cpu.tv_sec + cpu.tv_nsec * 1e-9 - cpu0;
      timing->partition_cpu_max_s = parts.partition_cpu_max_s;
      timing->partition_cpu_sum_s = parts.partition_cpu_sum_s;
    }
    clock_gettime(CLOCK_MONOTONIC, &t2);
  } else {
    clock_gettime(CLOCK_MONOTONIC, &t1);
    t2 = t1;
  }
  plan_free(&p);
  LLVMContextDispose(context);
  LLVMDisposeTargetMachine(machine);
  if (status != STC_OK) {
    stc_emit_objects_free(out);
    stc_emit_lazy_free(units);
  } else if (lazy) {
    *lazy = units;
  }
  if (timing) {
    double whole = elapsed(&t0, &t2), serial = elapsed(&t0, &t1);
    if (status != STC_OK)
      timing->serial_cpu_s = timing->partition_cpu_max_s =
          timing->partition_cpu_sum_s = 0;
    timing->partitions = status == STC_OK ? count : 0;
    timing->translate_optimize_s = serial + optimize_s;
    timing->codegen_s = whole - timing->translate_optimize_s;
  }
  return status;
}

