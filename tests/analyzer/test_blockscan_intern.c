/* test_blockscan_intern.c - interned strings and interned TU facts: equal
 * strings are held once, a TU's facts read the same after interning, and
 * two TUs (or two reads of one file) share one copy of each string.
 */
#include "facts.h"
#include "facts_io.h"
#include "util.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void test_equal_strings_give_one_pointer(void **state) {
  (void)state;
  char a[] = "c:@F@g_file_new_for_path", b[] = "c:@F@g_file_new_for_path";
  const char *x = bwsc__intern(a), *y = bwsc__intern(b);
  assert_ptr_equal(x, y);
  assert_ptr_not_equal(x, a);
  assert_string_equal(x, a);
  a[0] = 'X'; /* the interned copy is the table's, not the caller's */
  assert_string_equal(x, "c:@F@g_file_new_for_path");
  assert_ptr_not_equal(bwsc__intern("c:@F@g_file_new"), x);
  assert_string_equal(bwsc__intern(""), "");
}

static void test_many_and_long_strings_stay_in_place(void **state) {
  (void)state;
  enum { COUNT = 20000 };
  const char **first = calloc(COUNT, sizeof(char *));
  char buf[64];
  for (int i = 0; i < COUNT; i++) {
    snprintf(buf, sizeof(buf), "c:@F@function_%d", i);
    first[i] = bwsc__intern(buf);
  }
  /* Longer than an arena block: stored all the same. */
  size_t len = 300 * 1024;
  char *big = malloc(len + 1);
  memset(big, 'u', len);
  big[len] = '\0';
  const char *kept = bwsc__intern(big);
  assert_int_equal(strlen(kept), len);
  for (int i = 0; i < COUNT; i++) {
    snprintf(buf, sizeof(buf), "c:@F@function_%d", i);
    assert_ptr_equal(bwsc__intern(buf), first[i]);
    assert_string_equal(first[i], buf);
  }
  assert_ptr_equal(bwsc__intern(big), kept);
  size_t count = 0, bytes = 0;
  bwsc__intern_stats(&count, &bytes);
  assert_true(count >= COUNT + 1);
  assert_true(bytes >= len + 1);
  free(big);
  free(first);
}

/* `slot` may hold function `usr`; the descriptor of main flows into
 * main's `fd`. */
static void add_flows(bwsc__tu_facts *tu, const char *slot, const char *usr,
                      const char *name) {
  bwsc__flow_fact *flow = BWSC__PUSH(tu->flows, tu->nflows, tu->capflows);
  flow->slot = bwsc__xstrdup(slot);
  flow->value.kind = BWSC__VAL_FUNC;
  flow->value.ref = bwsc__xstrdup(usr);
  flow->value.name = bwsc__xstrdup(name);
  BWSC__PUSH(tu->desc_flows, tu->ndesc_flows, tu->capdesc_flows)->to =
      bwsc__xstrdup("c:@F@main@fd");
}

/* One TU's facts, as a parse of a file including "/src/api.h" gives. */
static void tu_facts(bwsc__tu_facts *tu, const char *main_file) {
  memset(tu, 0, sizeof(*tu));
  tu->file = bwsc__xstrdup(main_file);
  *BWSC__PUSH(tu->records, tu->nrecords, tu->caprecords) =
      bwsc__xstrdup("c:@S@ops");
  bwsc__func_fact *f = BWSC__PUSH(tu->funcs, tu->nfuncs, tu->capfuncs);
  f->usr = bwsc__xstrdup("c:@F@api_run");
  f->name = bwsc__xstrdup("api_run");
  f->loc = (bwsc__loc){bwsc__xstrdup("/src/api.h"), 3, 6};
  bwsc__call_fact *c = BWSC__PUSH(tu->calls, tu->ncalls, tu->capcalls);
  c->caller = bwsc__xstrdup("c:@F@main");
  c->callee = (bwsc__value){BWSC__VAL_FUNC, bwsc__xstrdup("c:@F@api_run"),
                            bwsc__xstrdup("api_run"), 0, NULL};
  c->loc = (bwsc__loc){bwsc__xstrdup(main_file), 9, 3};
  c->nargs = 1;
  c->args = bwsc__xcalloc(1, sizeof(bwsc__value));
  c->args[0] = (bwsc__value){BWSC__VAL_SLOT, bwsc__xstrdup("c:@ops"),
                             bwsc__xstrdup("ops"), 0, tu->records[0]};
  c->descs = bwsc__xcalloc(1, sizeof(bwsc__arg_desc));
  c->descs[0].key = bwsc__xstrdup("c:@F@main@fd");
  c->result = bwsc__xstrdup("c:@F@main@r");
  add_flows(tu, "c:@ops", "c:@F@cb", "cb");
  bwsc__suppress_fact *s =
      BWSC__PUSH(tu->suppress, tu->nsuppress, tu->capsuppress);
  s->file = bwsc__xstrdup("/src/api.h");
  s->line = 2;
  bwsc__diag_fact *g = BWSC__PUSH(tu->diags, tu->ndiags, tu->capdiags);
  g->loc = (bwsc__loc){bwsc__xstrdup("/src/api.h"), 1, 2};
  g->message = bwsc__xstrdup("unknown type name 'gsize'");
}

