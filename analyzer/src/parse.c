/* parse.c - libclang visitor that extracts TU facts (see facts.h).
 *
 * Invariants: every CXString is disposed right where it is read (via
 * take_string); declarations in system headers are never visited, which
 * keeps the walk proportional to the user's own code; the context's
 * func_usr is the USR of the function definition being walked, or NULL at
 * file scope.
 */
#include "parse.h"

#include "parse_clang.h"
#include "parse_fork.h"
#include "parse_guard.h"
#include "parse_ready.h"
#include "parse_once.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef BLOCKSCAN_RESOURCE_DIR
#define BLOCKSCAN_RESOURCE_DIR ""
#endif

#define ANNOTATION "blockwatch::pool_callback"

struct bwsc__parser {
  CXIndex index;
};

/* Child branches of fork() remembered per function; more are not marked. */
#define MAX_FORKS 16
/* Equality guards remembered per function; more are not used. */
#define MAX_GUARDS 16
#define MAX_TEST_REGIONS 64

typedef struct visit_ctx {
  bwsc__tu_facts *facts;
  CXTranslationUnit tu;
  char *func_usr;             /* enclosing definition, NULL at file scope */
  CXCursor func;              /* its cursor */
  size_t func_index;          /* its entry in facts->funcs */
  bwsc__strmap func_by_usr;   /* USR -> index in facts->funcs */
  bwsc__strmap scanned;       /* files already scanned for suppressions */
  bwsc__strmap record_by_usr; /* struct USR -> 1 + index in facts->records
                                 when it has code fields, else 0 */
  CXCursor result_call;       /* a call whose result is stored in... */
  char *result_desc;          /* ...this descriptor key (owned) */
  CXCursor spin_call;         /* the body of a polling loop, when set */
  int has_spin_call;
  CXSourceRange once; /* a once-only initialisation (parse_once.h) */
  CXSourceRange forks[MAX_FORKS]; /* a forked child's branches (parse_fork.h) */
  int nforks;                     /* in the current function */
  bwsc__guard guards[MAX_GUARDS]; /* equality guards (parse_guard.h)... */
  char *guard_keys[MAX_GUARDS];   /* ...and the slot each names (owned) */
  int nguards;                    /* in the current function */
  /* branches that pass tests of the function's parameters, outer first */
  bwsc__test_region test_regions[MAX_TEST_REGIONS];
  int ntest_regions;                               /* in the current function */
  bwsc__ready_test readies[BWSC__READY_MAX_TESTS]; /* parse_ready.h */
  int nreadies;                                    /* in the function */
  int cancels;         /* the function calls g_cancellable_cancel: 0 not asked,
                          1 no, 2 yes (parse_cancel.c) */
  char **scanned_keys; /* owned keys of `scanned` */
  size_t nscanned, capscanned;
} visit_ctx;

static char *file_name(CXFile file) {
  if (!file)
    return NULL;
  char *name = take_string(clang_File_tryGetRealPathName(file));
  if (!*name) {
    free(name);
    name = take_string(clang_getFileName(file));
  }
  return name;
}

/* Records the suppression comments of `file` once per TU. */
static void scan_file_once(visit_ctx *ctx, CXFile file, const char *name) {
  if (bwsc__strmap_get(&ctx->scanned, name, NULL))
    return;
  char **key = BWSC__PUSH(ctx->scanned_keys, ctx->nscanned, ctx->capscanned);
  *key = bwsc__xstrdup(name);
  bwsc__strmap_put(&ctx->scanned, *key, 1);
  size_t size = 0;
  const char *text = clang_getFileContents(ctx->tu, file, &size);
  if (text)
    bwsc__facts_scan_suppressions(ctx->facts, name, text, size);
}

/* The expansion location of a cursor: macro uses, not macro bodies. */
static void cursor_loc(visit_ctx *ctx, CXCursor cursor, bwsc__loc *out,
                       int scan) {
  CXFile file = NULL;
  clang_getExpansionLocation(clang_getCursorLocation(cursor), &file, &out->line,
                             &out->col, NULL);
  out->file = file_name(file);
  if (scan && out->file)
    scan_file_once(ctx, file, out->file);
}

static int in_system_header(CXCursor cursor) {
  return clang_Location_isInSystemHeader(clang_getCursorLocation(cursor));
}

/* ---- peeling expressions ---------------------------------------------- */

/* Finds the n-th expression child. */
typedef struct nth_expr {
  int n;
  int *seen;
  CXCursor *out;
} nth_expr;

static enum CXChildVisitResult
nth_expr_visitor(CXCursor cursor, CXCursor parent, CXClientData data) {
  (void)parent;
  nth_expr *want = data;
  if (!clang_isExpression(clang_getCursorKind(cursor)))
    return CXChildVisit_Continue;
  if ((*want->seen)++ == want->n) {
    *want->out = cursor;
    return CXChildVisit_Break;
  }
  return CXChildVisit_Continue;
}

static void add_flow(visit_ctx *ctx, const char *slot, bwsc__value *value);
static void value_of(visit_ctx *ctx, CXCursor expr, bwsc__value *out);

static int is_function_pointer(CXType type) {
  type = clang_getCanonicalType(type);
  if (type.kind != CXType_Pointer)
    return 0;
  CXType pointee = clang_getCanonicalType(clang_getPointeeType(type));
  return pointee.kind == CXType_FunctionProto ||
         pointee.kind == CXType_FunctionNoProto;
}

/* A function pointer, or an array of them (a handler table): the only
 * variables, fields and parameters that can hold a callback. Tracking
 * nothing else keeps the facts small. */
static int may_hold_code(CXType type) {
  type = clang_getCanonicalType(type);
  while (type.kind == CXType_ConstantArray ||
         type.kind == CXType_IncompleteArray ||
         type.kind == CXType_VariableArray)
    type = clang_getCanonicalType(clang_getArrayElementType(type));
  return is_function_pointer(type);
}

/* `c ? f : g` may be either function: it becomes a slot of its own, named
 * by its place, that both branches flow into. */
