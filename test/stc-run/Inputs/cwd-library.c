/* A library a tool must never load: it stands in the current directory
 * under the name of one of the tool's own libraries (no-libraries-from-cwd.test)
 * and stops any process that loads it. */
#include <stdio.h>
#include <unistd.h>

__attribute__((constructor)) static void loaded_from_cwd(void) {
  fputs("loaded a library from the current directory\n", stderr);
  _exit(99);
}
