/* jit.c - stc-run's JIT module (jit.h): links a module's objects into the
 * process with LLVM's ORC LLJIT, and compiles its lazy variant units on
 * their first call or before their site explores.
 * In: the driver's request (objects, absolute definitions, libraries to
 * load on lookup, lazy units). Out: symbol addresses; errors on stderr. */
#include "jit.h"
#include "stc_host.h"

#include <llvm-c/Core.h>
#include <llvm-c/Error.h>
#include <llvm-c/LLJIT.h>
#include <llvm-c/Orc.h>
#include <llvm-c/Target.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The loaders a request may carry. */
#define MAX_LOADERS 4

/* One lazy variant unit as the JIT sees it (the context of its
 * materialization unit). */
typedef struct lazy_unit {
  stc_run_jit_code *code;
  size_t index;
  uint64_t stubs[2];    /* its entries' stub addresses (the tables') */
  atomic_bool prepared; /* an explore hook has compiled it */
} lazy_unit;

struct stc_run_jit_code {
  LLVMOrcLLJITRef jit;
  stc_run_jit_loader loaders[MAX_LOADERS]; /* the generators' contexts */
  /* Lazy variant units (NULL: everything was compiled eagerly): stubs
   * (ism) whose first call goes through lctm to the unit's compile. */
  const stc_emit_lazy *lazy;
  const stc_run_compiler *compiler;
  void (*set_explore_hook)(stc_rt_explore_hook hook, void *user);
  void (*call_failed)(void);
  size_t num_units;
  lazy_unit *units;
  LLVMOrcIndirectStubsManagerRef ism;
  LLVMOrcLazyCallThroughManagerRef lctm;
  atomic_size_t units_compiled;
  atomic_uint_fast64_t compile_ns; /* their compile times, summed */
  int compile_threads; /* for a site's candidates before it explores */
  atomic_size_t units_prepared;    /* asked for by prepare_site */
  atomic_uint_fast64_t prepare_ns; /* prepare_site's wall time, summed */
};

/* Prints an ORC error after "stc-run: error: <what>: " and consumes it. */
static void orc_error(LLVMErrorRef err, const char *what) {
  char *message = LLVMGetErrorMessage(err);
  stc_run_error("%s for '%s': %s", what, stc_run_input_name, message);
  LLVMDisposeErrorMessage(message);
}

static uint64_t lookup(stc_run_jit_code *code, const char *name) {
  LLVMOrcExecutorAddress address = 0;
  LLVMErrorRef err = LLVMOrcLLJITLookup(code->jit, &address, name);
  if (err) {
    /* The JIT session already reported why (e.g. "Symbols not found"). */
    LLVMConsumeError(err);
    return 0;
  }
  return address;
}

/* The JIT's definition generator for a stc_run_jit_loader (context). */
static LLVMErrorRef
load_on_lookup(LLVMOrcDefinitionGeneratorRef generator, void *context,
               LLVMOrcLookupStateRef *state, LLVMOrcLookupKind kind,
               LLVMOrcJITDylibRef dylib, LLVMOrcJITDylibLookupFlags flags,
               LLVMOrcCLookupSet symbols, size_t count) {
  (void)generator, (void)state, (void)kind, (void)dylib, (void)flags;
  const stc_run_jit_loader *loader = context;
  for (size_t i = 0; i < count; i++) {
    if (!loader->needs(LLVMOrcSymbolStringPoolEntryStr(symbols[i].Name)))
      continue;
    if (loader->load(loader->context))
      return LLVMErrorSuccess;
    char message[128];
    snprintf(message, sizeof message, "cannot load %s", loader->what);
    return LLVMCreateStringError(message);
  }
  return LLVMErrorSuccess;
}

static void unload(stc_run_jit_code *code);
static bool add_lazy_units(stc_run_jit_code *code, LLVMOrcJITDylibRef dylib);

/* Creates the JIT (one JITDylib): the request's absolute definitions first
 * (they take precedence, as with MLIR's ExecutionEngine), then its loaders,
 * then the process; the objects are linked at the first lookup. */