static void test_interned_facts_encode_the_same_bytes(void **state) {
  (void)state;
  bwsc__tu_facts tu;
  tu_facts(&tu, "/src/a.c");
  size_t len = 0, ilen = 0;
  unsigned char *before = bwsc__facts_encode(&tu, NULL, 7, &len);
  bwsc__facts_intern(&tu);
  assert_true(tu.interned);
  /* Pushed one by one, the arrays had room for eight; now for what they
   * hold. */
  assert_int_equal(tu.capfuncs, tu.nfuncs);
  assert_int_equal(tu.capcalls, tu.ncalls);
  unsigned char *after = bwsc__facts_encode(&tu, NULL, 7, &ilen);
  assert_int_equal(len, ilen);
  assert_memory_equal(before, after, len);
  /* A value's record still borrows the facts' own record. */
  assert_ptr_equal(tu.calls[0].args[0].record, tu.records[0]);
  assert_null(tu.suppress[0].rule);
  free(before);
  free(after);
  bwsc__facts_intern(&tu); /* twice is once */
  bwsc__facts_free(&tu);   /* frees the arrays, not the shared strings */
  assert_int_equal(tu.nfuncs, 0);
}

static void test_two_tus_share_their_header_strings(void **state) {
  (void)state;
  bwsc__tu_facts a, b;
  tu_facts(&a, "/src/a.c");
  tu_facts(&b, "/src/b.c");
  bwsc__facts_intern(&a);
  bwsc__facts_intern(&b);
  assert_ptr_equal(a.funcs[0].usr, b.funcs[0].usr);
  assert_ptr_equal(a.funcs[0].loc.file, b.funcs[0].loc.file);
  assert_ptr_equal(a.suppress[0].file, a.funcs[0].loc.file);
  assert_ptr_equal(a.calls[0].callee.ref, b.funcs[0].usr);
  assert_ptr_not_equal(a.file, b.file);
  assert_string_equal(b.file, "/src/b.c");
  bwsc__facts_free(&a);
  /* b's strings are intact when a is gone. */
  assert_string_equal(b.funcs[0].usr, "c:@F@api_run");
  assert_string_equal(b.diags[0].message, "unknown type name 'gsize'");
  bwsc__facts_free(&b);
}

static void test_decoded_facts_are_interned(void **state) {
  (void)state;
  bwsc__tu_facts tu, first, second;
  tu_facts(&tu, "/src/a.c");
  size_t len = 0;
  unsigned char *bytes = bwsc__facts_encode(&tu, NULL, 3, &len);
  const char *why = NULL;
  assert_int_equal(bwsc__facts_decode(bytes, len, 3, &first, NULL, &why), 0);
  assert_int_equal(bwsc__facts_decode(bytes, len, 3, &second, NULL, &why), 0);
  assert_true(first.interned && second.interned);
  assert_ptr_equal(first.funcs[0].usr, second.funcs[0].usr);
  assert_ptr_equal(first.calls[0].args[0].record, first.records[0]);
  assert_string_equal(first.calls[0].loc.file, "/src/a.c");
  free(bytes);
  bwsc__facts_free(&tu);
  bwsc__facts_free(&first);
  bwsc__facts_free(&second);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_equal_strings_give_one_pointer),
      cmocka_unit_test(test_many_and_long_strings_stay_in_place),
      cmocka_unit_test(test_interned_facts_encode_the_same_bytes),
      cmocka_unit_test(test_two_tus_share_their_header_strings),
      cmocka_unit_test(test_decoded_facts_are_interned),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
