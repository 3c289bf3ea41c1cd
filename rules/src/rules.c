/* Placeholder: the bw_rules implementation lands in the next commits. */
#include "blockwatch/rules.h"

#include <errno.h>
#include <stdlib.h>

bw_rules *bw_rules_create(void) {
  return NULL;
}