static void conditional_value(visit_ctx *ctx, CXCursor cond, bwsc__value *out) {
  child_pick pick = bwsc__pick_children(cond);
  if (pick.nexpr != 3)
    return;
  CXFile file = NULL;
  unsigned offset = 0;
  clang_getSpellingLocation(clang_getCursorLocation(cond), &file, NULL, NULL,
                            &offset);
  char *name = file_name(file);
  char *slot = bwsc__xasprintf("?:%s@%u", name ? name : "", offset);
  free(name);
  /* The middle child is the true branch: visit the children again to get
   * it (pick only kept the first and last). */
  bwsc__value branch;
  value_of(ctx, pick.last, &branch);
  add_flow(ctx, slot, &branch);
  int index = 0;
  CXCursor middle = clang_getNullCursor();
  nth_expr want = {1, &index, &middle};
  clang_visitChildren(cond, nth_expr_visitor, &want);
  if (!clang_Cursor_isNull(middle)) {
    value_of(ctx, middle, &branch);
    add_flow(ctx, slot, &branch);
  }
  out->kind = BWSC__VAL_SLOT;
  out->ref = slot;
  out->name = bwsc__xstrdup("?:");
}

/* Describes what expression `expr` denotes. */
static void value_of(visit_ctx *ctx, CXCursor expr, bwsc__value *out) {
  memset(out, 0, sizeof(*out));
  CXCursor peeled = bwsc__peel(expr);
  enum CXCursorKind kind = clang_getCursorKind(peeled);
  if (kind == CXCursor_ConditionalOperator) {
    conditional_value(ctx, peeled, out);
    return;
  }
  if (kind == CXCursor_CallExpr && may_hold_code(clang_getCursorType(peeled))) {
    /* A function returning a callback: its return slot, "<USR>#ret". */
    CXCursor callee = clang_getCursorReferenced(peeled);
    if (is_function_kind(clang_getCursorKind(callee))) {
      char *usr = take_string(clang_getCursorUSR(callee));
      out->kind = BWSC__VAL_SLOT;
      out->ref = bwsc__xasprintf("%s#ret", usr);
      out->name = take_string(clang_getCursorSpelling(callee));
      free(usr);
      return;
    }
  }
  if (kind == CXCursor_DeclRefExpr || kind == CXCursor_MemberRefExpr) {
    CXCursor ref = clang_getCursorReferenced(peeled);
    enum CXCursorKind ref_kind = clang_getCursorKind(ref);
    if (is_function_kind(ref_kind)) {
      out->kind = BWSC__VAL_FUNC;
      out->ref = take_string(clang_getCursorUSR(ref));
    } else if (!may_hold_code(clang_getCursorType(ref))) {
      /* An int, a struct, a void *: not a slot worth tracking. */
    } else if (ref_kind == CXCursor_VarDecl || ref_kind == CXCursor_FieldDecl) {
      out->kind = BWSC__VAL_SLOT;
      out->ref = take_string(clang_getCursorUSR(ref));
    } else if (ref_kind == CXCursor_ParmDecl) {
      out->ref = bwsc__param_slot(ref);
      out->kind = out->ref ? BWSC__VAL_SLOT : BWSC__VAL_OTHER;
    }
    if (out->kind != BWSC__VAL_OTHER) {
      out->name = take_string(clang_getCursorSpelling(ref));
      return;
    }
  }
  if (bwsc__maybe_constant(peeled) && bwsc__eval_int(expr, &out->ival))
    out->kind = BWSC__VAL_INT;
}

/* An argument that names an integer slot, ORs in or masks flags. */
/* For an argument that is a guard's variable itself (through casts), in
 * the branch where it equals one of the guard's slots: the innermost such
 * guard's slot key (a copy); else NULL. */
static char *guarded_key(visit_ctx *ctx, CXCursor arg) {
  CXCursor e = bwsc__strip_casts(arg);
  if (!ctx->nguards || clang_getCursorKind(e) != CXCursor_DeclRefExpr)
    return NULL;
  CXCursor ref = clang_getCursorReferenced(e);
  for (int i = ctx->nguards - 1; i >= 0; i--)
    if (bwsc__guard_names(&ctx->guards[i], ref) &&
        bwsc__once_covers(ctx->guards[i].then, arg))
      return bwsc__xstrdup(ctx->guard_keys[i]);
  return NULL;
}

static int arg_desc(visit_ctx *ctx, CXCursor arg, const bwsc__value *value,
                    bwsc__arg_desc *out) {
  CXCursor peeled = bwsc__peel(arg);
  enum CXCursorKind kind = clang_getCursorKind(peeled);
  if (kind == CXCursor_DeclRefExpr || kind == CXCursor_MemberRefExpr) {
    out->key = guarded_key(ctx, arg);
    if (out->key) {
      out->plain = 1;
      out->text = bwsc__known_text(ctx->tu, ctx->func, arg);
      return 1;
    }
    out->key = bwsc__desc_key(clang_getCursorReferenced(peeled));
    out->via = bwsc__via_key(peeled, out->key);
    out->plain = bwsc__is_plain_ref(arg);
    if (out->key && out->plain)
      bwsc__arg_flags_of(ctx->tu, ctx->func, arg, &out->bits, &out->flags);
  } else if (kind == CXCursor_BinaryOperator && value->kind != BWSC__VAL_INT)
    bwsc__binop_desc(ctx->tu, peeled, out);
  out->text = bwsc__known_text(ctx->tu, ctx->func, arg);
  out->points = bwsc__points_key(arg);
  return out->key || out->bits || out->text || out->points;
}

static int holds_function(const bwsc__value *value) {
  return value->kind == BWSC__VAL_FUNC || value->kind == BWSC__VAL_SLOT;
}

static int ends_with(const char *s, const char *end) {
  size_t n = strlen(s), m = strlen(end);
  return n >= m && strcmp(s + n - m, end) == 0;
}

/* Lower-cased letters and digits of s[0..n), the rest left out. */
static void squeeze(const char *s, size_t n, char *out, size_t size) {
  size_t k = 0;
  for (size_t i = 0; i < n && s[i] && k + 1 < size; i++)
    if (isalnum((unsigned char)s[i]))
      out[k++] = (char)tolower((unsigned char)s[i]);
  out[k] = '\0';
}

