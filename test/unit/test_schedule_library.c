/* Unit tests of passes/schedule_library.c (MLIR-free): the built-in table
 * copy, the YAML variant-library loader with its file:line:col errors and
 * script positions, and the shapes vocabulary. A stub built-in table stands
 * in for the generated one. */
#include "schedule_library.h"
#include "stc_test.h"

#include <stdio.h>
#include <stdlib.h>

const stc_builtin_schedule stc_builtin_schedules[] = {
    {"stub_a", "module {}\n"},
    {"stub_b", "module attributes {x} {}\n"},
};
const size_t stc_num_builtin_schedules = 2;

static const char *write_file(const char *name, const char *text) {
  static char path[1024];
  snprintf(path, sizeof path, "%s/%s", stc_test_tmpdir(), name);
  FILE *file = fopen(path, "w");
  if (!file)
    return NULL;
  fputs(text, file);
  fclose(file);
  return path;
}

/* Loads `text` as a library after one built-in; returns the status and
 * checks that a failure leaves the list as it was. */
static stc_status load_text(const char *text, stc_schedule_list *list,
                            stc_error *err) {
  const char *path = write_file("lib.yaml", text);
  if (!path)
    return STC_ERR_IO;
  size_t before = list->count;
  stc_status status = stc_schedule_list_load_yaml(list, path, err);
  if (status != STC_OK && list->count != before)
    return STC_ERR_CORRUPT; /* a failed load must append nothing */
  return status;
}

STC_TEST(builtins_are_copied_with_unknown_kind) {
  stc_schedule_list list = {0};
  stc_error err;
  STC_CHECK(stc_schedule_list_add_builtins(&list, &err) == STC_OK);
  STC_CHECK(list.count == 2);
  STC_CHECK(strcmp(list.items[1].name, "stub_b") == 0);
  STC_CHECK(strcmp(list.items[1].script, "module attributes {x} {}\n") == 0);
  STC_CHECK(list.items[1].builtin && !list.items[1].kind);
  STC_CHECK(list.items[1].shapes == STC_SCHEDULE_SHAPES_UNKNOWN);
  stc_schedule_list_free(&list);
  STC_CHECK(list.count == 0 && list.items == NULL);
  stc_schedule_list_free(NULL);
}

STC_TEST(yaml_entries_and_script_positions) {
  stc_schedule_list list = {0};
  stc_error err;
  STC_CHECK(stc_schedule_list_add_builtins(&list, &err) == STC_OK);
  const char *text = "# comment\n"
                     "- name: first\n"
                     "  kind: matmul\n"
                     "  dynamic: yes\n"
                     "  script: |\n"
                     "    module {\n"
                     "      line2\n"
                     "    }\n"
                     "- kind: reduction\n"
                     "  name: second\n"
                     "  dynamic: divisible\n"
                     "  script: \"module {}\"\n";
  STC_CHECK(load_text(text, &list, &err) == STC_OK);
  STC_CHECK(list.count == 4);
  const stc_schedule *first = &list.items[2];
  STC_CHECK(strcmp(first->name, "first") == 0);
  STC_CHECK(strcmp(first->kind, "matmul") == 0);
  STC_CHECK(first->shapes == STC_SCHEDULE_SHAPES_ANY);
  STC_CHECK(strcmp(first->script, "module {\n  line2\n}\n") == 0);
  STC_CHECK(!first->builtin && first->block);
  STC_CHECK(first->line == 6 && first->indent == 4);
  unsigned line, column;
  stc_schedule_locate(first, 2, 3, &line, &column);
  STC_CHECK(line == 7 && column == 7); /* "line2" in the file */
  const stc_schedule *second = &list.items[3];
  STC_CHECK(strcmp(second->name, "second") == 0);
  STC_CHECK(second->shapes == STC_SCHEDULE_SHAPES_DIVISIBLE);
  STC_CHECK(!second->block);
  stc_schedule_locate(second, 5, 5, &line, &column);
  STC_CHECK(line == 12 && column == 11); /* the quoted scalar's start */
  stc_schedule_list_free(&list);
}

