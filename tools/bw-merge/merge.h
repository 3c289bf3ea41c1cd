/* merge.h - merging blockwatch reports of several processes (merge.c).
 *
 * Invariants: every json_t returned is the caller's to decref; a report
 * file is read whole or not at all.
 */
#ifndef BW_MERGE_H
#define BW_MERGE_H

#include <jansson.h>
#include <stdio.h>

/* Appends the process reports in the file at path (one report, or a
 * merged file's "processes") to procs. -1 with "file:line: what" in err
 * when the file is not a report. */
int bwm_add_file(json_t *procs, const char *path, char *err, size_t size);
/* Names every frame of procs that its process left unnamed (symbolize=0,
 * a signal handler) from its module file and offset (names.c); a frame
 * that cannot be named keeps them and gets a "note". */
void bwm_name_frames(json_t *procs);
/* Names in place the slices of the traces procs' reports name
 * ("trace_file") that their process left unnamed (traces.c); messages
 * start with who ("blockwatch", "bw-merge"). The number of traces that
 * were not traces of the shim's or could not be rewritten (each said on
 * stderr, each left as it was). */
int bwm_name_traces(json_t *procs, const char *who);
/* Closes the module files the naming opened (after both of the above). */
void bwm_names_end(void);
/* The merged report of procs (an array of process reports; referenced). */
json_t *bwm_merge(json_t *procs);
/* The text summary: each process that blocked a worker (every one, when
 * there is one) as the shim prints it, a line per process, the SUMMARY. */
void bwm_print(FILE *f, json_t *merged, const char *json_path);
/* 1 when any process blocked a worker. */
int bwm_findings(json_t *merged);

#endif /* BW_MERGE_H */
