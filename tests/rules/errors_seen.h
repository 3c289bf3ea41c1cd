/* errors_seen.h - a rule set whose load errors the test can read: the
 * last one formatted, and how many there were (test_rules_conds,
 * test_rules_nonblock).
 *
 * Invariant: one set at a time; seen_rules() resets what was seen.
 */
#ifndef BW_TEST_ERRORS_SEEN_H
#define BW_TEST_ERRORS_SEEN_H

#include <stddef.h>

#include "blockwatch/rules.h"

extern char seen_last_error[512];
extern size_t seen_errors;

/* A new set (asserted non-NULL) with `text` loaded as "t.rules"; *rc is
 * what the load returned. The caller frees the set. */
bw_rules *seen_rules(const char *text, int *rc);

/* `text` fails to load with one error, `expected`; returns the set (for
 * more checks), which the caller frees. */
bw_rules *seen_error(const char *text, const char *expected);

#endif /* BW_TEST_ERRORS_SEEN_H */
