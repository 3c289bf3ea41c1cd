/* facts_io.c - encoding and decoding one TU's facts (see facts_io.h).
 *
 * Invariants: encode and decode walk the fields in the same order, one
 * function per struct. The _Static_asserts below pin each struct's size,
 * so most fields added to facts.h stop the build here until they are
 * encoded; an int that fits into existing padding does not, and is caught
 * by the test that runs every fixture tree through the cache and facts
 * files and compares the report with the parse's.
 */
#include "facts_io.h"

#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#if UINTPTR_MAX == UINT64_MAX
/* A failing assert here means facts.h changed: encode and decode the new
 * field below, bump BWSC__FACTS_FORMAT, then update the size. */
_Static_assert(sizeof(bwsc__loc) == 16, "bwsc__loc changed");
_Static_assert(sizeof(bwsc__func_fact) == 40, "bwsc__func_fact changed");
_Static_assert(sizeof(bwsc__value) == 40, "bwsc__value changed");
_Static_assert(sizeof(bwsc__arg_desc) == 72, "bwsc__arg_desc changed");
_Static_assert(sizeof(bwsc__arg_flags) == 40, "bwsc__arg_flags changed");
_Static_assert(sizeof(bwsc__call_fact) == 144, "bwsc__call_fact changed");
_Static_assert(sizeof(bwsc__param_test) == 24, "bwsc__param_test changed");
_Static_assert(sizeof(bwsc__flow_fact) == 64, "bwsc__flow_fact changed");
_Static_assert(sizeof(bwsc__desc_flow) == 48, "bwsc__desc_flow changed");
_Static_assert(sizeof(bwsc__suppress_fact) == 24, "suppress_fact changed");
_Static_assert(sizeof(bwsc__diag_fact) == 24, "bwsc__diag_fact changed");
/* bwsc__tu_facts.interned says how the strings are held, not a fact: it is
 * not encoded (a decoded TU is interned). */
_Static_assert(sizeof(bwsc__tu_facts) == 192, "bwsc__tu_facts changed");
#endif

static const char magic[8] = {'B', 'W', 'F', 'A', 'C', 'T', 'S', '\n'};
/* magic, format (4 bytes), payload length (8), checksum (8), key (8) */
#define HEADER_SIZE 36

uint64_t bwsc__fnv1a_bytes(uint64_t hash, const void *data, size_t len) {
  const unsigned char *p = data;
  for (size_t i = 0; i < len; i++) {
    hash ^= p[i];
    hash *= UINT64_C(1099511628211);
  }
  return hash;
}

void bwsc__deps_free(bwsc__deps *deps) {
  for (size_t i = 0; i < deps->count; i++)
    free(deps->items[i].path);
  free(deps->items);
  memset(deps, 0, sizeof(*deps));
}

/* ---- encoding ------------------------------------------------------------ */

typedef struct buffer {
  unsigned char *data;
  size_t len, cap;
} buffer;

typedef struct encoder {
  buffer body;
  bwsc__strmap index; /* string -> 1 + position in strings */
  const char **strings;
  size_t nstrings, capstrings;
  const bwsc__tu_facts *facts;
} encoder;

static void put_bytes(buffer *buf, const void *data, size_t len) {
  bwsc__grow((void **)&buf->data, &buf->cap, buf->len + len, 1);
  memcpy(buf->data + buf->len, data, len);
  buf->len += len;
}

static void put_u(buffer *buf, uint64_t v) {
  unsigned char bytes[10];
  size_t n = 0;
  do {
    bytes[n] = (unsigned char)(v & 0x7f);
    v >>= 7;
    if (v)
      bytes[n] |= 0x80;
    n++;
  } while (v);
  put_bytes(buf, bytes, n);
}

/* Signed numbers zigzag-encoded, so small negatives stay short. */
static void put_i(buffer *buf, long long v) {
  put_u(buf, ((uint64_t)v << 1) ^ (uint64_t)(v < 0 ? -1 : 0));
}

static void put_le(unsigned char *at, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; i++)
    at[i] = (unsigned char)(v >> (8 * i));
}