static stc_run_jit_code *load(const stc_run_jit_request *request) {
  stc_run_input_name = request->input_name;
  if (request->num_loaders > MAX_LOADERS ||
      request->num_tables > STC_RUN_JIT_MAX_TABLES) {
    stc_run_error("stc-run's JIT module: bad request");
    return NULL;
  }
  stc_run_jit_code *code = calloc(1, sizeof *code);
  if (!code) {
    stc_run_error("out of memory");
    return NULL;
  }
  LLVMInitializeNativeTarget();
  LLVMInitializeNativeAsmPrinter();
  code->compiler = request->compiler;
  code->lazy = request->compiler ? request->lazy : NULL;
  code->num_units = code->lazy ? code->compiler->lazy_units(code->lazy) : 0;
  code->compile_threads = request->compile_threads;
  code->set_explore_hook = request->set_explore_hook;
  code->call_failed = request->call_failed;
  /* The JIT links objects only (compiles make their own host machines):
   * a machine without the host's features (stc_host.h) spares both LLJIT's
   * CPUID detection and the features' closure in each machine it creates. */
  LLVMOrcLLJITBuilderRef builder = LLVMOrcCreateLLJITBuilder();
  stc_error machine_err;
  stc_error_clear(&machine_err);
  LLVMTargetMachineRef machine = stc_host_link_machine(&machine_err);
  if (machine)
    LLVMOrcLLJITBuilderSetJITTargetMachineBuilder(
        builder, LLVMOrcJITTargetMachineBuilderCreateFromTargetMachine(machine));
  LLVMErrorRef err = LLVMOrcCreateLLJIT(&code->jit, builder);
  if (err) {
    code->jit = NULL;
    orc_error(err, "cannot create the execution engine");
    free(code);
    return NULL;
  }
  LLVMOrcJITDylibRef dylib = LLVMOrcLLJITGetMainJITDylib(code->jit);
  size_t num_symbols = 0;
  for (size_t t = 0; t < request->num_tables; t++)
    num_symbols += request->table_sizes[t];
  LLVMOrcCSymbolMapPair *pairs =
      calloc(num_symbols ? num_symbols : 1, sizeof *pairs);
  if (!pairs) {
    stc_run_error("out of memory");
    unload(code);
    return NULL;
  }
  size_t at = 0;
  for (size_t t = 0; t < request->num_tables; t++)
    for (size_t i = 0; i < request->table_sizes[t]; i++)
      pairs[at++] = (LLVMOrcCSymbolMapPair){
          LLVMOrcLLJITMangleAndIntern(code->jit, request->tables[t][i].name),
          {(LLVMOrcExecutorAddress)(uintptr_t)request->tables[t][i].address,
           {LLVMJITSymbolGenericFlagsExported |
                LLVMJITSymbolGenericFlagsCallable,
            0}}};
  err = LLVMOrcJITDylibDefine(dylib, LLVMOrcAbsoluteSymbols(pairs, at));
  free(pairs);
  for (size_t k = 0; !err && k < request->num_loaders; k++) {
    code->loaders[k] = request->loaders[k];
    LLVMOrcJITDylibAddGenerator(
        dylib, LLVMOrcCreateCustomCAPIDefinitionGenerator(
                   load_on_lookup, &code->loaders[k], NULL));
  }
  LLVMOrcDefinitionGeneratorRef generator = NULL;
  if (!err)
    err = LLVMOrcCreateDynamicLibrarySearchGeneratorForProcess(
        &generator, LLVMOrcLLJITGetGlobalPrefix(code->jit), NULL, NULL);
  if (!err)
    LLVMOrcJITDylibAddGenerator(dylib, generator);
  for (size_t i = 0; !err && i < request->num_objects; i++) {
    char name[48];
    snprintf(name, sizeof name, "stc-run-object-%zu", i);
    /* Not copied when aligned (a tuned module's objects are 100s of KB, a
     * page fault per 4 KB): the caller keeps the bytes until unload. */
    const char *data = request->objects[i];
    size_t size = request->sizes[i];
    LLVMMemoryBufferRef buffer =
        (uintptr_t)data % STC_RUN_JIT_OBJECT_ALIGN == 0
            ? LLVMCreateMemoryBufferWithMemoryRange(data, size, name, false)
            : LLVMCreateMemoryBufferWithMemoryRangeCopy(data, size, name);
    err = LLVMOrcLLJITAddObjectFile(code->jit, dylib, buffer);
  }
  if (err) {
    orc_error(err, "cannot create the execution engine");
    unload(code);
    return NULL;
  }
  if (code->num_units && !add_lazy_units(code, dylib)) {
    unload(code);
    return NULL;
  }
  return code;
}

