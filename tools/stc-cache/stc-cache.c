/* stc-cache: inspects and maintains the tuner's disk cache (DESIGN.md
 * sections 6 and 7).
 * In: [--dir=DIR] COMMAND [options]; the directory defaults to the runtime's
 * rule (stc_cache_default_directory). Out: tables and reports on stdout,
 * "stc-cache: error: ..." on stderr; exit 0 on success, 1 when the cache or
 * a record is bad or an operation fails, 2 for bad usage. Each command lives
 * in its own file; this one only parses the command line. */
#include "cache_tool.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* clang-format off: the help text is laid out as printed. */
static const char usage[] =
    "usage: stc-cache [--dir=DIR] <command> [options]\n"
    "\n"
    "commands:\n"
    "  list [--long] [--ttl=DURATION]\n"
    "                      a table of every record file, oldest first: id "
    "(digest\n"
    "                      prefix), key (operation and workload; --long: the "
    "full\n"
    "                      key), winner, ratio, verified, age, state\n"
    "  show ID|KEY|FILE [--ttl=DURATION]\n"
    "                      every field of one record, chosen by a prefix of "
    "its\n"
    "                      ID, of its key or of 'OPERATION WORKLOAD', or by "
    "its\n"
    "                      file (an argument with a '/' or ending in .rec)\n"
    "  verify [--ttl=DURATION]\n"
    "                      check every record (checksum, version, freshness); "
    "one\n"
    "                      line per bad file; exit 1 when any is bad\n"
    "  prune [--capacity=N] [--ttl=DURATION]\n"
    "                      remove invalid and expired records, then the "
    "oldest\n"
    "                      beyond N (1024)\n"
    "  clear               remove every record\n"
    "  path                print the cache directory\n"
    "\n"
    "  --objects COMMAND   the same commands on stc-run's compiled-code cache\n"
    "                      (DIR/objects-v1) instead of the tuning records:\n"
    "                      list (id, bytes, -O level, input digest, plain or\n"
    "                      tuned, state; --long adds the key), show ID,\n"
    "                      verify, prune (capacity 64 unless --capacity),\n"
    "                      clear; with --remote=URL, the fleet's objects in\n"
    "                      Redis, authenticated with the fleet key in\n"
    "                      $STC_CACHE_REMOTE_KEY_FILE (clear needs none)\n"
    "\n"
    "options:\n"
    "  --dir=DIR           the cache directory; default $STC_CACHE_DIR, else\n"
    "                      $XDG_CACHE_HOME/stc, else $HOME/.cache/stc\n"
    "  --ttl=DURATION      records older than this are expired (7d); N, Ns, "
    "Nm,\n"
    "                      Nh, Nd or Nw\n"
    "  --capacity=N        records prune keeps at most (1024)\n"
    "  --now=SECONDS       judge ages as of this unix time (for tests and\n"
    "                      reproducible reports)\n"
    "  --remote=URL        list, show, verify, prune or clear the records of "
    "the\n"
    "                      fleet cache (a Redis server, as STC_CACHE_REMOTE "
    "names\n"
    "                      it) instead of the directory; prune removes "
    "invalid and\n"
    "                      expired ones (Redis itself bounds the size)\n"
    "  --help              print this help\n"
    "  --version           print the version\n"
    "\n"
    "Records live in DIR/v1/. Commands never create the directory; opening an\n"
    "existing one resets its version folder to mode 0700, as the runtime "
    "does.\n"
    "\n"
    "exit status: 0 success, 1 bad record or cache fault, 2 bad usage\n";
/* clang-format on */

static void stc_cache_vreport(const char *format, va_list args) {
  /* What was printed so far comes first, even when both go to one pipe. */
  fflush(stdout);
  fputs("stc-cache: error: ", stderr);
  vfprintf(stderr, format, args);
  fputc('\n', stderr);
}

int stc__cache_fail(const char *format, ...) {
  va_list args;
  va_start(args, format);
  stc_cache_vreport(format, args);
  va_end(args);
  return STC_CACHE_EXIT_FAILURE;
}

int stc__cache_usage_error(const char *format, ...) {
  va_list args;
  va_start(args, format);
  stc_cache_vreport(format, args);
  va_end(args);
  fputs("run 'stc-cache --help' for usage\n", stderr);
  return STC_CACHE_EXIT_USAGE;
}

int stc__cache_fail_status(stc_status status, const stc_error *err) {
  char message[sizeof err->file + sizeof err->message + 32];
  stc_error_format(err, message, sizeof message);
  return stc__cache_fail("%s", message[0] ? message : stc_status_str(status));
}