/* Is a store into field `slot` (a field's USR: "...@S@<record>@FI@name")
 * a default method of a GObject type? GObject names a type's functions
 * after it: G_DEFINE_INTERFACE (GNetworkMonitor, g_network_monitor, ...)
 * fills `struct _GNetworkMonitorInterface` in g_network_monitor_default_init,
 * and GSettingsBackend's own g_settings_backend_class_init fills
 * `struct _GSettingsBackendClass`. An implementation's iface_init, or a
 * subclass's class_init (even one whose class struct is a typedef of its
 * parent's), is named after another type. */
static int is_default_store(visit_ctx *ctx, const char *slot) {
  const char *at = strstr(slot, "@FI@");
  if (!ctx->func_usr || !at)
    return 0;
  const char *rec = NULL;
  for (const char *p = slot; (p = strstr(p, "@S")) && p < at; p++)
    rec = p;
  if (!rec)
    return 0;
  rec = strchr(rec + 2, '@');
  if (!rec || rec >= at)
    return 0;
  rec++;
  size_t len = (size_t)(at - rec);
  if (len && rec[0] == '_')
    rec++, len--;
  static const char *const kinds[] = {"Interface", "Iface", "Class"};
  int kind = 0;
  for (size_t k = 0; k < 3 && !kind; k++) {
    size_t m = strlen(kinds[k]);
    if (len > m && strncmp(rec + len - m, kinds[k], m) == 0) {
      len -= m;
      kind = 1;
    }
  }
  char *name = take_string(clang_getCursorSpelling(ctx->func));
  size_t n = strlen(name);
  const char *init = ends_with(name, "_default_init") ? "_default_init"
                     : ends_with(name, "_class_init") ? "_class_init"
                                                      : NULL;
  int found = 0;
  if (kind && init) {
    char type[256], prefix[256];
    squeeze(rec, len, type, sizeof(type));
    squeeze(name, n - strlen(init), prefix, sizeof(prefix));
    found = *type && strcmp(type, prefix) == 0;
  }
  free(name);
  return found;
}

/* Records "slot may hold value" when value names a function or slot;
 * takes ownership of value's strings. */
static void add_flow(visit_ctx *ctx, const char *slot, bwsc__value *value) {
  if (!slot || !*slot || !holds_function(value)) {
    bwsc__value_free(value);
    return;
  }
  bwsc__flow_fact *flow =
      BWSC__PUSH(ctx->facts->flows, ctx->facts->nflows, ctx->facts->capflows);
  flow->slot = bwsc__xstrdup(slot);
  flow->value = *value;
  flow->in_fn = ctx->func_usr ? bwsc__xstrdup(ctx->func_usr) : NULL;
  flow->in_default = is_default_store(ctx, slot);
}

/* ---- what a reader sees: callee text, cold macros, records --------------- */

/* Is `call` written in the body of a cold macro? A call in the body has
 * its file location at the macro's use (where the macro name is written);
 * a call in an argument has it at the argument, so it is not cold. */
static int in_cold_macro(visit_ctx *ctx, CXCursor call) {
  CXSourceLocation loc = clang_getCursorLocation(call);
  CXFile efile = NULL, ffile = NULL;
  unsigned eoff = 0, foff = 0;
  clang_getExpansionLocation(loc, &efile, NULL, NULL, &eoff);
  clang_getFileLocation(loc, &ffile, NULL, NULL, &foff);
  if (!efile || !ffile || eoff != foff || !clang_File_isEqual(efile, ffile))
    return 0;
  size_t size = 0;
  const char *text = clang_getFileContents(ctx->tu, efile, &size);
  return text && bwsc__facts_cold_macro_at(text, size, eoff);
}

static enum CXVisitorResult code_field_visitor(CXCursor field,
                                               CXClientData data) {
  if (!may_hold_code(clang_getCursorType(field)))
    return CXVisit_Continue;
  *(int *)data = 1;
  return CXVisit_Break;
}

/* The struct an argument is or points to, when it has function-pointer
 * fields (the options of a BW_CALLBACK_FIELD entry); else NULL. Interned
 * per TU, so each struct costs one string. */
static const char *arg_record(visit_ctx *ctx, CXCursor arg) {
  CXType type = clang_getCanonicalType(clang_getCursorType(arg));
  if (type.kind == CXType_Pointer)
    type = clang_getCanonicalType(clang_getPointeeType(type));
  if (type.kind != CXType_Record)
    return NULL;
  char *usr = take_string(clang_getCursorUSR(clang_getTypeDeclaration(type)));
  size_t value;
  if (bwsc__strmap_get(&ctx->record_by_usr, usr, &value)) {
    free(usr);
  } else {
    int code = 0;
    clang_Type_visitFields(type, code_field_visitor, &code);
    bwsc__tu_facts *facts = ctx->facts;
    *BWSC__PUSH(facts->records, facts->nrecords, facts->caprecords) = usr;
    value = code ? facts->nrecords : 0;
    bwsc__strmap_put(&ctx->record_by_usr, usr, value);
  }
  return value ? ctx->facts->records[value - 1] : NULL;
}

/* `_Noreturn` is an attribute cursor of its own; __attribute__((noreturn))
 * is part of the function's type. */
static int noreturn_type(CXCursor fn) {
  char *type = take_string(clang_getTypeSpelling(clang_getCursorType(fn)));
  static const char suffix[] = "__attribute__((noreturn))";
  size_t len = strlen(type), slen = sizeof(suffix) - 1;
  int yes = len >= slen && strcmp(type + len - slen, suffix) == 0;
  free(type);
  return yes;
}

static int is_noreturn_attr(CXTranslationUnit tu, CXCursor attr) {
  char *text = bwsc__source_text(tu, attr);
  int yes = text && strcmp(text, "_Noreturn") == 0;
  free(text);
  return yes;
}

/* ---- the facts of each construct ---------------------------------------- */

