/* list_rules.h - `blockscan --list-rules`: every loaded rule, one line each.
 *
 * Invariants: the lines come kind by kind (entry, posts, ready,
 * blocking, nonblocking, hint, allow), each kind in the rules' order; each
 * begins "KIND NAME" and carries its fields as a rule file spells them
 * (`arg=2 on=pool kind=offload`, `unless="arg0 is 0"`), so a listed rule
 * can be read back or copied into a file of one's own.
 */
#ifndef BWSC_LIST_RULES_H
#define BWSC_LIST_RULES_H

#include <stdio.h>

#include <blockwatch/rules.h>

void bwsc__list_rules(const bw_rules *rules, FILE *out);

#endif
