/* parse.c - one input chunk -> a builtin.module, as mlir-opt does it.
 * In:  chunk text (padded: line numbers are the input's), the file name
 *      used as the location source.
 * Out: an owned module, or a null module with the parser's diagnostics in
 *      the collector.
 *
 * mlirOperationCreateParse wants exactly one top-level op, while mlir-opt
 * wraps several in an implicit module. When the parser reports nothing but
 * "source must contain a single top-level operation", the text is parsed
 * again wrapped in 'module { ... }', keeping every line and column of the
 * ops: the opening goes on a line that holds no IR (blank, comment, or an
 * alias definition that moves up onto it), the closing at the end (before a
 * '{-#' metadata block). Alias definitions must stay outside the module, so
 * all of them are moved onto that opening line. When the first op starts
 * line 1, the opening has to go in front of it; the columns it shifted on
 * line 1 are then shifted back in every op and block argument location. */
#include "stc_opt.h"

#include <string.h>

static const char single_op_error[] =
    "source must contain a single top-level operation";

/* One line of the chunk: [begin, end) without the newline. */
typedef struct line_span {
  const char *begin, *end;
} line_span;

static const char *skip_blanks(const char *p, const char *end) {
  while (p < end && (*p == ' ' || *p == '\t' || *p == '\r'))
    p++;
  return p;
}

static bool is_ir_free(line_span line) {
  const char *p = skip_blanks(line.begin, line.end);
  return p == line.end || (line.end - p >= 2 && p[0] == '/' && p[1] == '/');
}

/* '#name =' or '!name =' at column 1 starts an attribute or type alias. */
static bool starts_alias(line_span line) {
  const char *p = line.begin;
  if (p == line.end || (*p != '#' && *p != '!'))
    return false;
  p++;
  while (p < line.end && (*p == '_' || *p == '.' || *p == '$' || *p == '-' ||
                          (*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'z') ||
                          (*p >= 'A' && *p <= 'Z')))
    p++;
  p = skip_blanks(p, line.end);
  return p < line.end && *p == '=';
}

/* Bracket depth change over a line; '->' is not a closing '>'. */
static int depth_change(line_span line) {
  int depth = 0;
  for (const char *p = line.begin; p < line.end; p++) {
    if (*p == '"') {
      for (p++; p < line.end && *p != '"'; p++)
        if (*p == '\\')
          p++;
    } else if (*p == '(' || *p == '[' || *p == '{' || *p == '<') {
      depth++;
    } else if (*p == ')' || *p == ']' || *p == '}' ||
               (*p == '>' && !(p > line.begin && p[-1] == '-'))) {
      depth--;
    }
  }
  return depth;
}

static line_span line_at(const char *p, const char *end) {
  const char *newline = memchr(p, '\n', (size_t)(end - p));
  return (line_span){p, newline ? newline : end};
}

static const char opening_text[] = "module {";

/* Builds the wrapped text described at the top of the file; returns how
 * many columns line 1 was shifted by. */
static unsigned wrap_in_module(const stc_text *chunk, stc_text *out) {
  unsigned shift = 0;
  const char *text = chunk->data, *end = chunk->data + chunk->length;
  stc_text aliases = {0};
  /* Pass 1: find the line of the first op, the last IR-free line before
   * it, and the '{-#' line; collect aliases. */
  const char *first_op = NULL, *opening = NULL, *metadata = NULL;
  int alias_depth = 0;
  bool in_alias = false;
  for (const char *p = text; p < end;) {
    line_span line = line_at(p, end);
    bool alias_line = in_alias || starts_alias(line);
    if (alias_line) {
      stc_text_append(&aliases, line.begin,
                          (size_t)(line.end - line.begin));
      stc_text_append(&aliases, " ", 1);
      alias_depth += depth_change(line);
      in_alias = alias_depth > 0;
    } else if (!metadata && line.end - line.begin >= 3 &&
               memcmp(line.begin, "{-#", 3) == 0) {
      metadata = line.begin;
    }
    if (!first_op && (alias_line || is_ir_free(line)))
      opening = line.begin;
    else if (!first_op && !alias_line)
      first_op = line.begin;
    p = line.end < end ? line.end + 1 : end;
  }
  /* Pass 2: copy with the opening line replaced and alias lines blanked. */
  in_alias = false;
  alias_depth = 0;
  bool opened = false;
  for (const char *p = text; p < end;) {
    line_span line = line_at(p, end);
    bool alias_line = in_alias || starts_alias(line);
    if (alias_line) {
      alias_depth += depth_change(line);
      in_alias = alias_depth > 0;
    }
    if (line.begin == metadata)
      stc_text_append(out, "} ", 2);
    if (line.begin == opening || (!opening && line.begin == first_op)) {
      size_t before = out->length;
      if (aliases.data)
        stc_text_append(out, aliases.data, aliases.length);
      stc_text_append(out, opening_text, sizeof opening_text - 1);
      if (!opening)
        shift = (unsigned)(out->length - before);
      opened = true;
    }
    if (line.begin == opening || alias_line)
      ; /* its content is now on the opening line, or is a comment */
    else
      stc_text_append(out, line.begin, (size_t)(line.end - line.begin));
    if (!opened && line.begin == first_op)
      opened = true;
    stc_text_append(out, "\n", line.end < end ? 1 : 0);
    p = line.end < end ? line.end + 1 : end;
  }
  if (!opened) { /* no op and no free line: an empty module */
    stc_text_append(out, aliases.data ? aliases.data : "",
                        aliases.length);
    stc_text_append(out, opening_text, sizeof opening_text - 1);
  }
  if (!metadata)
    stc_text_append(out, "\n}\n", 3);
  stc_text_free(&aliases);
  return shift;
}

