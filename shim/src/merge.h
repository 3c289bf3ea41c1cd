/* merge.h - reports of several processes in one file: the merge (out.c),
 * the shared file of a run (lifecycle.c), and what lets another process
 * name a frame later: its module and offset (modules.c), for report.c.
 *
 * Invariants:
 *  - A merged file is one JSON object: the totals under the keys of one
 *    report (numbers summed, arrays put end to end, call_sites by blocked
 *    time, on_other_threads_by_function summed by function, summary.worst
 *    the worst process's), then "processes", each process's own report as
 *    it wrote it, oldest first. docs/shim.md describes it; tools/bw-merge
 *    writes the same shape from separate files.
 *  - Only text the shim wrote is read back; anything else is "not a
 *    report" and left to be replaced, as without merging.
 *  - No allocation but libdw's, when the merge names other processes'
 *    frames (never in a signal handler): the texts are mapped files, the
 *    writer a bwsh__out.
 */
#ifndef BW_SHIM_MERGE_H
#define BW_SHIM_MERGE_H

#include "shim.h"

/* The module a code address lies in, as another process can open it: its
 * file as mapped, its GNU build-id (hex; NULL when it has none) and the
 * address in the file (pc less the load bias, what addr2line -e takes). */
typedef struct bwsh__module {
  const char *path, *build_id;
  uintptr_t offset;
} bwsh__module;

/* Finds pc's module among those the last bwsh__modules_scan saw: 1, or 0
 * with path NULL and offset pc itself. No lock, no allocation (a signal
 * handler may call it). */
BWSH__HIDDEN int bwsh__module_of(const void *pc, bwsh__module *out);

/* Names the frame at offset in the module file path as
 * bwsh__symbolize_inline names a pc (same code, same output), up to max
 * frames into out; build_id (hex, NULL: unchecked) must be the file's.
 * 0 when the module cannot name it, with the reason in *note. */
BWSH__HIDDEN int bwsh__symbolize_file(const char *path, const char *build_id,
                                      uintptr_t offset, bwsh__sym *out, int max,
                                      const char **note);
/* Closes the module files bwsh__symbolize_file opened. */
BWSH__HIDDEN void bwsh__symbolize_files_end(void);

/* A piece of JSON text (not NUL-terminated). */
typedef struct bwsh__span {
  const char *p;
  size_t n;
} bwsh__span;

/* Writes to o the merged file of the processes in prev (one report or a
 * merged file) and mine (one report), leaving out prev's entries whose
 * pid is mine's (an earlier report of the same process). 0, or -1 (with
 * nothing written) when prev or mine is not a report, when mine would be
 * the only process left, or when run is
 * not NULL and prev's "run" is not run (a file of an earlier run). */
BWSH__HIDDEN int bwsh__merge_write(bwsh__out *o, bwsh__span prev,
                                   bwsh__span mine, const char *run);

/* On: the merge names the frames of the reports it copies that their
 * process left unnamed (report.c turns it on when it names its own). */
BWSH__HIDDEN void bwsh__merge_naming(int on);

/* The shared file of a run (lifecycle.c): */
/* 1 when the report goes to a file other processes of the run write too:
 * report_path without "%p", outside a fork child. */
BWSH__HIDDEN int bwsh__report_shared(void);
/* The run this process is part of, "<pid>.<start ticks>" of the oldest
 * ancestor started with the same BLOCKWATCH_OPTIONS (else itself); 1 when
 * that is an ancestor. */
BWSH__HIDDEN int bwsh__run_id(char *out, size_t size);
/* Moves the report in tmp (closed) to path, merged with the file there
 * when that is of the same run or was written since this process began;
 * an flock on path's directory keeps the writers one at a time. */
BWSH__HIDDEN void bwsh__commit_shared(const char *tmp, const char *path);

#endif /* BW_SHIM_MERGE_H */