static void record_function(visit_ctx *ctx, CXCursor cursor) {
  char *usr = take_string(clang_getCursorUSR(cursor));
  int is_def = clang_isCursorDefinition(cursor);
  size_t index;
  bwsc__func_fact *fact;
  int noreturn = noreturn_type(cursor);
  if (bwsc__strmap_get(&ctx->func_by_usr, usr, &index)) {
    fact = &ctx->facts->funcs[index];
    free(usr);
    fact->noreturn |= noreturn;
    if (!is_def || fact->is_def) {
      ctx->func_index = index;
      return;
    }
    free(fact->loc.file);
  } else {
    index = ctx->facts->nfuncs;
    fact =
        BWSC__PUSH(ctx->facts->funcs, ctx->facts->nfuncs, ctx->facts->capfuncs);
    fact->usr = usr;
    fact->name = take_string(clang_getCursorSpelling(cursor));
    bwsc__strmap_put(&ctx->func_by_usr, fact->usr, index);
  }
  fact->is_def = is_def;
  fact->is_static = clang_getCursorLinkage(cursor) == CXLinkage_Internal;
  fact->nparams = clang_Cursor_getNumArguments(cursor);
  fact->noreturn |= noreturn;
  cursor_loc(ctx, cursor, &fact->loc, 0);
  ctx->func_index = index;
}

/* Is `arg` the current function's first parameter, through C casts and
 * GObject's checked cast (G_PROXY_RESOLVER (resolver) is
 * `(GProxyResolver *) g_type_check_instance_cast ((GTypeInstance *)
 * (resolver), ...)` unless G_DISABLE_CAST_CHECKS)? */
static int is_own_object(visit_ctx *ctx, CXCursor arg) {
  if (clang_Cursor_getNumArguments(ctx->func) < 1)
    return 0;
  CXCursor e = bwsc__strip_casts(arg);
  if (clang_getCursorKind(e) == CXCursor_CallExpr &&
      clang_Cursor_getNumArguments(e) >= 1) {
    char *name = take_string(clang_getCursorSpelling(e));
    int cast = strcmp(name, "g_type_check_instance_cast") == 0;
    free(name);
    if (!cast)
      return 0;
    e = bwsc__strip_casts(clang_Cursor_getArgument(e, 0));
  }
  if (clang_getCursorKind(e) != CXCursor_DeclRefExpr)
    return 0;
  return clang_equalCursors(clang_getCursorReferenced(e),
                            clang_Cursor_getArgument(ctx->func, 0));
}

/* The parameter tests of the branches `call` is written in, innermost
 * first (bwsc__param_test). */
static void record_call_tests(visit_ctx *ctx, CXCursor call,
                              bwsc__call_fact *fact) {
  for (int r = ctx->ntest_regions - 1; r >= 0; r--) {
    const bwsc__test_region *region = &ctx->test_regions[r];
    if (!bwsc__once_covers(region->range, call))
      continue;
    for (int t = 0; t < region->ntests; t++) {
      if (fact->ntests == BWSC__CALL_TESTS_MAX)
        return;
      if (!fact->tests)
        fact->tests =
            bwsc__xcalloc(BWSC__CALL_TESTS_MAX, sizeof(bwsc__param_test));
      fact->tests[fact->ntests++] = region->tests[t];
    }
  }
}

/* The branches of `if_stmt` that pass tests of the function's parameters
 * (beyond MAX_TEST_REGIONS a function's later ones are not kept). */
static void record_test_regions(visit_ctx *ctx, CXCursor if_stmt) {
  if (!ctx->func_usr)
    return;
  bwsc__test_region regions[2];
  bwsc__test_regions(ctx->tu, if_stmt, ctx->func, regions);
  for (int i = 0; i < 2; i++)
    if (regions[i].ntests && ctx->ntest_regions < MAX_TEST_REGIONS)
      ctx->test_regions[ctx->ntest_regions++] = regions[i];
}

/* A call given `&v` of a struct variable (bwsc__arg_desc.points "&..."),
 * in a function that cancels a cancellable: the fields of v holding one
 * it cancelled before (bwsc__call_fact.cancelled). */
static void record_cancelled(visit_ctx *ctx, CXCursor call,
                             bwsc__call_fact *fact) {
  int addr = 0;
  for (size_t i = 0; fact->descs && i < fact->nargs; i++)
    addr |= fact->descs[i].points && fact->descs[i].points[0] == '&';
  if (!addr)
    return;
  if (!ctx->cancels)
    ctx->cancels = bwsc__calls_cancel(ctx->func) ? 2 : 1;
  if (ctx->cancels == 2)
    fact->cancelled = bwsc__cancelled_fields(ctx->func, call);
}

static void record_call(visit_ctx *ctx, CXCursor call) {
  /* Calls outside a body (sizeof(f()) at file scope) never run. */
  if (!ctx->func_usr)
    return;
  child_pick pick = bwsc__pick_children(call);
  if (!pick.nexpr)
    return;
  bwsc__call_fact *fact =
      BWSC__PUSH(ctx->facts->calls, ctx->facts->ncalls, ctx->facts->capcalls);
  fact->caller = bwsc__xstrdup(ctx->func_usr);
  value_of(ctx, pick.first, &fact->callee);
  if (fact->callee.kind == BWSC__VAL_SLOT) {
    char *text = bwsc__source_text(ctx->tu, pick.first);
    if (text) {
      free(fact->callee.name);
      fact->callee.name = text;
    }
  }
  cursor_loc(ctx, call, &fact->loc, 1);
  fact->cold = in_cold_macro(ctx, call);
  fact->once = bwsc__once_covers(ctx->once, call);
  for (int i = 0; i < ctx->nforks && !fact->forked; i++)
    fact->forked = bwsc__once_covers(ctx->forks[i], call);
  record_call_tests(ctx, call, fact);
  if (ctx->has_spin_call &&
      clang_equalRanges(clang_getCursorExtent(call),
                        clang_getCursorExtent(ctx->spin_call))) {
    fact->spin = BWSC__SPIN_BODY;
    ctx->has_spin_call = 0;
  }
  /* By extent: the visitor's cursor for the call is not bit-equal to the
   * one record_desc_store found under the assignment. */
  if (ctx->result_desc &&
      clang_equalRanges(clang_getCursorExtent(call),
                        clang_getCursorExtent(ctx->result_call))) {
    fact->result = ctx->result_desc;
    ctx->result_desc = NULL;
  }
  int nargs = clang_Cursor_getNumArguments(call);
  if (nargs > 0) {
    fact->nargs = (size_t)nargs;
    fact->args = bwsc__xcalloc(fact->nargs, sizeof(bwsc__value));
    for (int i = 0; i < nargs; i++) {
      CXCursor arg = clang_Cursor_getArgument(call, (unsigned)i);
      value_of(ctx, arg, &fact->args[i]);
      fact->args[i].record = arg_record(ctx, arg);
      bwsc__arg_desc desc = {NULL, 0, 0, 0, NULL, NULL, NULL, NULL, NULL};
      int known = arg_desc(ctx, arg, &fact->args[i], &desc);
      desc.tested =
          bwsc__ready_tested(ctx->tu, ctx->readies, ctx->nreadies, call, arg);
      if (known || desc.tested) {
        if (!fact->descs)
          fact->descs = bwsc__xcalloc(fact->nargs, sizeof(bwsc__arg_desc));
        fact->descs[i] = desc;
      }
    }
    fact->self = is_own_object(ctx, clang_Cursor_getArgument(call, 0));
  }
  record_cancelled(ctx, call, fact);
}

