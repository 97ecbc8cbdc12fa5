/* The AOT start-up stub (runtime/aot_boot.c) built to load a runtime that
 * does not exist (STC_RT_AOT_RUNTIME="libstc_rt_missing_for_test.so"): the
 * first site call is a one-line error naming the library, and exit status
 * 127, in a child process; never a call through a null pointer. */
#include "stc_test.h"

#include "stc/rt_dispatch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

STC_TEST(stub_reports_a_runtime_that_does_not_load) {
  int fds[2];
  STC_CHECK(pipe(fds) == 0);
  pid_t child = fork();
  STC_CHECK(child >= 0);
  if (child == 0) {
    dup2(fds[1], 2);
    close(fds[0]);
    stc_rt_site site = {0};
    uint64_t words[1] = {0};
    stc_rt_site_enter(&site, words, 0);
    _exit(0); /* not reached: the stub exits */
  }
  close(fds[1]);
  char text[2048];
  size_t n = 0;
  ssize_t r;
  while (n < sizeof text - 1 && (r = read(fds[0], text + n, sizeof text - 1 - n)) > 0)
    n += (size_t)r;
  text[n] = '\0';
  close(fds[0]);
  int status = 0;
  STC_CHECK(waitpid(child, &status, 0) == child);
  STC_CHECK(WIFEXITED(status));
  STC_CHECK_EQ_INT(WEXITSTATUS(status), 127);
  STC_CHECK_CONTAINS(text, "stc: error: cannot load libstc_rt_missing_for_test.so");
  STC_CHECK_CONTAINS(text, "the stc runtime, needed by a tuned site");
  STC_CHECK_EQ_INT(strchr(text, '\n') - text + 1, (long long)n); /* one line */
}
