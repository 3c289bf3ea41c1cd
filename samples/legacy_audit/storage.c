/* storage.c - scratch-file storage with the blocking buried two and three
 * calls below the job handlers (which is why audits miss it).
 *
 * Invariant: `file` is only touched with `lock` held, between storage_open()
 * and storage_close().
 */
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

#include "storage.h"

static FILE *file;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

int storage_open(void) {
  file = tmpfile();
  return file != NULL ? 0 : -1;
}

void storage_close(void) {
  if (file != NULL)
    fclose(file);
  file = NULL;
}

/* Old code "gives the disk a moment" before syncing. */
static void settle_disk(void) {
  usleep(20 * 1000);
}

static int sync_to_disk(void) {
  settle_disk();
  return fsync(fileno(file));
}

int storage_append(const char *line) {
  pthread_mutex_lock(&lock);
  int rc = fputs(line, file) < 0 ? -1 : 0;
  if (rc == 0)
    rc = fflush(file) == 0 ? sync_to_disk() : -1;
  pthread_mutex_unlock(&lock);
  return rc;
}

int storage_first_line(char *buf, size_t size) {
  pthread_mutex_lock(&lock);
  rewind(file);
  int rc = fgets(buf, (int)size, file) != NULL ? 0 : -1;
  fseek(file, 0, SEEK_END);
  pthread_mutex_unlock(&lock);
  return rc;
}