/* A polling loop: record_call marks its body call; an empty one is a fact. */
static void record_loop(visit_ctx *ctx, CXCursor loop) {
  CXCursor call, cond;
  int spin = ctx->func_usr ? bwsc__spin_loop(ctx->tu, loop, &call, &cond)
                           : BWSC__SPIN_NONE;
  if (spin == BWSC__SPIN_BODY) {
    ctx->spin_call = call;
    ctx->has_spin_call = 1;
  } else if (spin == BWSC__SPIN_BARE) {
    bwsc__call_fact *fact =
        BWSC__PUSH(ctx->facts->calls, ctx->facts->ncalls, ctx->facts->capcalls);
    fact->caller = bwsc__xstrdup(ctx->func_usr);
    char *text = bwsc__source_text(ctx->tu, cond);
    fact->callee.name = bwsc__xasprintf("while (%s)", text ? text : "...");
    free(text);
    cursor_loc(ctx, loop, &fact->loc, 1);
    fact->spin = BWSC__SPIN_BARE;
  }
}

/* A new store in the desc flows (zeroed by BWSC__PUSH), owning `to`. */
static bwsc__desc_flow *push_desc_flow(visit_ctx *ctx, char *to) {
  bwsc__tu_facts *facts = ctx->facts;
  bwsc__desc_flow *flow =
      BWSC__PUSH(facts->desc_flows, facts->ndesc_flows, facts->capdesc_flows);
  flow->to = to;
  return flow;
}

/* Integer slot `to` (owned; `local` as bwsc__desc_flow says) takes the
 * value of `rhs`: a call's result (the call is visited next, see
 * record_call), another integer slot, a constant, or something else (from
 * NULL). A NULL rhs is a write of another kind (`&to`, `to++`). */
static void record_desc_store(visit_ctx *ctx, char *to, int local,
                              CXCursor rhs) {
  CXCursor peeled = bwsc__peel_checked_casts(rhs);
  enum CXCursorKind kind = clang_getCursorKind(peeled);
  char *from = NULL;
  if (!to)
    return;
  if (kind == CXCursor_CallExpr) {
    free(ctx->result_desc);
    ctx->result_call = peeled;
    ctx->result_desc = to;
    return;
  }
  if (kind == CXCursor_DeclRefExpr || kind == CXCursor_MemberRefExpr)
    from = bwsc__desc_key(clang_getCursorReferenced(peeled));
  if (!from && kind == CXCursor_DeclRefExpr && !clang_Cursor_isNull(rhs))
    from = bwsc__desc_param_source(rhs, clang_getCursorReferenced(peeled));
  bwsc__desc_flow *flow = push_desc_flow(ctx, to);
  flow->from = from;
  flow->alt = from ? bwsc__reaching_key(ctx->tu, ctx->func, rhs, peeled) : NULL;
  flow->local = local;
  flow->is_const = !from && !clang_Cursor_isNull(rhs) &&
                   bwsc__maybe_constant(peeled) &&
                   bwsc__eval_int(rhs, &flow->ival);
}

/* A store `p->f = rhs` (or another write of `p->f`, rhs null, `addr` as
 * bwsc__desc_flow's) into descriptor field `key` through pointer p: once
 * more into p's field slot (bwsc__via_key), from NULL when rhs is a call
 * (its result is the unqualified key's, see record_call) or no value. */
static void record_via_store(visit_ctx *ctx, CXCursor lhs, const char *key,
                             CXCursor rhs, int addr) {
  char *via = ctx->func_usr ? bwsc__via_key(lhs, key) : NULL;
  if (!via)
    return;
  if (!clang_Cursor_isNull(rhs) &&
      clang_getCursorKind(bwsc__peel(rhs)) != CXCursor_CallExpr) {
    record_desc_store(ctx, via, 0, rhs);
    return;
  }
  push_desc_flow(ctx, via)->addr = addr;
}

/* The "&<USR>" key of `&v` for a struct variable v (owned), else the key
 * of a pointer it copies (bwsc__pointer_copy_key), else NULL. */
static char *address_key(CXCursor expr) {
  char *key = bwsc__points_key(expr);
  if (key && key[0] != '&') {
    free(key);
    key = NULL;
  }
  return key ? key : bwsc__pointer_copy_key(expr);
}

/* A local store into a struct's field or a struct pointer (owning `to`
 * and `from`), in the desc flows the field conditions read. */
static bwsc__desc_flow *push_struct_flow(visit_ctx *ctx, char *to, char *from) {
  bwsc__desc_flow *flow = push_desc_flow(ctx, to);
  flow->from = from;
  flow->local = 1;
  return flow;
}

/* The stores a condition on a struct's field reads (bwsc__arg_desc.points):
 * `v.f = rhs` of a struct variable v, into "<USR of v>.f" (a constant, or
 * from nothing), and `p = &v` (also `*(&p) = &v`, as GLib's
 * g_once_init_leave writes it) of a `struct ... *` variable p, into p's
 * USR from "&<USR of v>" (from nothing when rhs is anything else). */
static void record_struct_store(visit_ctx *ctx, CXCursor binop, CXCursor lhs,
                                CXCursor rhs) {
  char *to = bwsc__var_field_key(lhs);
  char *from = NULL;
  if (!to) {
    to = bwsc__struct_pointer_key(binop, lhs);
    if (!to)
      return;
    from = address_key(rhs);
  }
  bwsc__desc_flow *flow = push_struct_flow(ctx, to, from);
  flow->is_const = !from && bwsc__maybe_constant(bwsc__peel(rhs)) &&
                   bwsc__eval_int(rhs, &flow->ival);
}

