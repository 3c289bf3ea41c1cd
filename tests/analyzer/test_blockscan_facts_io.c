/* test_blockscan_facts_io.c - the on-disk facts format alone: a round trip
 * keeps every field, and no truncation or flipped bit is ever trusted.
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
#include <unistd.h>

/* Facts with every field set to something other than its zero value. */
static void sample(bwsc__tu_facts *tu) {
  memset(tu, 0, sizeof(*tu));
  tu->file = bwsc__xstrdup("/src/a.c");
  *BWSC__PUSH(tu->records, tu->nrecords, tu->caprecords) =
      bwsc__xstrdup("c:@S@ops");
  bwsc__func_fact *f = BWSC__PUSH(tu->funcs, tu->nfuncs, tu->capfuncs);
  f->usr = bwsc__xstrdup("c:@F@work");
  f->name = bwsc__xstrdup("work");
  f->loc = (bwsc__loc){bwsc__xstrdup("/src/a.c"), 12, 5};
  f->is_def = f->is_static = f->annotated = f->noreturn = 1;
  f->nparams = 3;
  bwsc__call_fact *c = BWSC__PUSH(tu->calls, tu->ncalls, tu->capcalls);
  c->caller = bwsc__xstrdup("c:@F@work");
  c->callee = (bwsc__value){BWSC__VAL_SLOT, bwsc__xstrdup("c:@S@ops@FI@run"),
                            bwsc__xstrdup("ops->run"), 0, NULL};
  c->loc = (bwsc__loc){bwsc__xstrdup("/src/a.h"), 4000000000u, 77};
  c->cold = 1;
  c->once = 1;
  c->self = 1;
  c->nargs = 2;
  c->args = bwsc__xcalloc(2, sizeof(bwsc__value));
  c->args[0] = (bwsc__value){BWSC__VAL_INT, NULL, NULL, -123456789012LL, NULL};
  c->args[1] = (bwsc__value){BWSC__VAL_FUNC, bwsc__xstrdup("c:@F@cb"),
                             bwsc__xstrdup("cb"), 0, tu->records[0]};
  c->descs = bwsc__xcalloc(2, sizeof(bwsc__arg_desc));
  c->descs[1].key = bwsc__xstrdup("c:@F@work@fd");
  c->descs[1].bits = 04000;
  c->descs[1].flags = bwsc__xcalloc(1, sizeof(bwsc__arg_flags));
  *c->descs[1].flags = (bwsc__arg_flags){-0x801, 1, 0, 04000, 0x10};
  c->descs[0].key = bwsc__xstrdup("c:@F@make_pipe#1");
  c->descs[0].mask = 0x40;
  c->descs[0].text = bwsc__xstrdup("/proc/%lld/cmdline");
  c->descs[1].via = bwsc__xstrdup("*c:@F@work@data->c:@S@conn@FI@fd");
  c->result = bwsc__xstrdup("c:@F@work#0");
  c->ntests = 2;
  c->tests = bwsc__xcalloc(2, sizeof(bwsc__param_test));
  c->tests[0] = (bwsc__param_test){2, BWSC__TEST_SOME_BITS, 8, 32};
  c->tests[1] = (bwsc__param_test){63, BWSC__TEST_NE, -5, -64};
  c->cancelled = bwsc__xstrdup("c:@S@data@FI@c c:@S@data@FI@d");
  bwsc__flow_fact *fl = BWSC__PUSH(tu->flows, tu->nflows, tu->capflows);
  fl->slot = bwsc__xstrdup("c:@S@ops@FI@run");
  fl->value = (bwsc__value){BWSC__VAL_FUNC, bwsc__xstrdup("c:@F@cb"),
                            bwsc__xstrdup("cb"), 0, NULL};
  fl->in_fn = bwsc__xstrdup("c:@F@ops_class_init");
  fl->in_default = 1;
  bwsc__desc_flow *d =
      BWSC__PUSH(tu->desc_flows, tu->ndesc_flows, tu->capdesc_flows);
  d->to = bwsc__xstrdup("c:@S@ctx@FI@sock");
  d->alt = bwsc__xstrdup("c:@F@make_socket#ret");
  bwsc__suppress_fact *s =
      BWSC__PUSH(tu->suppress, tu->nsuppress, tu->capsuppress);
  s->file = bwsc__xstrdup("/src/a.c");
  s->line = 9;
  s->rule = bwsc__xstrdup("sleep");
  bwsc__diag_fact *g = BWSC__PUSH(tu->diags, tu->ndiags, tu->capdiags);
  g->loc = (bwsc__loc){NULL, 1, 2};
  g->message = bwsc__xstrdup("unknown type name 'x'");
  tu->failed = 1;
}