/* A string as 1 + its index in the table; 0 is NULL. */
static void put_str(encoder *enc, const char *s) {
  if (!s) {
    put_u(&enc->body, 0);
    return;
  }
  size_t at;
  if (!bwsc__strmap_get(&enc->index, s, &at)) {
    *BWSC__PUSH(enc->strings, enc->nstrings, enc->capstrings) = s;
    at = enc->nstrings;
    bwsc__strmap_put(&enc->index, s, at);
  }
  put_u(&enc->body, at);
}

static void put_loc(encoder *enc, const bwsc__loc *loc) {
  put_str(enc, loc->file);
  put_u(&enc->body, loc->line);
  put_u(&enc->body, loc->col);
}

/* A value's record is one of facts->records: stored as 1 + its index. */
static void put_value(encoder *enc, const bwsc__value *value) {
  put_u(&enc->body, (uint64_t)value->kind);
  put_str(enc, value->ref);
  put_str(enc, value->name);
  put_i(&enc->body, value->ival);
  size_t record = 0;
  for (size_t r = 0; value->record && r < enc->facts->nrecords; r++) {
    if (enc->facts->records[r] == value->record ||
        strcmp(enc->facts->records[r], value->record) == 0) {
      record = r + 1;
      break;
    }
  }
  put_u(&enc->body, record);
}

static void put_func(encoder *enc, const bwsc__func_fact *func) {
  put_str(enc, func->usr);
  put_str(enc, func->name);
  put_loc(enc, &func->loc);
  put_u(&enc->body, (uint64_t)func->is_def);
  put_u(&enc->body, (uint64_t)func->is_static);
  put_u(&enc->body, (uint64_t)func->annotated);
  put_u(&enc->body, (uint64_t)func->noreturn);
  put_i(&enc->body, func->nparams);
}

static void put_call(encoder *enc, const bwsc__call_fact *call) {
  put_str(enc, call->caller);
  put_value(enc, &call->callee);
  put_loc(enc, &call->loc);
  put_u(&enc->body, (uint64_t)call->cold);
  put_u(&enc->body, (uint64_t)call->once);
  put_u(&enc->body, (uint64_t)call->forked);
  put_u(&enc->body, (uint64_t)call->spin);
  put_u(&enc->body, (uint64_t)call->self);
  put_u(&enc->body, call->nargs);
  for (size_t a = 0; a < call->nargs; a++)
    put_value(enc, &call->args[a]);
  put_u(&enc->body, call->descs != NULL);
  for (size_t a = 0; call->descs && a < call->nargs; a++) {
    put_str(enc, call->descs[a].key);
    put_i(&enc->body, call->descs[a].bits);
    put_u(&enc->body, (uint64_t)call->descs[a].plain);
    put_i(&enc->body, call->descs[a].mask);
    put_str(enc, call->descs[a].text);
    put_str(enc, call->descs[a].tested);
    put_str(enc, call->descs[a].points);
    put_str(enc, call->descs[a].via);
    const bwsc__arg_flags *flags = call->descs[a].flags;
    put_u(&enc->body, flags != NULL);
    if (flags) {
      put_i(&enc->body, flags->clear);
      put_i(&enc->body, flags->param);
      put_i(&enc->body, flags->value);
      put_i(&enc->body, flags->eq_set);
      put_i(&enc->body, flags->ne_set);
    }
  }
  put_str(enc, call->result);
  put_u(&enc->body, call->ntests);
  for (size_t t = 0; t < call->ntests; t++) {
    put_u(&enc->body, (uint64_t)call->tests[t].param);
    put_u(&enc->body, (uint64_t)call->tests[t].kind);
    put_i(&enc->body, call->tests[t].value);
    put_i(&enc->body, call->tests[t].width);
  }
  put_str(enc, call->cancelled);
}

