/* parse_fork.c - the child's branch of a fork(): statements that run in
 * another process, not on the thread that called fork().
 *
 * Invariants: only fork() itself counts (not vfork(), whose child borrows
 * the parent's thread until it execs or exits); the child is told by a
 * test of the result against 0 (`== 0` either way round, or `!`), written
 * in the if or switch whose condition calls fork(), or in an if/else-if
 * chain that is the statement right after `v = fork();` or `T v = fork();`
 * in the same block and tests that v; a branch testing anything else, or a
 * v written between, marks nothing. Each branch found is one region; a
 * fork nested in a child's branch makes a region inside another.
 */
#include "parse_fork.h"
#include "parse_once.h"

#include <stdlib.h>
#include <string.h>

/* A call of fork() (through casts and parentheses). */
static int is_fork_call(CXCursor expr) {
  CXCursor call = bwsc__strip_casts(expr);
  if (clang_getCursorKind(call) != CXCursor_CallExpr)
    return 0;
  char *name = take_string(clang_getCursorSpelling(call));
  int fork = strcmp(name, "fork") == 0;
  free(name);
  return fork;
}

/* The variable an expression names (through casts), or a null cursor. */
static CXCursor var_of(CXCursor expr) {
  CXCursor peeled = bwsc__strip_casts(expr);
  if (clang_getCursorKind(peeled) != CXCursor_DeclRefExpr)
    return clang_getNullCursor();
  CXCursor var = clang_getCursorReferenced(peeled);
  return clang_getCursorKind(var) == CXCursor_VarDecl ? var
                                                      : clang_getNullCursor();
}

/* `fork()` or `v = fork()`: 1, and *var v (a null cursor for a bare call).
 * The operator is looked at last: it takes tokenizing. */
static int fork_value(CXTranslationUnit tu, CXCursor expr, CXCursor *var) {
  CXCursor e = bwsc__strip_casts(expr);
  *var = clang_getNullCursor();
  if (is_fork_call(e))
    return 1;
  if (clang_getCursorKind(e) != CXCursor_BinaryOperator)
    return 0;
  bwsc__kids k = bwsc__kids_of(e);
  if (k.n != 2 || !is_fork_call(k.at[1]))
    return 0;
  *var = var_of(k.at[0]);
  return !clang_Cursor_isNull(*var) && bwsc__is_assignment(tu, e);
}

/* The first token of a cursor is `!`. */
static int starts_with_not(CXTranslationUnit tu, CXCursor cursor) {
  CXToken *tokens = NULL;
  unsigned count = 0;
  clang_tokenize(tu, clang_getCursorExtent(cursor), &tokens, &count);
  int not = 0;
  if (count) {
    char *text = take_string(clang_getTokenSpelling(tu, tokens[0]));
    not = strcmp(text, "!") == 0;
    free(text);
  }
  clang_disposeTokens(tu, tokens, count);
  return not ;
}

static int is_zero(CXCursor expr) {
  long long v;
  return bwsc__eval_int(bwsc__strip_casts(expr), &v) && v == 0;
}

/* For a test that holds when `x` is 0 (`x == 0`, `0 == x`, `!x`): x, or a
 * null cursor. `wanted` says whether x is the one looked for; the
 * operator, which takes tokenizing, is checked only then. */
static CXCursor zero_test(CXTranslationUnit tu, CXCursor cond,
                          int (*wanted)(CXTranslationUnit, CXCursor, void *),
                          void *data) {
  CXCursor none = clang_getNullCursor();
  CXCursor c = bwsc__strip_casts(cond);
  enum CXCursorKind kind = clang_getCursorKind(c);
  if (kind != CXCursor_UnaryOperator && kind != CXCursor_BinaryOperator)
    return none;
  bwsc__kids k = bwsc__kids_of(c);
  if (kind == CXCursor_UnaryOperator)
    return k.n == 1 && wanted(tu, k.at[0], data) && starts_with_not(tu, c)
               ? k.at[0]
               : none;
  if (k.n != 2)
    return none;
  CXCursor x;
  if (is_zero(k.at[1]) && !is_zero(k.at[0]))
    x = k.at[0];
  else if (is_zero(k.at[0]) && !is_zero(k.at[1]))
    x = k.at[1];
  else
    return none;
  return wanted(tu, x, data) && bwsc__is_equality(tu, c) ? x : none;
}

static int is_fork_value(CXTranslationUnit tu, CXCursor x, void *data) {
  (void)data;
  CXCursor var;
  return fork_value(tu, x, &var);
}

/* x names the variable *data. */
static int is_var(CXTranslationUnit tu, CXCursor x, void *data) {
  (void)tu;
  CXCursor v = var_of(x);
  return !clang_Cursor_isNull(v) && clang_equalCursors(v, *(CXCursor *)data);
}