static void sample_deps(bwsc__deps *deps) {
  memset(deps, 0, sizeof(*deps));
  bwsc__dep *dep = BWSC__PUSH(deps->items, deps->count, deps->cap);
  dep->path = bwsc__xstrdup("/src/a.h");
  dep->hash = UINT64_C(0xfedcba9876543210);
}

static void test_round_trip_keeps_every_field(void **state) {
  (void)state;
  bwsc__tu_facts tu, back;
  bwsc__deps deps, back_deps;
  sample(&tu);
  sample_deps(&deps);
  size_t len = 0, len2 = 0;
  unsigned char *bytes = bwsc__facts_encode(&tu, &deps, 42, &len);
  const char *why = NULL;
  assert_int_equal(bwsc__facts_decode(bytes, len, 42, &back, &back_deps, &why),
                   0);
  /* Encoding what was decoded gives the same bytes: nothing was lost. */
  unsigned char *again = bwsc__facts_encode(&back, &back_deps, 42, &len2);
  assert_int_equal(len, len2);
  assert_memory_equal(bytes, again, len);
  /* And the fields are the ones written, spot-checked by value. */
  assert_string_equal(back.calls[0].callee.name, "ops->run");
  assert_int_equal(back.calls[0].loc.line, 4000000000u);
  assert_int_equal(back.calls[0].self, 1);
  assert_int_equal(back.calls[0].args[0].ival, -123456789012LL);
  assert_ptr_equal(back.calls[0].args[1].record, back.records[0]);
  assert_int_equal(back.calls[0].descs[0].mask, 0x40);
  assert_string_equal(back.calls[0].descs[0].text, "/proc/%lld/cmdline");
  assert_null(back.calls[0].descs[0].via);
  assert_string_equal(back.calls[0].cancelled, "c:@S@data@FI@c c:@S@data@FI@d");
  assert_string_equal(back.calls[0].descs[1].via,
                      "*c:@F@work@data->c:@S@conn@FI@fd");
  assert_int_equal(back.calls[0].descs[1].bits, 04000);
  assert_null(back.calls[0].descs[0].flags);
  assert_non_null(back.calls[0].descs[1].flags);
  assert_int_equal(back.calls[0].descs[1].flags->clear, -0x801);
  assert_int_equal(back.calls[0].descs[1].flags->param, 1);
  assert_int_equal(back.calls[0].descs[1].flags->eq_set, 04000);
  assert_int_equal(back.calls[0].descs[1].flags->ne_set, 0x10);
  assert_int_equal(back.calls[0].ntests, 2);
  assert_int_equal(back.calls[0].tests[0].param, 2);
  assert_int_equal(back.calls[0].tests[0].kind, BWSC__TEST_SOME_BITS);
  assert_int_equal(back.calls[0].tests[0].value, 8);
  assert_int_equal(back.calls[0].tests[1].param, 63);
  assert_int_equal(back.calls[0].tests[1].kind, BWSC__TEST_NE);
  assert_int_equal(back.calls[0].tests[1].value, -5);
  assert_int_equal(back.calls[0].tests[1].width, -64);
  assert_string_equal(back.flows[0].in_fn, "c:@F@ops_class_init");
  assert_int_equal(back.flows[0].in_default, 1);
  assert_null(back.desc_flows[0].from);
  assert_string_equal(back.desc_flows[0].alt, "c:@F@make_socket#ret");
  assert_null(back.diags[0].loc.file);
  assert_int_equal(back.funcs[0].nparams, 3);
  assert_int_equal(back.failed, 1);
  assert_int_equal(back_deps.items[0].hash, deps.items[0].hash);
  free(bytes);
  free(again);
  bwsc__facts_free(&tu);
  bwsc__facts_free(&back);
  bwsc__deps_free(&deps);
  bwsc__deps_free(&back_deps);
}