STC_TEST(yaml_empty_file_is_an_empty_library) {
  stc_schedule_list list = {0};
  stc_error err;
  STC_CHECK(load_text("", &list, &err) == STC_OK);
  STC_CHECK(list.count == 0);
  stc_schedule_list_free(&list);
}

STC_TEST(yaml_missing_file_is_io) {
  stc_schedule_list list = {0};
  stc_error err;
  stc_error_clear(&err);
  STC_CHECK(stc_schedule_list_load_yaml(&list, "/nonexistent/lib.yaml", &err) ==
            STC_ERR_IO);
  STC_CHECK(strstr(err.message, "cannot open") != NULL);
  STC_CHECK(list.count == 0);
}

/* Each malformed library: the status, the located line:column, a message
 * fragment; and nothing appended (load_text). */
static int check_bad(const char *text, unsigned line, unsigned column,
                     const char *fragment) {
  stc_schedule_list list = {0};
  stc_error err;
  stc_error_clear(&err);
  stc_status status = load_text(text, &list, &err);
  int ok = status == STC_ERR_PARSE && err.line == line && err.column == column &&
           strstr(err.message, fragment) != NULL && strstr(err.file, "lib.yaml");
  if (!ok)
    fprintf(stderr, "status %s at %u:%u: %s\n", stc_status_str(status),
            err.line, err.column, err.message);
  stc_schedule_list_free(&list);
  return ok;
}

STC_TEST(yaml_errors_are_located) {
  STC_CHECK(check_bad("- name: x\n  kind: \"open\n", 3, 1, "malformed YAML"));
  STC_CHECK(check_bad("name: x\n", 1, 1, "expected a list"));
  STC_CHECK(check_bad("- just a string\n", 1, 3, "must be a mapping"));
  STC_CHECK(check_bad("- name: x\n  kind: matmul\n  dynamic: yes\n", 1, 3,
                      "lacks field script"));
  STC_CHECK(check_bad("- name: x\n  kind: matmul\n  dynamic: maybe\n  script: s\n",
                      3, 12, "dynamic must be"));
  STC_CHECK(check_bad("- name: x\n  colour: red\n", 2, 3, "unknown field"));
  STC_CHECK(check_bad("- name: x\n  name: y\n", 2, 3, "duplicate field"));
  STC_CHECK(check_bad("- name: [a]\n", 1, 9, "expected a scalar"));
  STC_CHECK(check_bad("- name: 'a b'\n  kind: k\n  dynamic: yes\n  script: s\n",
                      1, 9, "symbol name"));
  STC_CHECK(check_bad("- name: ''\n  kind: k\n  dynamic: yes\n  script: s\n", 1,
                      9, "empty name"));
  STC_CHECK(check_bad("- {name: a, kind: k, dynamic: yes, script: s}\n"
                      "- {name: a, kind: k, dynamic: yes, script: s}\n",
                      2, 3, "duplicate schedule name"));
}

STC_TEST(shapes_vocabulary) {
  stc_schedule_shapes shapes;
  STC_CHECK(stc_schedule_shapes_parse("yes", &shapes) && shapes == STC_SCHEDULE_SHAPES_ANY);
  STC_CHECK(stc_schedule_shapes_parse("true", &shapes) && shapes == STC_SCHEDULE_SHAPES_ANY);
  STC_CHECK(stc_schedule_shapes_parse("static", &shapes) &&
            shapes == STC_SCHEDULE_SHAPES_STATIC);
  STC_CHECK(stc_schedule_shapes_parse("false", &shapes) &&
            shapes == STC_SCHEDULE_SHAPES_STATIC);
  STC_CHECK(stc_schedule_shapes_parse("divisible", &shapes) &&
            shapes == STC_SCHEDULE_SHAPES_DIVISIBLE);
  STC_CHECK(!stc_schedule_shapes_parse("Yes", &shapes));
  STC_CHECK(!stc_schedule_shapes_parse(NULL, &shapes));
  STC_CHECK(strcmp(stc_schedule_shapes_str(STC_SCHEDULE_SHAPES_STATIC), "static") == 0);
  STC_CHECK(strcmp(stc_schedule_shapes_str(STC_SCHEDULE_SHAPES_UNKNOWN), "unknown") == 0);
}
