/* stc-prof diff A.yaml B.yaml: in two profiles, out a table on stdout with
 * each region's calls, total time and share in A and in B, the change of its
 * total time and of its share; regions present on one side only are marked.
 * Rows follow A's ranking, then B-only regions in B's ranking. */
#include "prof.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const command = "diff";

typedef struct side {
  const char *path;
  stc_profile *profile;
  stc_ranked_region *rows;
  stc_hints *index; /* region id -> record, for O(1) lookups across sides */
  uint64_t total_ns;
} side;

static int load_side(side *s, const char *path) {
  s->path = path;
  s->profile = stc__prof_load(path);
  if (!s->profile)
    return STC_PROF_EXIT_BAD_INPUT;
  stc_error err;
  stc_error_clear(&err);
  if (stc__prof_rank(s->profile, NULL, &s->rows, &err) != STC_OK ||
      stc_hints_create(SIZE_MAX, &s->index) != STC_OK ||
      stc_profile_to_hints(s->profile, s->index) != STC_OK) {
    if (!err.message[0])
      stc_error_set(&err, path, 0, 0, "out of memory");
    stc__prof_print_diagnostic("error", &err);
    return STC_PROF_EXIT_BAD_INPUT;
  }
  for (size_t i = 0; i < s->profile->num_regions; i++) {
    uint64_t ns = s->profile->regions[i].total_ns;
    s->total_ns = s->total_ns > UINT64_MAX - ns ? UINT64_MAX : s->total_ns + ns;
  }
  return STC_PROF_EXIT_OK;
}

static void free_side(side *s) {
  stc_hints_destroy(s->index);
  free(s->rows);
  stc_profile_destroy(s->profile);
}

static double share_in(const side *s, uint64_t ns) {
  return s->total_ns ? (double)ns / (double)s->total_ns : 0.0;
}

/* Fills the calls / total / share cells of one side ("-" when absent). */
static void side_cells(const side *s, const stc_region_record *record, char calls[32],
                       char total[32], char share[32]) {
  if (!record) {
    strcpy(calls, "-");
    strcpy(total, "-");
    strcpy(share, "-");
    return;
  }
  snprintf(calls, 32, "%llu", (unsigned long long)record->dispatch_count);
  stc__prof_format_duration(record->total_ns, total, 32);
  stc__prof_format_share(share_in(s, record->total_ns), share, 32);
}

static bool add_row(stc_prof_table *table, const side *a, const side *b, const char *region,
                    const stc_region_record *in_a, const stc_region_record *in_b) {
  char calls_a[32], total_a[32], share_a[32], calls_b[32], total_b[32], share_b[32];
  char change[48], share_change[48];
  side_cells(a, in_a, calls_a, total_a, share_a);
  side_cells(b, in_b, calls_b, total_b, share_b);
  if (in_a && in_b) {
    if (in_a->total_ns == 0)
      snprintf(change, sizeof change, in_b->total_ns ? "new time" : "+0.0%%");
    else
      snprintf(change, sizeof change, "%+.1f%%",
               ((double)in_b->total_ns - (double)in_a->total_ns) / (double)in_a->total_ns * 100.0);
    snprintf(share_change, sizeof share_change, "%+.1f pp",
             (share_in(b, in_b->total_ns) - share_in(a, in_a->total_ns)) * 100.0);
  } else {
    snprintf(change, sizeof change, "%s", in_a ? "only in A" : "only in B");
    strcpy(share_change, "-");
  }
  const char *cells[] = {region, calls_a, calls_b, total_a, total_b,
                         share_a, share_b, change, share_change};
  return stc__prof_table_add(table, cells);
}

static int print_diff(const side *a, const side *b) {
  char total_a[32], total_b[32];
  stc__prof_format_duration(a->total_ns, total_a, sizeof total_a);
  stc__prof_format_duration(b->total_ns, total_b, sizeof total_b);
  printf("A: %s (%zu regions, %s)\n", a->path, a->profile->num_regions, total_a);
  printf("B: %s (%zu regions, %s)\n\n", b->path, b->profile->num_regions, total_b);
  static const char *const headers[] = {"region",   "calls A", "calls B", "total A",
                                        "total B",  "share A", "share B", "change",
                                        "share change"};
  stc_prof_table *table = stc__prof_table_create("lrrrrrrrr", headers);
  bool ok = table != NULL;
  for (size_t i = 0; ok && i < a->profile->num_regions; i++) {
    stc_region_record in_b;
    bool present = stc_hints_record_for(b->index, a->rows[i].region, &in_b);
    ok = add_row(table, a, b, a->rows[i].region, &a->rows[i].record, present ? &in_b : NULL);
  }
  for (size_t i = 0; ok && i < b->profile->num_regions; i++)
    if (!stc_hints_record_for(a->index, b->rows[i].region, NULL))
      ok = add_row(table, a, b, b->rows[i].region, NULL, &b->rows[i].record);
  if (ok)
    stc__prof_table_print(table);
  stc__prof_table_destroy(table);
  if (!ok) {
    fprintf(stderr, "stc-prof: error: out of memory\n");
    return STC_PROF_EXIT_BAD_INPUT;
  }
  return STC_PROF_EXIT_OK;
}

int stc__prof_diff(int argc, char **argv) {
  stc_prof_list files = {0};
  int exit_code = stc__prof_parse_args(argc, argv, command, NULL, 0, &files);
  if (exit_code == STC_PROF_EXIT_OK && files.count != 2)
    exit_code = stc__prof_usage_error(command, "expected two profiles (A and B), got %zu",
                                      files.count);
  side a = {0}, b = {0};
  if (exit_code == STC_PROF_EXIT_OK) {
    /* Load both so that both sides' problems are reported in one run. */
    int status_a = load_side(&a, files.items[0]);
    int status_b = load_side(&b, files.items[1]);
    exit_code = status_a != STC_PROF_EXIT_OK ? status_a : status_b;
  }
  if (exit_code == STC_PROF_EXIT_OK)
    exit_code = print_diff(&a, &b);
  free_side(&a);
  free_side(&b);
  free(files.items);
  return exit_code;
}
