/* The result lines of the VM's check programs (kcheck, kzero): "PASS: ..."
   or "FAIL: ...", one a line, flushed at once so that a hang or a panic
   leaves every line before it; FAILED is set by any failure.  */
#include <stdarg.h>
#include <stdio.h>

static int failed;

static void
ok (int cond, const char *fmt, ...)
{
  va_list ap;

  va_start (ap, fmt);
  printf ("%s: ", cond ? "PASS" : "FAIL");
  vprintf (fmt, ap);
  putchar ('\n');
  va_end (ap);
  fflush (stdout);
  failed |= !cond;
}