/* A flags' parameter index past a function's 64 is refused, not used. */
static void test_parameter_index_out_of_range_is_refused(void **state) {
  (void)state;
  bwsc__tu_facts tu, back;
  sample(&tu);
  tu.calls[0].descs[1].flags->param = 64;
  size_t len = 0;
  unsigned char *bytes = bwsc__facts_encode(&tu, NULL, 7, &len);
  const char *why = NULL;
  assert_int_equal(bwsc__facts_decode(bytes, len, 7, &back, NULL, &why), -1);
  assert_string_equal(why, "a parameter index is out of range");
  free(bytes);
  bwsc__facts_free(&tu);
}

/* A parameter test's index, kind or width out of range is refused. */
static void test_parameter_test_out_of_range_is_refused(void **state) {
  (void)state;
  for (int bad = 0; bad < 3; bad++) {
    bwsc__tu_facts tu, back;
    sample(&tu);
    if (bad == 0)
      tu.calls[0].tests[0].param = 64;
    else if (bad == 1)
      tu.calls[0].tests[0].kind = BWSC__TEST_NE + 1;
    else
      tu.calls[0].tests[0].width = 0;
    size_t len = 0;
    unsigned char *bytes = bwsc__facts_encode(&tu, NULL, 7, &len);
    const char *why = NULL;
    assert_int_equal(bwsc__facts_decode(bytes, len, 7, &back, NULL, &why), -1);
    assert_string_equal(why, "a parameter test is out of range");
    free(bytes);
    bwsc__facts_free(&tu);
  }
}

static void test_every_truncation_is_refused(void **state) {
  (void)state;
  bwsc__tu_facts tu, back;
  sample(&tu);
  size_t len = 0;
  unsigned char *bytes = bwsc__facts_encode(&tu, NULL, 7, &len);
  for (size_t cut = 0; cut < len; cut++) {
    const char *why = NULL;
    assert_int_equal(bwsc__facts_decode(bytes, cut, 7, &back, NULL, &why), -1);
    assert_non_null(why);
  }
  free(bytes);
  bwsc__facts_free(&tu);
}

static void test_every_flipped_bit_is_refused(void **state) {
  (void)state;
  bwsc__tu_facts tu, back;
  sample(&tu);
  size_t len = 0;
  unsigned char *bytes = bwsc__facts_encode(&tu, NULL, 7, &len);
  for (size_t bit = 0; bit < len * 8; bit++) {
    bytes[bit / 8] ^= (unsigned char)(1u << (bit % 8));
    const char *why = NULL;
    assert_int_equal(bwsc__facts_decode(bytes, len, 7, &back, NULL, &why), -1);
    assert_non_null(why);
    bytes[bit / 8] ^= (unsigned char)(1u << (bit % 8));
  }
  free(bytes);
  bwsc__facts_free(&tu);
}

static void test_file_of_another_key_or_format_is_refused(void **state) {
  (void)state;
  char path[] = "/tmp/blockscan-facts-XXXXXX";
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  close(fd);
  bwsc__tu_facts tu, back;
  sample(&tu);
  assert_int_equal(bwsc__facts_write(path, &tu, NULL, 5), 0);
  const char *why = NULL;
  assert_int_equal(bwsc__facts_read(path, 6, &back, NULL, &why), -1);
  assert_string_equal(why, "made for another translation unit or flags");
  assert_int_equal(bwsc__facts_read(path, 5, &back, NULL, &why), 0);
  assert_string_equal(back.file, "/src/a.c");
  bwsc__facts_free(&back);
  FILE *file = fopen(path, "r+b");
  assert_non_null(file);
  fseek(file, 8, SEEK_SET);
  fputc(BWSC__FACTS_FORMAT + 1, file);
  fclose(file);
  assert_int_equal(bwsc__facts_read(path, 5, &back, NULL, &why), -1);
  assert_string_equal(why, "written by another version of blockscan");
  unlink(path);
  assert_int_equal(bwsc__facts_read(path, 5, &back, NULL, &why), -1);
  assert_string_equal(why, "missing");
  bwsc__facts_free(&tu);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_round_trip_keeps_every_field),
      cmocka_unit_test(test_parameter_index_out_of_range_is_refused),
      cmocka_unit_test(test_parameter_test_out_of_range_is_refused),
      cmocka_unit_test(test_every_truncation_is_refused),
      cmocka_unit_test(test_every_flipped_bit_is_refused),
      cmocka_unit_test(test_file_of_another_key_or_format_is_refused),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