/* ---- lazy variant units ----
 * Each unit's entries are defined in the JITDylib twice: under their own
 * names as lazy reexports (an indirect stub each, which the dispatch tables
 * of the eager objects point at; linking them compiles nothing), and under
 * STC_EMIT_LAZY_PREFIX + name by a materialization unit that compiles the
 * unit when one of them is first looked up: the stub's first call goes
 * through the lazy call-through manager, which looks the prefixed name up
 * (compiling and linking on the calling thread; ORC makes concurrent first
 * calls wait for one compile) and points the stub at it. */

static void report_session_error(void *user, LLVMErrorRef err) {
  (void)user;
  char *message = LLVMGetErrorMessage(err);
  stc_run_error("JIT session for '%s': %s", stc_run_input_name, message);
  LLVMDisposeErrorMessage(message);
}

static const char *unit_root(const stc_run_jit_code *code, size_t unit) {
  const char *const *roots = NULL;
  code->compiler->lazy_roots(code->lazy, unit, &roots);
  return roots[0];
}

static void materialize_unit(void *user,
                             LLVMOrcMaterializationResponsibilityRef mr) {
  lazy_unit *unit = user;
  stc_run_jit_code *code = unit->code;
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  char *data = NULL;
  size_t size = 0;
  stc_error err;
  stc_error_clear(&err);
  if (code->compiler->lazy_compile(code->lazy, unit->index, &data, &size,
                                   &err) != STC_OK) {
    stc_run_error("cannot compile variant '%s' of '%s' on its first call: %s",
                  unit_root(code, unit->index), stc_run_input_name,
                  err.message);
    LLVMOrcMaterializationResponsibilityFailMaterialization(mr);
    LLVMOrcDisposeMaterializationResponsibility(mr);
    return;
  }
  char name[64];
  snprintf(name, sizeof name, "stc-run-variant-%zu", unit->index);
  LLVMMemoryBufferRef buffer =
      LLVMCreateMemoryBufferWithMemoryRangeCopy(data, size, name);
  free(data);
  atomic_fetch_add(&code->units_compiled, 1);
  atomic_fetch_add(&code->compile_ns,
                   (uint_fast64_t)(stc_run_seconds_since(&t) * 1e9));
  LLVMOrcObjectLayerEmit(LLVMOrcLLJITGetObjLinkingLayer(code->jit), mr,
                         buffer);
}

static void discard_unit(void *user, LLVMOrcJITDylibRef dylib,
                         LLVMOrcSymbolStringPoolEntryRef symbol) {
  (void)user, (void)dylib, (void)symbol;
}

static void destroy_unit(void *user) { (void)user; }

/* "__stc_lazy.<name>"; malloc'd, NULL without memory. */
static char *lazy_name(const char *name) {
  size_t size = sizeof STC_EMIT_LAZY_PREFIX + strlen(name);
  char *prefixed = malloc(size);
  if (prefixed)
    snprintf(prefixed, size, "%s%s", STC_EMIT_LAZY_PREFIX, name);
  return prefixed;
}

/* Compiles units[0..count) of a site, each on a thread of its own, at most
 * compile_threads at once: a lookup of a unit's prefixed entry compiles and
 * links it on the looking-up thread (ORC makes a concurrent first call
 * wait for that compile). A failure was reported by the session; the
 * variant's call then stops the run (call_failed). */
typedef struct prepare_job {
  stc_run_jit_code *code;
  lazy_unit **units;
  size_t count;
  atomic_size_t next;
} prepare_job;

static void *prepare_worker(void *arg) {
  prepare_job *job = arg;
  for (size_t i; (i = atomic_fetch_add(&job->next, 1)) < job->count;) {
    char *name = lazy_name(unit_root(job->code, job->units[i]->index));
    if (!name)
      continue; /* the call compiles it then */
    LLVMOrcExecutorAddress address = 0;
    LLVMErrorRef err = LLVMOrcLLJITLookup(job->code->jit, &address, name);
    if (err)
      LLVMConsumeError(err); /* reported by the session */
    free(name);
  }
  return NULL;
}