static void encode_facts(encoder *enc, const bwsc__tu_facts *facts) {
  buffer *b = &enc->body;
  put_str(enc, facts->file);
  put_u(b, (uint64_t)facts->failed);
  put_u(b, facts->nrecords);
  for (size_t i = 0; i < facts->nrecords; i++)
    put_str(enc, facts->records[i]);
  put_u(b, facts->nfuncs);
  for (size_t i = 0; i < facts->nfuncs; i++)
    put_func(enc, &facts->funcs[i]);
  put_u(b, facts->ncalls);
  for (size_t i = 0; i < facts->ncalls; i++)
    put_call(enc, &facts->calls[i]);
  put_u(b, facts->nflows);
  for (size_t i = 0; i < facts->nflows; i++) {
    put_str(enc, facts->flows[i].slot);
    put_value(enc, &facts->flows[i].value);
    put_str(enc, facts->flows[i].in_fn);
    put_u(b, (uint64_t)facts->flows[i].in_default);
  }
  put_u(b, facts->ndesc_flows);
  for (size_t i = 0; i < facts->ndesc_flows; i++) {
    const bwsc__desc_flow *d = &facts->desc_flows[i];
    put_str(enc, d->to);
    put_str(enc, d->from);
    put_str(enc, d->alt);
    put_u(b, (uint64_t)d->is_const);
    put_i(b, d->ival);
    put_u(b, (uint64_t)d->local);
    put_u(b, (uint64_t)d->addr);
  }
  put_u(b, facts->nsuppress);
  for (size_t i = 0; i < facts->nsuppress; i++) {
    put_str(enc, facts->suppress[i].file);
    put_u(b, facts->suppress[i].line);
    put_str(enc, facts->suppress[i].rule);
  }
  put_u(b, facts->ndiags);
  for (size_t i = 0; i < facts->ndiags; i++) {
    put_loc(enc, &facts->diags[i].loc);
    put_str(enc, facts->diags[i].message);
  }
}

unsigned char *bwsc__facts_encode(const bwsc__tu_facts *facts,
                                  const bwsc__deps *deps, uint64_t key,
                                  size_t *len) {
  encoder enc;
  memset(&enc, 0, sizeof(enc));
  enc.facts = facts;
  size_t ndeps = deps ? deps->count : 0;
  put_u(&enc.body, ndeps);
  for (size_t i = 0; i < ndeps; i++) {
    put_str(&enc, deps->items[i].path);
    put_u(&enc.body, deps->items[i].hash);
  }
  encode_facts(&enc, facts);

  /* The payload: the string table, then the body that refers to it. */
  buffer out = {0};
  unsigned char header[HEADER_SIZE] = {0};
  put_bytes(&out, header, sizeof(header));
  put_u(&out, enc.nstrings);
  for (size_t i = 0; i < enc.nstrings; i++) {
    size_t n = strlen(enc.strings[i]);
    put_u(&out, n);
    put_bytes(&out, enc.strings[i], n);
  }
  put_bytes(&out, enc.body.data, enc.body.len);
  size_t payload = out.len - HEADER_SIZE;
  memcpy(out.data, magic, sizeof(magic));
  put_le(out.data + 8, BWSC__FACTS_FORMAT, 4);
  put_le(out.data + 12, payload, 8);
  put_le(out.data + 20,
         bwsc__fnv1a_bytes(BWSC__FNV_INIT, out.data + HEADER_SIZE, payload), 8);
  put_le(out.data + 28, key, 8);
  free(enc.body.data);
  free((void *)enc.strings);
  bwsc__strmap_free(&enc.index);
  *len = out.len;
  return out.data;
}

/* ---- decoding ------------------------------------------------------------ */

/* The string table is interned as it is read, and the facts point into
 * the intern table: no copy of a string per use that a later
 * bwsc__facts_intern would free again (malloc's free lists, riddled with
 * millions of small holes, made the analysis slower and the peak higher). */
typedef struct decoder {
  const unsigned char *at, *end;
  const char **strings; /* interned */
  size_t nstrings;
  const char *why; /* first problem met, NULL while all is well */
  bwsc__tu_facts *facts;
} decoder;

static int fail(decoder *dec, const char *why) {
  if (!dec->why)
    dec->why = why;
  dec->at = dec->end; /* every later read fails fast */
  return 0;
}

static uint64_t get_u(decoder *dec) {
  uint64_t v = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    if (dec->at >= dec->end)
      return fail(dec, "truncated");
    unsigned char byte = *dec->at++;
    v |= (uint64_t)(byte & 0x7f) << shift;
    if (!(byte & 0x80))
      return v;
  }
  return fail(dec, "a number is too long");
}

static long long get_i(decoder *dec) {
  uint64_t z = get_u(dec);
  return (long long)(z >> 1) ^ -(long long)(z & 1);
}

static unsigned get_small(decoder *dec) {
  uint64_t v = get_u(dec);
  if (v > 0xffffffffu)
    return fail(dec, "a number is out of range");
  return (unsigned)v;
}

