/* stc-prof show FILE: in a profile and classification options, out a ranked
 * table (rank, region, calls, total, share, mean, max, class) on stdout and
 * optionally an SVG bar chart of each region's share of the time. */
#include "prof.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const command = "show";

/* Escapes the characters XML gives meaning to; region ids may contain any. */
static void write_xml_text(FILE *out, const char *text) {
  for (; *text; text++) {
    switch (*text) {
    case '&': fputs("&amp;", out); break;
    case '<': fputs("&lt;", out); break;
    case '>': fputs("&gt;", out); break;
    case '"': fputs("&quot;", out); break;
    default: fputc(*text, out);
    }
  }
}

static const char *hotness_color(stc_hotness hotness) {
  switch (hotness) {
  case STC_HOTNESS_HOT: return "#d62728";
  case STC_HOTNESS_WARM: return "#ff7f0e";
  case STC_HOTNESS_COLD: return "#1f77b4";
  }
  return "#7f7f7f";
}

/* One horizontal bar per region, in rank order, length proportional to its
 * share of the recorded time. */
static int write_svg(const char *path, const char *title, const stc_ranked_region *rows,
                     size_t count) {
  enum { LABEL_WIDTH = 380, BAR_WIDTH = 400, ROW_HEIGHT = 22, TOP = 40 };
  FILE *out = fopen(path, "w");
  if (!out) {
    fprintf(stderr, "%s: error: cannot write SVG: %s\n", path, strerror(errno));
    return STC_PROF_EXIT_BAD_INPUT;
  }
  int width = LABEL_WIDTH + BAR_WIDTH + 120;
  int height = TOP + (int)count * ROW_HEIGHT + 20;
  fprintf(out,
          "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
          "font-family=\"monospace\" font-size=\"12\">\n",
          width, height);
  fprintf(out, "  <text x=\"10\" y=\"20\" font-size=\"14\">share of recorded time: ");
  write_xml_text(out, title);
  fprintf(out, "</text>\n");
  for (size_t i = 0; i < count; i++) {
    int y = TOP + (int)i * ROW_HEIGHT;
    char share[32];
    stc__prof_format_share(rows[i].share, share, sizeof share);
    fprintf(out, "  <g class=\"%s\">\n    <title>", stc_hotness_str(rows[i].hotness));
    write_xml_text(out, rows[i].region);
    fprintf(out, " (%s, %s)</title>\n", share, stc_hotness_str(rows[i].hotness));
    fprintf(out, "    <text x=\"%d\" y=\"%d\" text-anchor=\"end\">", LABEL_WIDTH - 8, y + 15);
    write_xml_text(out, rows[i].region);
    fprintf(out, "</text>\n");
    double length = rows[i].share * BAR_WIDTH;
    fprintf(out,
            "    <rect x=\"%d\" y=\"%d\" width=\"%.1f\" height=\"%d\" fill=\"%s\"/>\n",
            LABEL_WIDTH, y + 3, length, ROW_HEIGHT - 6, hotness_color(rows[i].hotness));
    fprintf(out, "    <text x=\"%.1f\" y=\"%d\">%s %s</text>\n  </g>\n",
            LABEL_WIDTH + length + 6, y + 15, share, stc_hotness_str(rows[i].hotness));
  }
  fprintf(out, "</svg>\n");
  if (ferror(out) | (fclose(out) != 0)) {
    fprintf(stderr, "%s: error: cannot write SVG\n", path);
    return STC_PROF_EXIT_BAD_INPUT;
  }
  return STC_PROF_EXIT_OK;
}

static void print_summary(const char *path, const stc_profile *profile,
                          const stc_ranked_region *rows, size_t count,
                          const stc_classify_options *options) {
  uint64_t total = 0;
  size_t classes[3] = {0};
  double hot_share = 0;
  for (size_t i = 0; i < count; i++) {
    total = total > UINT64_MAX - rows[i].record.total_ns ? UINT64_MAX
                                                         : total + rows[i].record.total_ns;
    classes[rows[i].hotness]++;
    if (rows[i].hotness == STC_HOTNESS_HOT)
      hot_share += rows[i].share;
  }
  char total_text[32], hot_text[32];
  stc__prof_format_duration(total, total_text, sizeof total_text);
  stc__prof_format_share(hot_share, hot_text, sizeof hot_text);
  printf("profile:     %s\n", path);
  printf("producer:    %s\n", profile->producer);
  printf("environment: %s\n", profile->environment);
  printf("created:     %s\n", profile->created);
  printf("regions:     %zu, %s recorded\n", count, total_text);
  if (options->hot_mean_ns)
    printf("classes:     %zu hot (%s of the time), %zu cold; rule: mean >= %llu ns\n",
           classes[STC_HOTNESS_HOT], hot_text, classes[STC_HOTNESS_COLD],
           (unsigned long long)options->hot_mean_ns);
  else
    printf("classes:     %zu hot (%s of the time), %zu warm, %zu cold; hot-share %g, "
           "cold-share %g\n",
           classes[STC_HOTNESS_HOT], hot_text, classes[STC_HOTNESS_WARM],
           classes[STC_HOTNESS_COLD], options->hot_share, options->cold_share);
}