/* The explore hook: site is about to time its candidates, which must not
 * include their compile. */
static void prepare_site(const stc_rt_site *site, void *user) {
  stc_run_jit_code *code = user;
  lazy_unit **units = calloc(site->num_variants ? site->num_variants : 1,
                             sizeof *units);
  if (!units)
    return; /* each compiles on its first call */
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  prepare_job job = {.code = code, .units = units};
  for (uint32_t v = 0; v < site->num_variants; v++)
    for (size_t u = 0; u < code->num_units; u++)
      if (site->variants[v].entry &&
          (code->units[u].stubs[0] ==
               (uint64_t)(uintptr_t)site->variants[v].entry ||
           code->units[u].stubs[1] ==
               (uint64_t)(uintptr_t)site->variants[v].entry)) {
        if (!atomic_exchange(&code->units[u].prepared, true))
          units[job.count++] = &code->units[u];
        break;
      }
  long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  size_t threads = code->compile_threads > 0 ? (size_t)code->compile_threads
                   : cpus < 1                ? 1
                                             : (size_t)cpus;
  if (threads > STC_EMIT_MAX_PARTITIONS)
    threads = STC_EMIT_MAX_PARTITIONS;
  if (threads > job.count)
    threads = job.count;
  pthread_t workers[STC_EMIT_MAX_PARTITIONS];
  size_t started = 0;
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, (size_t)64 << 20); /* LLVM recurses */
  for (; started + 1 < threads; started++)
    if (pthread_create(&workers[started], &attr, prepare_worker, &job) != 0)
      break;
  pthread_attr_destroy(&attr);
  prepare_worker(&job); /* this thread works too */
  for (size_t k = 0; k < started; k++)
    pthread_join(workers[k], NULL);
  free(units);
  atomic_fetch_add(&code->units_prepared, job.count);
  atomic_fetch_add(&code->prepare_ns,
                   (uint_fast64_t)(stc_run_seconds_since(&t) * 1e9));
}

/* The stub addresses of the units' entries (the linked eager objects'
 * dispatch tables hold them), for prepare_site; then the hook. */
static void lazy_ready(stc_run_jit_code *code) {
  for (size_t u = 0; u < code->num_units; u++) {
    const char *const *roots = NULL;
    size_t n = code->compiler->lazy_roots(code->lazy, u, &roots);
    for (size_t k = 0; k < n && k < 2; k++)
      code->units[u].stubs[k] = lookup(code, roots[k]);
  }
  if (code->num_units && code->set_explore_hook)
    code->set_explore_hook(prepare_site, code);
}

/* "__stc_lazy.<name>", interned; NULL without memory. */
static LLVMOrcSymbolStringPoolEntryRef lazy_intern(LLVMOrcLLJITRef jit,
                                                  const char *name) {
  char *prefixed = lazy_name(name);
  if (!prefixed)
    return NULL;
  LLVMOrcSymbolStringPoolEntryRef entry =
      LLVMOrcLLJITMangleAndIntern(jit, prefixed);
  free(prefixed);
  return entry;
}