/* A count of elements that take at least one byte each: more than the
 * bytes left is a corrupt file, not a reason to allocate. */
static size_t get_count(decoder *dec) {
  uint64_t n = get_u(dec);
  if (n > (uint64_t)(dec->end - dec->at))
    return fail(dec, "a count is larger than the file");
  return (size_t)n;
}

static char *get_str(decoder *dec) {
  uint64_t at = get_u(dec);
  if (at == 0)
    return NULL;
  if (at > dec->nstrings) {
    fail(dec, "a string index is out of range");
    return NULL;
  }
  return (char *)dec->strings[at - 1];
}

static void get_loc(decoder *dec, bwsc__loc *loc) {
  loc->file = get_str(dec);
  loc->line = get_small(dec);
  loc->col = get_small(dec);
}

static void get_value(decoder *dec, bwsc__value *value) {
  uint64_t kind = get_u(dec);
  if (kind > BWSC__VAL_INT)
    fail(dec, "a value kind is unknown");
  value->kind = (bwsc__value_kind)kind;
  value->ref = get_str(dec);
  value->name = get_str(dec);
  value->ival = get_i(dec);
  uint64_t record = get_u(dec);
  if (record > dec->facts->nrecords)
    fail(dec, "a record index is out of range");
  else if (record)
    value->record = dec->facts->records[record - 1];
}

static void get_func(decoder *dec, bwsc__func_fact *func) {
  func->usr = get_str(dec);
  func->name = get_str(dec);
  get_loc(dec, &func->loc);
  func->is_def = get_small(dec) != 0;
  func->is_static = get_small(dec) != 0;
  func->annotated = get_small(dec) != 0;
  func->noreturn = get_small(dec) != 0;
  func->nparams = (int)get_i(dec);
}

/* A parameter index past a function's 64 tracked ones is corrupt. */
static bwsc__arg_flags *get_flags(decoder *dec) {
  bwsc__arg_flags *flags = bwsc__xcalloc(1, sizeof(*flags));
  flags->clear = get_i(dec);
  long long param = get_i(dec);
  flags->value = get_i(dec);
  flags->eq_set = get_i(dec);
  flags->ne_set = get_i(dec);
  if (param < -1 || param > 63)
    fail(dec, "a parameter index is out of range");
  flags->param = param < -1 || param > 63 ? -1 : (int)param;
  return flags;
}

static void get_call(decoder *dec, bwsc__call_fact *call) {
  call->caller = get_str(dec);
  get_value(dec, &call->callee);
  get_loc(dec, &call->loc);
  call->cold = (int)get_small(dec);
  call->once = (int)get_small(dec);
  call->forked = (int)get_small(dec);
  call->spin = (int)get_small(dec);
  call->self = get_u(dec) != 0;
  size_t nargs = get_count(dec);
  call->args = bwsc__xcalloc(nargs, sizeof(bwsc__value));
  for (; call->nargs < nargs; call->nargs++)
    get_value(dec, &call->args[call->nargs]);
  if (get_u(dec)) {
    call->descs = bwsc__xcalloc(nargs, sizeof(bwsc__arg_desc));
    for (size_t a = 0; a < nargs; a++) {
      call->descs[a].key = get_str(dec);
      call->descs[a].bits = get_i(dec);
      call->descs[a].plain = (int)get_small(dec);
      call->descs[a].mask = get_i(dec);
      call->descs[a].text = get_str(dec);
      call->descs[a].tested = get_str(dec);
      call->descs[a].points = get_str(dec);
      call->descs[a].via = get_str(dec);
      if (get_u(dec))
        call->descs[a].flags = get_flags(dec);
    }
  }
  call->result = get_str(dec);
  size_t ntests = get_count(dec);
  if (ntests > BWSC__CALL_TESTS_MAX) {
    fail(dec, "a call has too many parameter tests");
    return;
  }
  if (ntests)
    call->tests = bwsc__xcalloc(ntests, sizeof(bwsc__param_test));
  for (; call->ntests < ntests; call->ntests++) {
    bwsc__param_test *test = &call->tests[call->ntests];
    uint64_t param = get_u(dec), kind = get_u(dec);
    test->value = get_i(dec);
    long long width = get_i(dec);
    if (param > 63 || kind < BWSC__TEST_SOME_BITS || kind > BWSC__TEST_NE ||
        width < -64 || width > 64 || width == 0 || width == -1)
      fail(dec, "a parameter test is out of range");
    test->width = width < -64 || width > 64 || width == 0 || width == -1
                      ? 64
                      : (int)width;
    test->param = param > 63 ? 0 : (int)param;
    test->kind = kind < BWSC__TEST_SOME_BITS || kind > BWSC__TEST_NE
                     ? BWSC__TEST_SOME_BITS
                     : (int)kind;
  }
  call->cancelled = get_str(dec);
}