/* `struct addrinfo *p = &v;`: p's store, as record_struct_store's. */
static void record_pointer_init(visit_ctx *ctx, CXCursor var, CXCursor init) {
  char *to = bwsc__struct_pointer_key(var, var);
  if (!to)
    return;
  push_struct_flow(ctx, to, address_key(init));
}

/* `v.f |= x`, `v.f++`, `&v.f` (`op` writes its operand, an integer
 * field): a store of anything into "<USR of v>.f". */
static void record_field_written(visit_ctx *ctx, CXCursor op) {
  child_pick pick = bwsc__pick_children(op);
  if (!pick.nexpr)
    return;
  char *to = bwsc__var_field_key(bwsc__strip_casts(pick.first));
  if (!to)
    return;
  push_desc_flow(ctx, to)->local = 1;
}

static void record_var_init(visit_ctx *ctx, CXCursor var) {
  if (!may_hold_code(clang_getCursorType(var))) {
    child_pick pick = bwsc__pick_children(var);
    if (ctx->func_usr && pick.nexpr)
      record_desc_store(ctx, bwsc__desc_key(var), bwsc__desc_is_local(var),
                        pick.last);
    if (ctx->func_usr && pick.nexpr)
      record_pointer_init(ctx, var, pick.last);
    return;
  }
  child_pick pick = bwsc__pick_children(var);
  if (!pick.nexpr || clang_getCursorKind(pick.last) == CXCursor_InitListExpr)
    return;
  bwsc__value value;
  value_of(ctx, pick.last, &value);
  char *usr = take_string(clang_getCursorUSR(var));
  add_flow(ctx, usr, &value);
  free(usr);
}

/* `lhs = rhs` of function-pointer type. Comparisons have type int, so the
 * result type tells an assignment from them without tokenising. */
static void record_assignment(visit_ctx *ctx, CXCursor binop) {
  if (!is_function_pointer(clang_getCursorType(binop))) {
    child_pick pick = bwsc__pick_children(binop);
    CXCursor lhs = pick.nexpr == 2 ? bwsc__peel(pick.first) : pick.first;
    enum CXCursorKind kind = clang_getCursorKind(lhs);
    if (pick.nexpr != 2 ||
        (kind != CXCursor_DeclRefExpr && kind != CXCursor_MemberRefExpr))
      return;
    CXCursor ref = clang_getCursorReferenced(lhs);
    if (ctx->func_usr && bwsc__is_assignment(ctx->tu, binop))
      record_struct_store(ctx, binop, lhs, pick.last);
    char *to = bwsc__desc_key(ref);
    if (to && bwsc__is_assignment(ctx->tu, binop)) {
      record_via_store(ctx, lhs, to, pick.last, 0);
      record_desc_store(ctx, to, bwsc__desc_is_local(ref), pick.last);
    } else {
      free(to);
    }
    return;
  }
  child_pick pick = bwsc__pick_children(binop);
  if (pick.nexpr != 2)
    return;
  bwsc__value lhs, rhs;
  value_of(ctx, pick.first, &lhs);
  value_of(ctx, pick.last, &rhs);
  if (lhs.kind == BWSC__VAL_SLOT)
    add_flow(ctx, lhs.ref, &rhs);
  else
    bwsc__value_free(&rhs);
  bwsc__value_free(&lhs);
}

typedef struct field_list {
  CXCursor *fields;
  size_t count, cap;
} field_list;

static enum CXVisitorResult field_visitor(CXCursor field, CXClientData data) {
  field_list *list = data;
  *BWSC__PUSH(list->fields, list->count, list->cap) = field;
  return CXVisit_Continue;
}

typedef struct init_ctx {
  visit_ctx *ctx;
  field_list fields;
  size_t next;      /* positional field index */
  const char *slot; /* for arrays: the variable they initialise */
} init_ctx;

static enum CXChildVisitResult init_visitor(CXCursor cursor, CXCursor parent,
                                            CXClientData data) {
  (void)parent;
  init_ctx *init = data;
  if (!clang_isExpression(clang_getCursorKind(cursor)))
    return CXChildVisit_Continue;
  CXCursor target = clang_getNullCursor();
  child_pick pick = bwsc__pick_children(cursor);
  CXCursor expr = cursor;
  if (pick.has_member_ref && pick.nexpr) {
    /* A designated initialiser: `.field = value`. */
    target = clang_getCursorReferenced(pick.member_ref);
    expr = pick.last;
    for (size_t i = 0; i < init->fields.count; i++)
      if (clang_equalCursors(init->fields.fields[i], target))
        init->next = i;
  } else if (init->next < init->fields.count) {
    target = init->fields.fields[init->next];
  }
  init->next++;
  if (clang_getCursorKind(expr) == CXCursor_InitListExpr)
    return CXChildVisit_Continue;
  bwsc__value value;
  value_of(init->ctx, expr, &value);
  if (!clang_Cursor_isNull(target)) {
    char *usr = take_string(clang_getCursorUSR(target));
    add_flow(init->ctx, usr, &value);
    free(usr);
  } else {
    add_flow(init->ctx, init->slot, &value);
  }
  return CXChildVisit_Continue;
}

/* `{ .cb = work }` flows into field cb; `{ a, b }` of an array variable
 * flows into the variable. Nested lists are visited on their own. */
static void record_init_list(visit_ctx *ctx, CXCursor list, CXCursor parent) {
  CXType type = clang_getCanonicalType(clang_getCursorType(list));
  init_ctx init;
  memset(&init, 0, sizeof(init));
  init.ctx = ctx;
  char *slot = NULL;
  if (type.kind == CXType_Record) {
    clang_Type_visitFields(type, field_visitor, &init.fields);
  } else if (clang_getCursorKind(parent) == CXCursor_VarDecl) {
    slot = take_string(clang_getCursorUSR(parent));
    init.slot = slot;
  } else {
    return;
  }
  clang_visitChildren(list, init_visitor, &init);
  free(init.fields.fields);
  free(slot);
}

/* `return fn;` in a function that returns a function pointer flows into
 * its return slot, which calls of the function denote (see value_of). */