static bool add_lazy_units(stc_run_jit_code *code, LLVMOrcJITDylibRef dylib) {
  const char *triple = LLVMOrcLLJITGetTripleString(code->jit);
  LLVMOrcExecutionSessionRef session =
      LLVMOrcLLJITGetExecutionSession(code->jit);
  LLVMOrcExecutionSessionSetErrorReporter(session, report_session_error,
                                          NULL);
  LLVMErrorRef err = LLVMOrcCreateLocalLazyCallThroughManager(
      triple, session, (LLVMOrcJITTargetAddress)(uintptr_t)code->call_failed,
      &code->lctm);
  if (err) {
    code->lctm = NULL;
    orc_error(err, "cannot set up lazy compilation");
    return false;
  }
  code->ism = LLVMOrcCreateLocalIndirectStubsManager(triple);
  size_t count = code->num_units, num_roots = 0;
  for (size_t u = 0; u < count; u++) {
    const char *const *roots;
    num_roots += code->compiler->lazy_roots(code->lazy, u, &roots);
  }
  code->units = calloc(count, sizeof *code->units);
  LLVMOrcCSymbolAliasMapPairs aliases =
      calloc(num_roots ? num_roots : 1, sizeof *aliases);
  if (!code->ism || !code->units || !aliases) {
    free(aliases);
    stc_run_error("out of memory");
    return false;
  }
  LLVMJITSymbolFlags flags = {
      LLVMJITSymbolGenericFlagsExported | LLVMJITSymbolGenericFlagsCallable, 0};
  size_t at = 0;
  for (size_t u = 0; !err && u < count; u++) {
    code->units[u] = (lazy_unit){.code = code, .index = u};
    const char *const *roots;
    size_t n = code->compiler->lazy_roots(code->lazy, u, &roots);
    LLVMOrcCSymbolFlagsMapPairs symbols = calloc(n, sizeof *symbols);
    if (!symbols) {
      stc_run_error("out of memory");
      free(aliases); /* the names interned so far stay in the pool */
      return false;
    }
    for (size_t k = 0; k < n; k++) {
      LLVMOrcSymbolStringPoolEntryRef impl = lazy_intern(code->jit, roots[k]);
      if (!impl) {
        free(symbols);
        free(aliases);
        stc_run_error("out of memory");
        return false;
      }
      LLVMOrcRetainSymbolStringPoolEntry(impl); /* one for each use */
      symbols[k] = (LLVMOrcCSymbolFlagsMapPair){impl, flags};
      aliases[at++] = (LLVMOrcCSymbolAliasMapPair){
          LLVMOrcLLJITMangleAndIntern(code->jit, roots[k]), {impl, flags}};
    }
    char name[64];
    snprintf(name, sizeof name, "stc-run-variant-%zu", u);
    LLVMOrcMaterializationUnitRef unit = LLVMOrcCreateCustomMaterializationUnit(
        name, &code->units[u], symbols, n, NULL, materialize_unit,
        discard_unit, destroy_unit);
    free(symbols);
    err = LLVMOrcJITDylibDefine(dylib, unit);
    if (err)
      LLVMOrcDisposeMaterializationUnit(unit);
  }
  if (!err) {
    LLVMOrcMaterializationUnitRef stubs =
        LLVMOrcLazyReexports(code->lctm, code->ism, dylib, aliases, at);
    err = LLVMOrcJITDylibDefine(dylib, stubs);
    if (err)
      LLVMOrcDisposeMaterializationUnit(stubs);
  }
  free(aliases);
  if (err) {
    orc_error(err, "cannot set up lazy compilation");
    return false;
  }
  return true;
}

static void lazy_stats(stc_run_jit_code *code, stc_run_jit_lazy_stats *stats) {
  *stats = (stc_run_jit_lazy_stats){
      .units = code->num_units,
      .compiled = atomic_load(&code->units_compiled),
      .prepared = atomic_load(&code->units_prepared),
      .compile_s = (double)atomic_load(&code->compile_ns) * 1e-9,
      .prepare_s = (double)atomic_load(&code->prepare_ns) * 1e-9,
  };
}

/* Frees the JIT; the caller ran the module's destructors. */
static void unload(stc_run_jit_code *code) {
  if (!code)
    return;
  if (code->units && code->set_explore_hook)
    code->set_explore_hook(NULL, NULL);
  /* Before the JIT: the call-through manager holds names of the JIT's
   * symbol pool. Nothing calls a stub any more. */
  if (code->lctm)
    LLVMOrcDisposeLazyCallThroughManager(code->lctm);
  if (code->ism)
    LLVMOrcDisposeIndirectStubsManager(code->ism);
  if (code->jit) {
    LLVMErrorRef err = LLVMOrcDisposeLLJIT(code->jit);
    if (err)
      LLVMConsumeError(err);
  }
  free(code->units);
  free(code);
}

const stc_run_jit *stc_run_jit_table(void)
    __attribute__((visibility("default")));
const stc_run_jit *stc_run_jit_table(void) {
  static stc_run_jit table = {
      .header.abi = STC_RUN_JIT_ABI,
      .load = load,
      .lookup = lookup,
      .lazy_ready = lazy_ready,
      .lazy_stats = lazy_stats,
      .unload = unload,
  };
  table.header.version = stc_version(); /* not a constant expression */
  return &table;
}
