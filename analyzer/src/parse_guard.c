/* parse_guard.c - equality guards: `if (v == a || v == b) { ... }`.
 *
 * Invariants: every test of the condition compares the same v with a
 * slot that has a descriptor key; anything else in the condition (an
 * `&&`, a call, a constant) makes it no guard. The keys are owned by the
 * guard until the parser hands them to the facts.
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