/* Which options a command accepts. */
enum {
  STC_OPT_TTL = 1 << 0,
  STC_OPT_CAPACITY = 1 << 1,
  STC_OPT_LONG = 1 << 2,
  STC_OPT_REMOTE = 1 << 3,
};

typedef struct stc_cache_command {
  const char *name;
  int (*run)(const stc_cache_tool *tool);
  unsigned options;
  size_t num_args;      /* exact count of positional arguments */
  const char *synopsis; /* what num_args stands for, in errors */
} stc_cache_command;

static int stc_cache_print_path(const stc_cache_tool *tool) {
  printf("%s\n", tool->directory);
  return STC_CACHE_EXIT_OK;
}

static const stc_cache_command stc_cache_commands[] = {
    {"list", stc__cache_list, STC_OPT_TTL | STC_OPT_LONG | STC_OPT_REMOTE, 0,
     NULL},
    {"show", stc__cache_show, STC_OPT_TTL | STC_OPT_REMOTE, 1,
     "one record (ID, KEY or FILE)"},
    {"verify", stc__cache_verify, STC_OPT_TTL | STC_OPT_REMOTE, 0, NULL},
    {"prune", stc__cache_prune,
     STC_OPT_TTL | STC_OPT_CAPACITY | STC_OPT_REMOTE, 0, NULL},
    {"clear", stc__cache_clear, STC_OPT_REMOTE, 0, NULL},
    {"path", stc_cache_print_path, 0, 0, NULL},
};

typedef struct stc_cache_option {
  const char *name;
  unsigned mask; /* 0: every command takes it */
  bool takes_value;
} stc_cache_option;

/* --dir is looked up by position after parsing. */
enum { STC_OPTION_DIR = 0 };
static const stc_cache_option stc_cache_options[] = {
    [STC_OPTION_DIR] = {"--dir", 0, true},
    {"--now", 0, true},
    {"--ttl", STC_OPT_TTL, true},
    {"--capacity", STC_OPT_CAPACITY, true},
    {"--long", STC_OPT_LONG, false},
    {"--remote", STC_OPT_REMOTE, true},
    {"--objects", 0, false},
};

/* What the command line said, before the command is known to accept it. */
typedef struct stc_cache_parsed {
  const char *values[sizeof stc_cache_options / sizeof *stc_cache_options];
  bool seen[sizeof stc_cache_options / sizeof *stc_cache_options];
} stc_cache_parsed;

/* Options may come before or after the command, as "--name=VALUE" or
 * "--name VALUE"; "--" ends them. */
static int stc_cache_parse(int argc, char **argv, stc_cache_parsed *parsed,
                           const char **positional, size_t *num_positional) {
  bool options_done = false;
  for (int i = 1; i < argc; ++i) {
    const char *arg = argv[i];
    if (options_done || arg[0] != '-' || arg[1] == 0) {
      positional[(*num_positional)++] = arg;
      continue;
    }
    if (strcmp(arg, "--") == 0) {
      options_done = true;
      continue;
    }
    const char *equals = strchr(arg, '=');
    size_t name_length = equals ? (size_t)(equals - arg) : strlen(arg);
    size_t k = 0;
    while (k < sizeof stc_cache_options / sizeof *stc_cache_options &&
           !(strlen(stc_cache_options[k].name) == name_length &&
             strncmp(arg, stc_cache_options[k].name, name_length) == 0))
      ++k;
    if (k == sizeof stc_cache_options / sizeof *stc_cache_options)
      return stc__cache_usage_error("unknown option '%.*s'", (int)name_length,
                                    arg);
    const stc_cache_option *option = &stc_cache_options[k];
    if (!option->takes_value && equals)
      return stc__cache_usage_error("option '%s' takes no value", option->name);
    const char *value = NULL;
    if (option->takes_value) {
      if (equals)
        value = equals + 1;
      else if (i + 1 < argc)
        value = argv[++i];
      else
        return stc__cache_usage_error("option '%s' needs a value",
                                      option->name);
    }
    parsed->seen[k] = true;
    parsed->values[k] = value;
  }
  return STC_CACHE_EXIT_OK;
}