static int print_table(const stc_ranked_region *rows, size_t count) {
  static const char *const headers[] = {"rank", "region", "calls", "total",
                                        "share", "mean", "max", "class"};
  stc_prof_table *table = stc__prof_table_create("rlrrrrrl", headers);
  bool ok = table != NULL;
  for (size_t i = 0; ok && i < count; i++) {
    char rank[24], calls[24], total[32], share[32], mean[32], max[32];
    snprintf(rank, sizeof rank, "%zu", rows[i].rank);
    snprintf(calls, sizeof calls, "%llu", (unsigned long long)rows[i].record.dispatch_count);
    stc__prof_format_duration(rows[i].record.total_ns, total, sizeof total);
    stc__prof_format_share(rows[i].share, share, sizeof share);
    stc__prof_format_duration(stc_region_record_mean_ns(&rows[i].record), mean, sizeof mean);
    stc__prof_format_duration(rows[i].record.max_ns, max, sizeof max);
    const char *cells[] = {rank, rows[i].region, calls, total, share, mean, max,
                           stc_hotness_str(rows[i].hotness)};
    ok = stc__prof_table_add(table, cells);
  }
  if (ok)
    stc__prof_table_print(table);
  stc__prof_table_destroy(table);
  if (!ok)
    fprintf(stderr, "stc-prof: error: out of memory\n");
  return ok ? STC_PROF_EXIT_OK : STC_PROF_EXIT_BAD_INPUT;
}

int stc__prof_show(int argc, char **argv) {
  stc_classify_options options;
  stc_classify_options_init(&options);
  const char *svg = NULL;
  const stc_prof_option specs[] = {
      {"--hot-share", STC_PROF_OPTION_DOUBLE, &options.hot_share},
      {"--cold-share", STC_PROF_OPTION_DOUBLE, &options.cold_share},
      {"--min-samples", STC_PROF_OPTION_U64, &options.min_samples},
      {"--max-hot", STC_PROF_OPTION_SIZE, &options.max_hot},
      {"--hot-mean-ns", STC_PROF_OPTION_U64, &options.hot_mean_ns},
      {"--svg", STC_PROF_OPTION_STRING, &svg},
  };
  stc_prof_list files = {0};
  int exit_code = stc__prof_parse_args(argc, argv, command, specs,
                                       sizeof specs / sizeof specs[0], &files);
  const char *path = files.count == 1 ? files.items[0] : NULL;
  if (exit_code == STC_PROF_EXIT_OK && files.count != 1)
    exit_code = stc__prof_usage_error(command, "expected one profile file, got %zu",
                                      files.count);
  free(files.items);
  if (exit_code != STC_PROF_EXIT_OK)
    return exit_code;
  stc_error err;
  if (stc_classify_options_validate(&options, &err) != STC_OK)
    return stc__prof_usage_error(command, "%s", err.message);

  stc_profile *profile = stc__prof_load(path);
  if (!profile)
    return STC_PROF_EXIT_BAD_INPUT;
  stc_ranked_region *rows = NULL;
  if (stc__prof_rank(profile, &options, &rows, &err) != STC_OK) {
    stc__prof_print_diagnostic("error", &err);
    exit_code = STC_PROF_EXIT_BAD_INPUT;
  } else {
    size_t count = profile->num_regions;
    print_summary(path, profile, rows, count, &options);
    printf("\n");
    if (count == 0)
      printf("no regions recorded\n");
    else
      exit_code = print_table(rows, count);
    if (exit_code == STC_PROF_EXIT_OK && svg)
      exit_code = write_svg(svg, path, rows, count);
  }
  free(rows);
  stc_profile_destroy(profile);
  return exit_code;
}
