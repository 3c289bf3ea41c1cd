/* parse_guard.c - equality guards: `if (v == a || v == b) { ... }`, and
 * the tests of the function's parameters a branch passes: `if (flags &
 * WATCH && ...)`.
 *
 * Invariants: every test of a guard's condition compares the same v with
 * a slot that has a descriptor key; anything else in the condition (an
 * `&&`, a call, a constant) makes it no guard. The keys are owned by the
 * guard until the parser hands them to the facts. A parameter test is
 * kept only where the branch surely passes it; any doubt drops the test.
 */
#include "parse_guard.h"

#include <stdlib.h>
#include <string.h>

/* The declaration an operand names (through casts): a variable, field or
 * parameter; else a null cursor. */
static CXCursor named(CXCursor expr) {
  CXCursor e = bwsc__strip_casts(expr);
  enum CXCursorKind kind = clang_getCursorKind(e);
  if (kind != CXCursor_DeclRefExpr && kind != CXCursor_MemberRefExpr)
    return clang_getNullCursor();
  return clang_getCursorReferenced(e);
}

/* A local variable without static storage, or a parameter. */
static int local_var(CXCursor decl) {
  enum CXCursorKind kind = clang_getCursorKind(decl);
  if (kind == CXCursor_ParmDecl)
    return 1;
  return kind == CXCursor_VarDecl &&
         clang_Cursor_getStorageClass(decl) != CX_SC_Static &&
         clang_getCursorKind(clang_getCursorSemanticParent(decl)) !=
             CXCursor_TranslationUnit;
}

static void drop_keys(bwsc__guard *g) {
  for (int i = 0; i < g->nkeys; i++)
    free(g->keys[i]);
  g->nkeys = 0;
}

/* One `v == e` test (adds e's key), or an `||` of tests. */
static int tests(CXTranslationUnit tu, CXCursor cond, bwsc__guard *g,
                 int depth) {
  CXCursor c = bwsc__strip_casts(cond);
  if (depth > BWSC__GUARD_MAX_KEYS ||
      clang_getCursorKind(c) != CXCursor_BinaryOperator)
    return 0;
  bwsc__kids t = bwsc__kids_of(c);
  if (t.n != 2)
    return 0;
  CXCursor l = named(t.at[0]), r = named(t.at[1]);
  if (!clang_Cursor_isNull(l) && !clang_Cursor_isNull(r)) {
    /* v == e or e == v: v is the guard's once known, else a local. */
    CXCursor v = l, e = r;
    if (!clang_Cursor_isNull(g->var) ? clang_equalCursors(r, g->var)
                                     : !local_var(l) && local_var(r)) {
      v = r;
      e = l;
    }
    if (!local_var(v) ||
        (!clang_Cursor_isNull(g->var) && !clang_equalCursors(v, g->var)) ||
        g->nkeys >= BWSC__GUARD_MAX_KEYS)
      return 0;
    char *key = bwsc__desc_key(e);
    if (!key)
      return 0;
    if (!bwsc__is_equality(tu, c)) {
      free(key);
      return 0;
    }
    g->var = v;
    g->keys[g->nkeys++] = key;
    return 1;
  }
  return bwsc__binop_is(tu, c, "||") && tests(tu, t.at[0], g, depth + 1) &&
         tests(tu, t.at[1], g, depth + 1);
}

int bwsc__guard_of(CXTranslationUnit tu, CXCursor if_stmt, bwsc__guard *out) {
  bwsc__kids t = bwsc__kids_of(if_stmt);
  memset(out, 0, sizeof(*out));
  out->var = clang_getNullCursor();
  if (t.n < 2 || !tests(tu, t.at[0], out, 0)) {
    drop_keys(out);
    return 0;
  }
  out->then = clang_getCursorExtent(t.at[1]);
  return 1;
}

int bwsc__guard_names(const bwsc__guard *guard, CXCursor ref) {
  return clang_equalCursors(guard->var, ref);
}

/* ---- tests of the function's parameters: `if (flags & WATCH)` ---------- */

