/* storage.h - the legacy program's "disk": a scratch file it writes, syncs
 * and reads back.
 *
 * Invariant: storage_open() is called once before any job runs and
 * storage_close() once after they all finished; every other call is safe
 * from any thread (one mutex guards the file).
 */
#ifndef LEGACY_STORAGE_H
#define LEGACY_STORAGE_H

#include <stddef.h>

int storage_open(void);
void storage_close(void);

/* Appends a line and makes it durable: blocks on the disk. */
int storage_append(const char *line);

/* Reads the first line back into buf: blocks on the stream. */
int storage_first_line(char *buf, size_t size);

#endif /* LEGACY_STORAGE_H */