static void record_return(visit_ctx *ctx, CXCursor ret) {
  child_pick pick = bwsc__pick_children(ret);
  if (!ctx->func_usr || !pick.nexpr)
    return;
  if (!may_hold_code(clang_getResultType(clang_getCursorType(ctx->func)))) {
    /* An integer slot or a call's result returned: the descriptor the
     * function hands back, in its "<USR>#ret" slot; anything computed
     * (`-errno`) is taken for an error code and not recorded. */
    CXCursor expr = bwsc__strip_casts(pick.last);
    enum CXCursorKind kind = clang_getCursorKind(expr);
    char *key = bwsc__xasprintf("%s#ret", ctx->func_usr);
    if (kind == CXCursor_CallExpr ||
        ((kind == CXCursor_DeclRefExpr || kind == CXCursor_MemberRefExpr) &&
         bwsc__desc_key_returned(clang_getCursorReferenced(expr))))
      record_desc_store(ctx, key, 0, expr);
    else
      free(key);
    return;
  }
  bwsc__value value;
  value_of(ctx, pick.last, &value);
  char *slot = bwsc__xasprintf("%s#ret", ctx->func_usr);
  add_flow(ctx, slot, &value);
  free(slot);
}

/* An equality guard (parse_guard.h): its branch's own slot, which every
 * slot it compares with stores into (so it is non-blocking when they all
 * are), named "<function USR>#eq<offset of the if>". */
static void record_guard(visit_ctx *ctx, CXCursor if_stmt) {
  bwsc__guard *g = &ctx->guards[ctx->nguards];
  if (!ctx->func_usr || ctx->nguards >= MAX_GUARDS ||
      !bwsc__guard_of(ctx->tu, if_stmt, g))
    return;
  unsigned offset = 0;
  clang_getExpansionLocation(clang_getCursorLocation(if_stmt), NULL, NULL, NULL,
                             &offset);
  char *key = bwsc__xasprintf("%s#eq%u", ctx->func_usr, offset);
  bwsc__tu_facts *facts = ctx->facts;
  for (int i = 0; i < g->nkeys; i++) {
    bwsc__desc_flow *flow =
        BWSC__PUSH(facts->desc_flows, facts->ndesc_flows, facts->capdesc_flows);
    flow->to = bwsc__xstrdup(key);
    flow->from = g->keys[i];
    flow->local = 1;
    g->keys[i] = NULL;
  }
  g->nkeys = 0;
  ctx->guard_keys[ctx->nguards++] = key;
}

static void drop_guards(visit_ctx *ctx) {
  for (int i = 0; i < ctx->nguards; i++)
    free(ctx->guard_keys[i]);
  ctx->nguards = 0;
}

/* The child's branches of a fork() that `stmt` holds (parse_fork.h). */
static void record_forks(visit_ctx *ctx, CXCursor stmt) {
  if (ctx->func_usr)
    ctx->nforks += bwsc__fork_regions(ctx->tu, stmt, ctx->forks + ctx->nforks,
                                      MAX_FORKS - ctx->nforks);
}

static enum CXChildVisitResult body_visitor(CXCursor cursor, CXCursor parent,
                                            CXClientData data) {
  visit_ctx *ctx = data;
  switch (clang_getCursorKind(cursor)) {
  case CXCursor_AnnotateAttr: {
    if (clang_getCursorKind(parent) != CXCursor_FunctionDecl)
      return CXChildVisit_Continue; /* an annotated variable or field */
    char *text = take_string(clang_getCursorSpelling(cursor));
    if (strcmp(text, ANNOTATION) == 0)
      ctx->facts->funcs[ctx->func_index].annotated = 1;
    free(text);
    return CXChildVisit_Continue;
  }
  case CXCursor_UnexposedAttr:
    if (clang_getCursorKind(parent) == CXCursor_FunctionDecl &&
        is_noreturn_attr(ctx->tu, cursor))
      ctx->facts->funcs[ctx->func_index].noreturn = 1;
    return CXChildVisit_Continue;
  case CXCursor_CallExpr:
    record_call(ctx, cursor);
    break;
  case CXCursor_VarDecl:
    record_var_init(ctx, cursor);
    break;
  case CXCursor_BinaryOperator:
    record_assignment(ctx, cursor);
    break;
  case CXCursor_WhileStmt:
  case CXCursor_DoStmt:
    record_loop(ctx, cursor);
    break;
  case CXCursor_IfStmt:
    bwsc__once_region(ctx->tu, cursor, ctx->func, &ctx->once);
    record_forks(ctx, cursor);
    record_guard(ctx, cursor);
    record_test_regions(ctx, cursor);
    break;
  case CXCursor_CompoundStmt:
    if (ctx->func_usr)
      bwsc__ready_tests(ctx->tu, cursor, ctx->readies, &ctx->nreadies,
                        BWSC__READY_MAX_TESTS);
    record_forks(ctx, cursor);
    break;
  case CXCursor_SwitchStmt:
    record_forks(ctx, cursor);
    break;
  case CXCursor_UnaryOperator:
  case CXCursor_CompoundAssignOperator:
    if (ctx->func_usr) {
      int addr;
      char *key = bwsc__desc_written(ctx->tu, cursor, &addr);
      int wrote = key != NULL; /* an integer slot `++`, `op=` or `&` */
      child_pick target = bwsc__pick_children(cursor);
      if (key && target.nexpr)
        record_via_store(ctx, bwsc__strip_casts(target.first), key,
                         clang_getNullCursor(), addr);
      record_desc_store(ctx, key, 0, clang_getNullCursor());
      if (key)
        ctx->facts->desc_flows[ctx->facts->ndesc_flows - 1].addr = addr;
      if (wrote)
        record_field_written(ctx, cursor);
    }
    break;
  case CXCursor_InitListExpr:
    record_init_list(ctx, cursor, parent);
    break;
  case CXCursor_ReturnStmt:
    record_return(ctx, cursor);
    break;
  default:
    break;
  }
  return CXChildVisit_Recurse;
}