/* `if (fork() == 0)`, `if ((pid = fork()) == 0)`, `if (!fork())`. */
static int if_forks(CXTranslationUnit tu, CXCursor if_stmt,
                    CXSourceRange *region) {
  bwsc__kids k = bwsc__kids_of(if_stmt);
  if (k.n < 2 ||
      clang_Cursor_isNull(zero_test(tu, k.at[0], is_fork_value, NULL)))
    return 0;
  *region = clang_getCursorExtent(k.at[1]);
  return 1;
}

typedef struct case_scan {
  int found, ended;
  CXSourceLocation begin, end;
} case_scan;

static enum CXChildVisitResult case_visitor(CXCursor cursor, CXCursor parent,
                                            CXClientData data) {
  (void)parent;
  case_scan *s = data;
  enum CXCursorKind kind = clang_getCursorKind(cursor);
  int label = kind == CXCursor_CaseStmt || kind == CXCursor_DefaultStmt;
  if (s->found && label) {
    s->end = clang_getCursorLocation(cursor);
    s->ended = 1;
    return CXChildVisit_Break;
  }
  if (!s->found && kind == CXCursor_CaseStmt) {
    bwsc__kids k = bwsc__kids_of(cursor);
    if (k.n >= 1 && is_zero(k.at[0])) {
      s->found = 1;
      s->begin = clang_getCursorLocation(cursor);
    }
  }
  return CXChildVisit_Continue;
}

/* `switch (fork())` or `switch (pid = fork())`: from `case 0:` to the
 * next label of the switch's body, or its end. */
static int switch_forks(CXTranslationUnit tu, CXCursor sw,
                        CXSourceRange *region) {
  bwsc__kids k = bwsc__kids_of(sw);
  CXCursor var;
  if (k.n != 2 || !fork_value(tu, k.at[0], &var) ||
      clang_getCursorKind(k.at[1]) != CXCursor_CompoundStmt)
    return 0;
  case_scan s = {0, 0, clang_getNullLocation(), clang_getNullLocation()};
  clang_visitChildren(k.at[1], case_visitor, &s);
  if (!s.found)
    return 0;
  *region = clang_getRange(
      s.begin,
      s.ended ? s.end : clang_getRangeEnd(clang_getCursorExtent(k.at[1])));
  return 1;
}

/* The variable `stmt` stores fork()'s result into: `v = fork();` or a
 * declaration `T v = fork();` of one variable; else a null cursor. */
static CXCursor forked_into(CXTranslationUnit tu, CXCursor stmt) {
  CXCursor var = clang_getNullCursor();
  if (clang_getCursorKind(stmt) == CXCursor_DeclStmt) {
    bwsc__kids k = bwsc__kids_of(stmt);
    if (k.n != 1 || clang_getCursorKind(k.at[0]) != CXCursor_VarDecl)
      return var;
    bwsc__kids init = bwsc__kids_of(k.at[0]);
    for (int i = 0; i < init.n && i < 3; i++)
      if (clang_isExpression(clang_getCursorKind(init.at[i])))
        return is_fork_call(init.at[i]) ? k.at[0] : var;
    return var;
  }
  if (fork_value(tu, stmt, &var))
    return var;
  return clang_getNullCursor();
}

/* In an if/else-if chain: the then-branch of the first `v == 0` test. */
static int chain_forks(CXTranslationUnit tu, CXCursor if_stmt, CXCursor var,
                       CXSourceRange *region) {
  for (int depth = 0; depth < 8; depth++) {
    bwsc__kids k = bwsc__kids_of(if_stmt);
    if (k.n < 2)
      return 0;
    if (!clang_Cursor_isNull(zero_test(tu, k.at[0], is_var, &var))) {
      *region = clang_getCursorExtent(k.at[1]);
      return 1;
    }
    if (k.n < 3 || clang_getCursorKind(k.at[2]) != CXCursor_IfStmt)
      return 0;
    if_stmt = k.at[2];
  }
  return 0;
}

typedef struct block_scan {
  CXTranslationUnit tu;
  CXCursor var; /* set by the statement before */
  CXSourceRange *out;
  int n, max;
} block_scan;

static enum CXChildVisitResult block_visitor(CXCursor cursor, CXCursor parent,
                                             CXClientData data) {
  (void)parent;
  block_scan *b = data;
  if (b->n < b->max && !clang_Cursor_isNull(b->var) &&
      clang_getCursorKind(cursor) == CXCursor_IfStmt &&
      chain_forks(b->tu, cursor, b->var, &b->out[b->n]))
    b->n++;
  b->var = forked_into(b->tu, cursor);
  return CXChildVisit_Continue;
}

int bwsc__fork_regions(CXTranslationUnit tu, CXCursor stmt, CXSourceRange *out,
                       int max) {
  if (max <= 0)
    return 0;
  switch (clang_getCursorKind(stmt)) {
  case CXCursor_IfStmt:
    return if_forks(tu, stmt, out);
  case CXCursor_SwitchStmt:
    return switch_forks(tu, stmt, out);
  case CXCursor_CompoundStmt: {
    block_scan b = {tu, clang_getNullCursor(), out, 0, max};
    clang_visitChildren(stmt, block_visitor, &b);
    return b.n;
  }
  default:
    return 0;
  }
}