/* Through parentheses and implicit conversions only. */
static CXCursor plain(CXCursor expr) {
  for (int depth = 0; depth < 16; depth++) {
    enum CXCursorKind kind = clang_getCursorKind(expr);
    if (kind != CXCursor_ParenExpr && kind != CXCursor_UnexposedExpr)
      break;
    child_pick pick = bwsc__pick_children(expr);
    if (pick.nexpr != 1)
      break;
    expr = pick.first;
  }
  return expr;
}

/* An integer type's bits, negative when signed; 0 for any other type. */
static int width_of(CXType type) {
  CXType t = clang_getCanonicalType(type);
  if (t.kind == CXType_Enum)
    t = clang_getCanonicalType(
        clang_getEnumDeclIntegerType(clang_getTypeDeclaration(t)));
  long long size = clang_Type_getSizeOf(t);
  if (size <= 0 || size > 8)
    return 0;
  int bits = (int)size * 8;
  switch (t.kind) {
  case CXType_Bool:
    return 1;
  case CXType_Char_U:
  case CXType_UChar:
  case CXType_UShort:
  case CXType_UInt:
  case CXType_ULong:
  case CXType_ULongLong:
    return bits;
  case CXType_Char_S:
  case CXType_SChar:
  case CXType_Short:
  case CXType_Int:
  case CXType_Long:
  case CXType_LongLong:
    return -bits;
  default:
    return 0;
  }
}

/* `expr` names an integer parameter of `func`: its index and type. */
static int names_param(CXCursor func, CXCursor expr, bwsc__param_test *out) {
  CXCursor e = plain(expr);
  if (clang_getCursorKind(e) != CXCursor_DeclRefExpr)
    return 0;
  /* Only a slot type whose writes the facts record (bwsc__desc_key): the
   * walk uses the test only for a parameter never written. */
  CXCursor parm = clang_getCursorReferenced(e);
  if (clang_getCursorKind(parm) != CXCursor_ParmDecl ||
      !bwsc__desc_key_is_int(parm))
    return 0;
  out->width = width_of(clang_getCursorType(parm));
  int n = clang_Cursor_getNumArguments(func);
  for (int i = 0; out->width && i < n && i < 64; i++) {
    if (clang_equalCursors(clang_Cursor_getArgument(func, (unsigned)i), parm)) {
      out->param = i;
      return 1;
    }
  }
  return 0;
}

static int constant(CXCursor expr, long long *out) {
  return bwsc__maybe_constant(bwsc__peel(expr)) && bwsc__eval_int(expr, out);
}

/* `p & M` (either order), M a constant other than 0. */
static int bits_test(CXTranslationUnit tu, CXCursor func, CXCursor expr,
                     bwsc__param_test *out) {
  CXCursor e = plain(expr);
  if (clang_getCursorKind(e) != CXCursor_BinaryOperator ||
      !bwsc__binop_is(tu, e, "&"))
    return 0;
  bwsc__kids t = bwsc__kids_of(e);
  if (t.n != 2)
    return 0;
  out->kind = BWSC__TEST_SOME_BITS;
  return ((names_param(func, t.at[0], out) && constant(t.at[1], &out->value)) ||
          (names_param(func, t.at[1], out) &&
           constant(t.at[0], &out->value))) &&
         out->value != 0;
}

/* One test (see bwsc__test_regions), `!` aside. */
static int one_test(CXTranslationUnit tu, CXCursor func, CXCursor expr,
                    bwsc__param_test *out) {
  CXCursor e = plain(expr);
  if (names_param(func, e, out)) {
    out->kind = BWSC__TEST_SOME_BITS;
    out->value = -1;
    return 1;
  }
  if (bits_test(tu, func, e, out))
    return 1;
  if (clang_getCursorKind(e) != CXCursor_BinaryOperator)
    return 0;
  int eq = bwsc__binop_is(tu, e, "==");
  if (!eq && !bwsc__binop_is(tu, e, "!="))
    return 0;
  bwsc__kids t = bwsc__kids_of(e);
  if (t.n != 2)
    return 0;
  for (int side = 0; side < 2; side++) {
    long long k;
    if (!constant(t.at[1 - side], &k))
      continue;
    if (names_param(func, t.at[side], out)) {
      out->kind = eq ? BWSC__TEST_EQ : BWSC__TEST_NE;
      out->value = k;
      return 1;
    }
    if (k == 0 && bits_test(tu, func, t.at[side], out)) {
      out->kind = eq ? BWSC__TEST_NO_BITS : BWSC__TEST_SOME_BITS;
      return 1;
    }
  }
  return 0;
}

