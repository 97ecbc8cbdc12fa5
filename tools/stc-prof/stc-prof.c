/* stc-prof: reads, ranks, merges and compares hot-path profiles.
 * In: a subcommand and its arguments. Out: tables on stdout, diagnostics on
 * stderr ("file:line:col: error: ..."), exit 0 on success, 1 for bad input
 * files, 2 for bad usage. Each subcommand lives in its own file. */
#include "prof.h"

#include <stdio.h>
#include <string.h>

static const char usage[] =
    "usage: stc-prof <command> [options]\n"
    "\n"
    "commands:\n"
    "  show FILE [options]        rank the regions of a profile and classify them\n"
    "      --hot-share=X          hot = fewest regions covering this share of the time (0.90)\n"
    "      --cold-share=X         regions beyond this cumulative share are cold (0.999)\n"
    "      --min-samples=N        regions with fewer dispatches are cold (1)\n"
    "      --max-hot=N            at most N hot regions, the rest become warm (no cap)\n"
    "      --hot-mean-ns=NS       use the absolute rule instead: hot iff mean >= NS\n"
    "      --svg=OUT.svg          also draw the shares as an SVG bar chart\n"
    "  merge A.yaml B.yaml ... -o OUT.yaml [--weight A.yaml=W ...]\n"
    "                             sum counts, times and bytes (times W per file), keep the max\n"
    "                             of max; '-o -' writes to stdout\n"
    "  diff A.yaml B.yaml         compare two profiles region by region\n"
    "\n"
    "  --help                     print this help\n"
    "  --version                  print the version\n"
    "\n"
    "exit status: 0 success, 1 bad or unreadable profile, 2 bad usage\n";

int main(int argc, char **argv) {
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
      fputs(usage, stdout);
      return STC_PROF_EXIT_OK;
    }
    if (strcmp(argv[i], "--version") == 0) {
      printf("stc-prof (stc) %s\n", stc_version());
      return STC_PROF_EXIT_OK;
    }
  }
  if (argc < 2)
    return stc__prof_usage_error(NULL, "missing command (show, merge or diff)");
  static const struct {
    const char *name;
    int (*run)(int argc, char **argv);
  } commands[] = {
      {"show", stc__prof_show},
      {"merge", stc__prof_merge},
      {"diff", stc__prof_diff},
  };
  for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
    if (strcmp(argv[1], commands[i].name) == 0)
      return commands[i].run(argc - 2, argv + 2);
  return stc__prof_usage_error(NULL, "unknown command '%s'", argv[1]);
}