/* File scope: functions (with their bodies) and variable initialisers. */
static enum CXChildVisitResult top_visitor(CXCursor cursor, CXCursor parent,
                                           CXClientData data) {
  (void)parent;
  visit_ctx *ctx = data;
  if (in_system_header(cursor))
    return CXChildVisit_Continue;
  switch (clang_getCursorKind(cursor)) {
  case CXCursor_FunctionDecl:
    record_function(ctx, cursor);
    if (clang_isCursorDefinition(cursor)) {
      ctx->func_usr = ctx->facts->funcs[ctx->func_index].usr;
      ctx->func = cursor;
      ctx->nforks = 0;
      ctx->ntest_regions = 0;
      ctx->cancels = 0;
      drop_guards(ctx);
      bwsc__ready_drop(ctx->readies, &ctx->nreadies);
    }
    /* Prototypes are walked too, for their annotate attributes; calls can
     * only appear in bodies, so func_usr stays NULL there. */
    clang_visitChildren(cursor, body_visitor, ctx);
    ctx->func_usr = NULL;
    return CXChildVisit_Continue;
  case CXCursor_VarDecl:
    record_var_init(ctx, cursor);
    clang_visitChildren(cursor, body_visitor, ctx);
    return CXChildVisit_Continue;
  case CXCursor_LinkageSpec:
    return CXChildVisit_Recurse;
  default:
    return CXChildVisit_Continue;
  }
}

/* ---- driving one parse -------------------------------------------------- */

static void add_diag(bwsc__tu_facts *facts, const char *file, unsigned line,
                     unsigned col, const char *message) {
  bwsc__diag_fact *diag =
      BWSC__PUSH(facts->diags, facts->ndiags, facts->capdiags);
  diag->loc.file = file ? bwsc__xstrdup(file) : NULL;
  diag->loc.line = line;
  diag->loc.col = col;
  diag->message = bwsc__xstrdup(message);
}

/* Decodes libclang's diagnostics in one place: errors fail the TU. */
static void collect_diagnostics(CXTranslationUnit tu, bwsc__tu_facts *facts) {
  unsigned count = clang_getNumDiagnostics(tu);
  for (unsigned i = 0; i < count; i++) {
    CXDiagnostic diag = clang_getDiagnostic(tu, i);
    if (clang_getDiagnosticSeverity(diag) >= CXDiagnostic_Error) {
      CXFile file = NULL;
      unsigned line = 0, col = 0;
      clang_getSpellingLocation(clang_getDiagnosticLocation(diag), &file, &line,
                                &col, NULL);
      char *name = file_name(file);
      char *text = take_string(clang_getDiagnosticSpelling(diag));
      add_diag(facts, name ? name : facts->file, line, col, text);
      free(name);
      free(text);
      facts->failed = 1;
    }
    clang_disposeDiagnostic(diag);
  }
}

void bwsc__parse_init(void) {
  /* clang_createIndex() turns crash recovery on unless this is set (each
   * index would undo clang_toggleCrashRecovery(0)); no thread exists yet. */
  setenv("LIBCLANG_DISABLE_CRASH_RECOVERY", "1", 0);
}

bwsc__parser *bwsc__parser_new(void) {
  bwsc__parser *parser = bwsc__xcalloc(1, sizeof(*parser));
  parser->index = clang_createIndex(0, 0);
  return parser;
}

void bwsc__parser_free(bwsc__parser *parser) {
  if (!parser)
    return;
  clang_disposeIndex(parser->index);
  free(parser);
}

/* clang_getInclusions' visitor: one dep per file the TU read. */
static void inclusion_visitor(CXFile file, CXSourceLocation *stack,
                              unsigned depth, CXClientData data) {
  (void)stack;
  (void)depth;
  bwsc__deps *deps = data;
  char *name = file_name(file);
  if (name)
    BWSC__PUSH(deps->items, deps->count, deps->cap)->path = name;
}

void bwsc__parser_parse(bwsc__parser *parser, const bwsc__tu_input *input,
                        bwsc__tu_facts *out, bwsc__deps *deps) {
  memset(out, 0, sizeof(*out));
  out->file = bwsc__xstrdup(input->file);
  if (access(input->file, R_OK) != 0) {
    char *message =
        bwsc__xasprintf("cannot read source file: %s", strerror(errno));
    add_diag(out, input->file, 0, 0, message);
    free(message);
    out->failed = 1;
    return;
  }
  /* The compile command's flags (relative paths already made absolute),
   * then what libclang needs on top: clang's builtin headers, and no
   * warnings (only errors matter; -Werror must not fail a TU). */
  size_t nargs = 0;
  const char **args = bwsc__xcalloc(input->nargs + 6, sizeof(char *));
  for (size_t i = 0; i < input->nargs; i++)
    args[nargs++] = input->args[i];
  if (*BLOCKSCAN_RESOURCE_DIR) {
    args[nargs++] = "-isystem";
    args[nargs++] = BLOCKSCAN_RESOURCE_DIR;
  }
  args[nargs++] = "-w";
  args[nargs++] = "-Wno-error";

  CXTranslationUnit tu = NULL;
  enum CXErrorCode err = clang_parseTranslationUnit2(
      parser->index, input->file, args, (int)nargs, NULL, 0,
      CXTranslationUnit_IgnoreNonErrorsFromIncludedFiles, &tu);
  free(args);
  if (err != CXError_Success || !tu) {
    char *message =
        bwsc__xasprintf("libclang could not parse this file (error %d)", err);
    add_diag(out, input->file, 0, 0, message);
    free(message);
    out->failed = 1;
    return;
  }
  collect_diagnostics(tu, out);
  if (deps)
    clang_getInclusions(tu, inclusion_visitor, deps);

  visit_ctx ctx;
  memset(&ctx, 0, sizeof(ctx));
  ctx.facts = out;
  ctx.tu = tu;
  clang_visitChildren(clang_getTranslationUnitCursor(tu), top_visitor, &ctx);
  bwsc__strmap_free(&ctx.func_by_usr);
  bwsc__strmap_free(&ctx.scanned);
  bwsc__strmap_free(&ctx.record_by_usr);
  free(ctx.result_desc);
  drop_guards(&ctx);
  bwsc__ready_drop(ctx.readies, &ctx.nreadies);
  for (size_t i = 0; i < ctx.nscanned; i++)
    free(ctx.scanned_keys[i]);
  free(ctx.scanned_keys);
  clang_disposeTranslationUnit(tu);
}