typedef struct unshift {
  MlirContext ctx;
  MlirStringRef file_name;
  unsigned columns;
} unshift;

/* The location loc would have without the shift, or loc itself. */
static MlirLocation unshifted(const unshift *u, MlirLocation loc) {
  if (!mlirLocationIsAFileLineColRange(loc) ||
      mlirLocationFileLineColRangeGetStartLine(loc) != 1)
    return loc;
  MlirStringRef file =
      mlirIdentifierStr(mlirLocationFileLineColRangeGetFilename(loc));
  int column = mlirLocationFileLineColRangeGetStartColumn(loc);
  if (!mlirStringRefEqual(file, u->file_name) || column <= (int)u->columns)
    return loc;
  return mlirLocationFileLineColGet(u->ctx, file, 1,
                                    (unsigned)column - u->columns);
}

static MlirWalkResult unshift_op(MlirOperation op, void *user_data) {
  const unshift *u = user_data;
  mlirOperationSetLocation(op, unshifted(u, mlirOperationGetLocation(op)));
  for (intptr_t r = 0; r < mlirOperationGetNumRegions(op); r++)
    for (MlirBlock block = mlirRegionGetFirstBlock(mlirOperationGetRegion(op, r));
         !mlirBlockIsNull(block); block = mlirBlockGetNextInRegion(block))
      for (intptr_t a = 0; a < mlirBlockGetNumArguments(block); a++) {
        MlirValue argument = mlirBlockGetArgument(block, a);
        mlirBlockArgumentSetLocation(
            argument, unshifted(u, mlirValueGetLocation(argument)));
      }
  return MlirWalkResultAdvance;
}

/* Makes a module of a parsed top-level op, wrapping a non-module op. */
static MlirModule as_module(MlirContext ctx, MlirOperation op,
                            const char *file_name) {
  MlirStringRef name = mlirIdentifierStr(mlirOperationGetName(op));
  if (name.length == 14 && memcmp(name.data, "builtin.module", 14) == 0)
    return mlirModuleFromOperation(op);
  MlirModule module = mlirModuleCreateEmpty(mlirLocationFileLineColGet(
      ctx, mlirStringRefCreateFromCString(file_name), 0, 0));
  mlirBlockAppendOwnedOperation(mlirModuleGetBody(module), op);
  return module;
}

static bool only_single_op_error(const stc_opt_diagnostics *diagnostics,
                                 size_t first) {
  if (diagnostics->count != first + 1)
    return false;
  const stc_diagnostic *d = &diagnostics->items[first];
  return d->severity == MlirDiagnosticError &&
         strncmp(d->message, single_op_error, sizeof single_op_error - 1) == 0;
}

MlirModule stc_opt_parse_module(MlirContext ctx, const stc_text *chunk,
                                const char *file_name,
                                stc_opt_diagnostics *diagnostics) {
  MlirStringRef source_name = mlirStringRefCreateFromCString(file_name);
  size_t first = diagnostics->count;
  MlirOperation op = mlirOperationCreateParse(
      ctx, mlirStringRefCreate(chunk->data, chunk->length), source_name);
  if (mlirOperationIsNull(op) && only_single_op_error(diagnostics, first)) {
    stc_opt_diagnostics_truncate(diagnostics, first);
    stc_text wrapped = {0};
    unsigned shift = wrap_in_module(chunk, &wrapped);
    if (!wrapped.out_of_memory)
      op = mlirOperationCreateParse(
          ctx, mlirStringRefCreate(wrapped.data, wrapped.length), source_name);
    stc_text_free(&wrapped);
    if (!mlirOperationIsNull(op) && shift > 0) {
      unshift u = {ctx, source_name, shift};
      mlirOperationWalk(op, unshift_op, &u, MlirWalkPreOrder);
    }
    /* The implicit module of mlir-opt sits at file:0:0. */
    if (!mlirOperationIsNull(op))
      mlirOperationSetLocation(
          op, mlirLocationFileLineColGet(ctx, source_name, 0, 0));
  }
  if (mlirOperationIsNull(op))
    return (MlirModule){NULL};
  return as_module(ctx, op, file_name);
}