/* Allocates `count` zeroed elements for one of the facts' arrays. */
#define GET_ARRAY(dec, items, count, cap)                                      \
  do {                                                                         \
    (count) = get_count(dec);                                                  \
    (cap) = (count);                                                           \
    (items) = bwsc__xcalloc((count), sizeof(*(items)));                        \
  } while (0)

static void decode_facts(decoder *dec, bwsc__tu_facts *facts) {
  facts->file = get_str(dec);
  facts->failed = (int)get_small(dec);
  GET_ARRAY(dec, facts->records, facts->nrecords, facts->caprecords);
  for (size_t i = 0; i < facts->nrecords; i++)
    if (!(facts->records[i] = get_str(dec)))
      facts->records[i] = (char *)bwsc__intern("");
  GET_ARRAY(dec, facts->funcs, facts->nfuncs, facts->capfuncs);
  for (size_t i = 0; i < facts->nfuncs; i++)
    get_func(dec, &facts->funcs[i]);
  GET_ARRAY(dec, facts->calls, facts->ncalls, facts->capcalls);
  for (size_t i = 0; i < facts->ncalls; i++)
    get_call(dec, &facts->calls[i]);
  GET_ARRAY(dec, facts->flows, facts->nflows, facts->capflows);
  for (size_t i = 0; i < facts->nflows; i++) {
    facts->flows[i].slot = get_str(dec);
    get_value(dec, &facts->flows[i].value);
    facts->flows[i].in_fn = get_str(dec);
    facts->flows[i].in_default = get_u(dec) != 0;
  }
  GET_ARRAY(dec, facts->desc_flows, facts->ndesc_flows, facts->capdesc_flows);
  for (size_t i = 0; i < facts->ndesc_flows; i++) {
    bwsc__desc_flow *d = &facts->desc_flows[i];
    d->to = get_str(dec);
    d->from = get_str(dec);
    d->alt = get_str(dec);
    d->is_const = (int)get_small(dec);
    d->ival = get_i(dec);
    d->local = (int)get_small(dec);
    d->addr = (int)get_small(dec);
  }
  GET_ARRAY(dec, facts->suppress, facts->nsuppress, facts->capsuppress);
  for (size_t i = 0; i < facts->nsuppress; i++) {
    facts->suppress[i].file = get_str(dec);
    facts->suppress[i].line = get_small(dec);
    facts->suppress[i].rule = get_str(dec);
  }
  GET_ARRAY(dec, facts->diags, facts->ndiags, facts->capdiags);
  for (size_t i = 0; i < facts->ndiags; i++) {
    get_loc(dec, &facts->diags[i].loc);
    facts->diags[i].message = get_str(dec);
  }
}

static uint64_t get_le(const unsigned char *at, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; i++)
    v |= (uint64_t)at[i] << (8 * i);
  return v;
}

/* Checks the header; returns the payload length or sets *why. */
static int check_header(const unsigned char *buf, size_t len, uint64_t key,
                        const char **why) {
  size_t head = len < sizeof(magic) ? len : sizeof(magic);
  if (memcmp(buf, magic, head) != 0)
    *why = "not a facts file";
  else if (len < HEADER_SIZE)
    *why = "truncated";
  else if (get_le(buf + 8, 4) != BWSC__FACTS_FORMAT)
    *why = "written by another version of blockscan";
  else if (get_le(buf + 12, 8) != len - HEADER_SIZE)
    *why = "truncated";
  else if (get_le(buf + 20, 8) != bwsc__fnv1a_bytes(BWSC__FNV_INIT,
                                                    buf + HEADER_SIZE,
                                                    len - HEADER_SIZE))
    *why = "bad checksum";
  else if (get_le(buf + 28, 8) != key)
    *why = "made for another translation unit or flags";
  else
    return 0;
  return -1;
}

