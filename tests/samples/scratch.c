/* scratch.c - the tests' private temporary directory (see scratch.h). */
#include "scratch.h"

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>

char scratch_dir[64];

int scratch_create(void **state) {
  (void)state;
  snprintf(scratch_dir, sizeof scratch_dir, "/tmp/bw-test-XXXXXX");
  return mkdtemp(scratch_dir) != NULL ? 0 : -1;
}

static int remove_entry(const char *path, const struct stat *st, int type,
                        struct FTW *ftw) {
  (void)st;
  (void)type;
  (void)ftw;
  return remove(path);
}

int scratch_remove(void **state) {
  (void)state;
  /* Depth first (children before their directory), physical (a symlink is
   * removed, not followed). */
  return nftw(scratch_dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS) == 0 ? 0
                                                                        : -1;
}