/* Checks the options against the command and converts their values. */
static int stc_cache_apply(const stc_cache_command *command,
                           const stc_cache_parsed *parsed,
                           stc_cache_tool *tool) {
  for (size_t k = 0; k < sizeof stc_cache_options / sizeof *stc_cache_options;
       ++k) {
    if (!parsed->seen[k])
      continue;
    const stc_cache_option *option = &stc_cache_options[k];
    if (option->mask && !(command->options & option->mask))
      return stc__cache_usage_error("option '%s' is not valid for '%s'",
                                    option->name, command->name);
    const char *value = parsed->values[k];
    if (strcmp(option->name, "--dir") == 0) {
      if (!value[0])
        return stc__cache_usage_error("option '--dir' needs a directory");
    } else if (strcmp(option->name, "--now") == 0) {
      if (!stc__cache_parse_i64(value, &tool->now))
        return stc__cache_usage_error(
            "option '--now' expects unix seconds, got '%s'", value);
      tool->has_now = true;
    } else if (strcmp(option->name, "--ttl") == 0) {
      if (!stc__cache_parse_duration(value, &tool->ttl_seconds))
        return stc__cache_usage_error(
            "option '--ttl' expects a duration > 0 such as 90s, 12h or 7d, "
            "got '%s'",
            value);
    } else if (strcmp(option->name, "--capacity") == 0) {
      uint64_t capacity;
      if (!stc__cache_parse_u64(value, &capacity) || capacity == 0 ||
          capacity > SIZE_MAX)
        return stc__cache_usage_error(
            "option '--capacity' expects an integer > 0, got '%s'", value);
      tool->capacity = (size_t)capacity;
      tool->capacity_set = true;
    } else if (strcmp(option->name, "--objects") == 0) {
      tool->objects = true;
    } else if (strcmp(option->name, "--long") == 0) {
      tool->long_keys = true;
    } else if (strcmp(option->name, "--remote") == 0) {
      if (!value[0])
        return stc__cache_usage_error(
            "option '--remote' needs a url (redis://HOST[:PORT][/DB] or "
            "unix:/PATH[?db=N])");
      tool->remote = value;
    }
  }
  return STC_CACHE_EXIT_OK;
}

int main(int argc, char **argv) {
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--") == 0)
      break;
    if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
      fputs(usage, stdout);
      return STC_CACHE_EXIT_OK;
    }
    if (strcmp(argv[i], "--version") == 0) {
      printf("stc-cache (stc) %s\n", stc_version());
      return STC_CACHE_EXIT_OK;
    }
  }
  const char **positional = calloc((size_t)argc + 1, sizeof *positional);
  if (!positional)
    return stc__cache_fail("out of memory");
  size_t num_positional = 0;
  stc_cache_parsed parsed = {{0}, {0}};
  int status =
      stc_cache_parse(argc, argv, &parsed, positional, &num_positional);
  const stc_cache_command *command = NULL;
  if (status == STC_CACHE_EXIT_OK && num_positional == 0)
    status = stc__cache_usage_error(
        "missing command (list, show, verify, prune, clear or path)");
  for (size_t c = 0; status == STC_CACHE_EXIT_OK && !command &&
                     c < sizeof stc_cache_commands / sizeof *stc_cache_commands;
       ++c)
    if (strcmp(positional[0], stc_cache_commands[c].name) == 0)
      command = &stc_cache_commands[c];
  if (status == STC_CACHE_EXIT_OK && !command)
    status = stc__cache_usage_error("unknown command '%s'", positional[0]);

  stc_cache_tool tool = {0};
  tool.capacity = STC_CACHE_TOOL_DEFAULT_CAPACITY;
  tool.ttl_seconds = STC_CACHE_TOOL_DEFAULT_TTL;
  if (status == STC_CACHE_EXIT_OK) {
    tool.command = command->name;
    tool.args = positional + 1;
    tool.num_args = num_positional - 1;
    if (tool.num_args != command->num_args) {
      if (command->num_args == 0)
        status = stc__cache_usage_error("'%s' takes no arguments, got '%s'",
                                        command->name, tool.args[0]);
      else
        status = stc__cache_usage_error("'%s' expects %s, got %zu arguments",
                                        command->name, command->synopsis,
                                        tool.num_args);
    }
  }
  if (status == STC_CACHE_EXIT_OK)
    status = stc_cache_apply(command, &parsed, &tool);

  if (status == STC_CACHE_EXIT_OK) {
    const char *dir = parsed.values[STC_OPTION_DIR];
    stc_error err;
    stc_error_clear(&err);
    if (dir) {
      tool.directory = malloc(strlen(dir) + 1);
      if (tool.directory)
        strcpy(tool.directory, dir);
      else
        status = stc__cache_fail("out of memory");
    } else {
      stc_status resolved = stc_cache_default_directory(&tool.directory, &err);
      if (resolved != STC_OK)
        status = stc__cache_fail_status(resolved, &err);
    }
  }
  if (status == STC_CACHE_EXIT_OK)
    status = tool.objects && strcmp(command->name, "path") != 0
                 ? stc__cache_objects(&tool)
                 : command->run(&tool);
  free(tool.directory);
  free(positional);
  return status;
}