int bwsc__facts_decode(const unsigned char *buf, size_t len, uint64_t key,
                       bwsc__tu_facts *facts, bwsc__deps *deps,
                       const char **why) {
  if (check_header(buf, len, key, why) != 0)
    return -1;
  decoder dec = {buf + HEADER_SIZE, buf + len, NULL, 0, NULL, NULL};
  size_t nstrings = get_count(&dec);
  dec.strings = bwsc__xcalloc(nstrings, sizeof(char *));
  char *text = NULL; /* one string's bytes and a NUL, to intern */
  size_t captext = 0;
  for (; dec.nstrings < nstrings && !dec.why; dec.nstrings++) {
    size_t n = get_count(&dec);
    if (dec.why)
      break;
    bwsc__grow((void **)&text, &captext, n + 1, 1);
    memcpy(text, dec.at, n);
    text[n] = '\0';
    dec.at += n;
    dec.strings[dec.nstrings] = bwsc__intern(text);
  }
  free(text);
  bwsc__deps got_deps = {0};
  bwsc__tu_facts got = {0};
  got.interned = 1;
  dec.facts = &got;
  size_t ndeps = get_count(&dec);
  got_deps.items = bwsc__xcalloc(ndeps, sizeof(bwsc__dep));
  got_deps.cap = ndeps;
  for (; got_deps.count < ndeps; got_deps.count++) {
    const char *path = get_str(&dec); /* deps own their paths */
    got_deps.items[got_deps.count].path = path ? bwsc__xstrdup(path) : NULL;
    got_deps.items[got_deps.count].hash = get_u(&dec);
  }
  decode_facts(&dec, &got);
  if (!dec.why && dec.at != dec.end)
    fail(&dec, "extra bytes after the facts");
  free((void *)dec.strings);
  if (dec.why) {
    *why = dec.why;
    bwsc__facts_free(&got);
    bwsc__deps_free(&got_deps);
    return -1;
  }
  if (facts)
    *facts = got;
  else
    bwsc__facts_free(&got);
  if (deps)
    *deps = got_deps;
  else
    bwsc__deps_free(&got_deps);
  return 0;
}

/* ---- files --------------------------------------------------------------- */

/* Reads or writes all `len` bytes, short only at an error or end of file;
 * returns how many moved. */
static size_t transfer(int fd, unsigned char *data, size_t len, int writing) {
  size_t done = 0;
  while (done < len) {
    ssize_t n = writing ? write(fd, data + done, len - done)
                        : read(fd, data + done, len - done);
    if (n <= 0)
      break;
    done += (size_t)n;
  }
  return done;
}

int bwsc__facts_write(const char *path, const bwsc__tu_facts *facts,
                      const bwsc__deps *deps, uint64_t key) {
  size_t len = 0;
  unsigned char *data = bwsc__facts_encode(facts, deps, key, &len);
  char *tmp = bwsc__xasprintf("%s.tmp.XXXXXX", path);
  int fd = mkstemp(tmp);
  int rc = -1;
  if (fd >= 0) {
    size_t done = transfer(fd, data, len, 1);
    /* mkstemp makes the file 0600; facts are as readable as sources. */
    int ok = done == len && fchmod(fd, 0644) == 0;
    ok = close(fd) == 0 && ok;
    rc = ok && rename(tmp, path) == 0 ? 0 : -1;
    if (rc != 0) {
      int saved = errno;
      unlink(tmp);
      errno = saved;
    }
  }
  free(tmp);
  free(data);
  return rc;
}

int bwsc__facts_read(const char *path, uint64_t key, bwsc__tu_facts *facts,
                     bwsc__deps *deps, const char **why) {
  int fd = open(path, O_RDONLY);
  if (fd < 0) {
    *why = errno == ENOENT ? "missing" : "cannot be read";
    return -1;
  }
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    close(fd);
    *why = "cannot be read";
    return -1;
  }
  size_t size = (size_t)st.st_size;
  unsigned char *data = bwsc__xmalloc(size);
  size_t got = transfer(fd, data, size, 0);
  close(fd);
  int rc = bwsc__facts_decode(data, got, key, facts, deps, why);
  free(data);
  return rc;
}