static void negate(bwsc__param_test *test) {
  static const int opposite[] = {0, BWSC__TEST_NO_BITS, BWSC__TEST_SOME_BITS,
                                 BWSC__TEST_NE, BWSC__TEST_EQ};
  test->kind = opposite[test->kind];
}

/* The tests `cond` (negated when `not`) holds: each operand of an `&&`
 * (of an `||` negated), through `!`. */
static void collect(CXTranslationUnit tu, CXCursor func, CXCursor cond, int not,
                    bwsc__test_region *out, int depth) {
  CXCursor e = plain(cond);
  if (depth > 16 || out->ntests >= BWSC__CALL_TESTS_MAX)
    return;
  if (bwsc__is_not(tu, e)) {
    collect(tu, func, bwsc__pick_children(e).first, !not, out, depth + 1);
    return;
  }
  if (clang_getCursorKind(e) == CXCursor_BinaryOperator &&
      bwsc__binop_is(tu, e, not ? "||" : "&&")) {
    bwsc__kids t = bwsc__kids_of(e);
    if (t.n == 2) {
      collect(tu, func, t.at[0], not, out, depth + 1);
      collect(tu, func, t.at[1], not, out, depth + 1);
    }
    return;
  }
  bwsc__param_test test;
  memset(&test, 0, sizeof(test));
  if (!one_test(tu, func, e, &test))
    return;
  if (not )
    negate(&test);
  out->tests[out->ntests++] = test;
}

/* Whether a branch can be entered other than through its if: it holds a
 * label (a goto's target) or a case of a switch around it. */
typedef struct entry_scan {
  int found;
  int in_switch; /* inside a switch of the branch's own */
} entry_scan;

static enum CXChildVisitResult entry_visitor(CXCursor cursor, CXCursor parent,
                                             CXClientData data) {
  (void)parent;
  entry_scan *scan = data;
  enum CXCursorKind kind = clang_getCursorKind(cursor);
  if (kind == CXCursor_LabelStmt ||
      (!scan->in_switch &&
       (kind == CXCursor_CaseStmt || kind == CXCursor_DefaultStmt))) {
    scan->found = 1;
    return CXChildVisit_Break;
  }
  if (kind == CXCursor_SwitchStmt && !scan->in_switch) {
    entry_scan inner = {0, 1};
    clang_visitChildren(cursor, entry_visitor, &inner);
    scan->found = inner.found;
    return scan->found ? CXChildVisit_Break : CXChildVisit_Continue;
  }
  return CXChildVisit_Recurse;
}

static int has_entry(CXCursor branch) {
  entry_scan scan = {0, 0};
  if (entry_visitor(branch, branch, &scan) == CXChildVisit_Recurse)
    clang_visitChildren(branch, entry_visitor, &scan);
  return scan.found;
}

void bwsc__test_regions(CXTranslationUnit tu, CXCursor if_stmt, CXCursor func,
                        bwsc__test_region out[2]) {
  memset(out, 0, 2 * sizeof(*out));
  bwsc__kids t = bwsc__kids_of(if_stmt);
  if (t.n < 2 || clang_Cursor_isNull(func))
    return;
  for (int i = 0; i < 2 && i + 1 < t.n && i + 1 < 3; i++) {
    collect(tu, func, t.at[0], i, &out[i], 0);
    if (out[i].ntests && has_entry(t.at[i + 1]))
      out[i].ntests = 0; /* a goto or case may enter it untested */
    out[i].range = clang_getCursorExtent(t.at[i + 1]);
  }
}
