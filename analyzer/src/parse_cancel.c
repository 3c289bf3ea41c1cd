/* parse_cancel.c - a local struct's fields that hold a cancellable already
 * cancelled when a call takes the struct's address (a registration's user
 * data: `data.cancellable = c; g_cancellable_cancel (c); g_idle_add (cb,
 * &data);`).
 *
 * Invariants: only the statements of the call's own block before the
 * call's statement count (each of them runs before the call, once the
 * call runs); a label or case among them, a loop around the call, a
 * write of the field or `&v` after the call anywhere in the function, and
 * a write of the cancellable's variable between its cancel and its store
 * into the field, each leave the field out (the conservative answer).
 */
#include "parse_clang.h"

#include <stdlib.h>
#include <string.h>

#define CANCEL_FN "g_cancellable_cancel"

static unsigned begin_of(CXCursor cursor) {
  unsigned begin, end;
  bwsc__expansion_offsets(cursor, &begin, &end);
  return begin;
}

static unsigned end_of(CXCursor cursor) {
  unsigned begin, end;
  bwsc__expansion_offsets(cursor, &begin, &end);
  return end;
}

/* `v.f` of struct variable `var`: 1 and *field. */
static int member_of(CXCursor expr, CXCursor var, CXCursor *field) {
  CXCursor e = bwsc__strip_casts(expr);
  if (clang_getCursorKind(e) != CXCursor_MemberRefExpr)
    return 0;
  child_pick pick = bwsc__pick_children(e);
  if (!pick.nexpr || !bwsc__names_var(pick.first, var))
    return 0;
  *field = clang_getCursorReferenced(e);
  return clang_getCursorKind(*field) == CXCursor_FieldDecl;
}

static int is_cancel(CXCursor call) {
  if (clang_Cursor_getNumArguments(call) != 1)
    return 0;
  char *name = bwsc__callee_name(call);
  int yes = name && !strcmp(name, CANCEL_FN);
  free(name);
  return yes;
}

/* The statement is `g_cancellable_cancel (x)`: its argument. */
static int cancel_stmt(CXCursor stmt, CXCursor *arg) {
  CXCursor e = bwsc__strip_casts(stmt);
  if (!is_cancel(e))
    return 0;
  *arg = clang_Cursor_getArgument(e, 0);
  return 1;
}

/* What a scan looks for: a write of `var` (field NULL) or of `var.field`
 * (also `&var` and a store of the whole struct), or a label; from offset
 * `from` on only, but for the cursor `skip` (the call's own argument). */
typedef struct write_find {
  CXTranslationUnit tu;
  CXCursor var, field, skip;
  int has_field, has_skip; /* has_skip: after the call, where labels do not
                              matter */
  unsigned from;
  int found;
} write_find;

/* The target `e` (peeled of casts) is what the scan looks for: the
 * variable itself (for a field, a store of the whole struct or `&v`), or
 * the field. */
static int target_hit(write_find *w, CXCursor e) {
  CXCursor f;
  if (bwsc__names_var(e, w->var))
    return 1;
  return w->has_field && member_of(e, w->var, &f) &&
         clang_equalCursors(f, w->field);
}

/* By kind and extent: two cursors for one node need not be bit-equal. */
static int same_node(CXCursor a, CXCursor b) {
  return clang_getCursorKind(a) == clang_getCursorKind(b) &&
         clang_equalRanges(clang_getCursorExtent(a), clang_getCursorExtent(b));
}

static enum CXChildVisitResult write_visitor(CXCursor cursor, CXCursor parent,
                                             CXClientData data) {
  (void)parent;
  write_find *w = data;
  enum CXCursorKind kind = clang_getCursorKind(cursor);
  if (w->has_skip && same_node(cursor, w->skip))
    return CXChildVisit_Continue;
  if (begin_of(cursor) < w->from && end_of(cursor) <= w->from)
    return CXChildVisit_Continue;
  int at = begin_of(cursor) >= w->from;
  child_pick pick;
  switch (kind) {
  case CXCursor_LabelStmt:
  case CXCursor_CaseStmt:
  case CXCursor_DefaultStmt:
    w->found |= at && !w->has_skip;
    break;
  case CXCursor_VarDecl:
    w->found |= at && clang_equalCursors(cursor, w->var);
    break;
  case CXCursor_BinaryOperator:
    pick = bwsc__pick_children(cursor);
    if (at && pick.nexpr == 2 && bwsc__is_assignment(w->tu, cursor) &&
        target_hit(w, pick.first))
      w->found = 1;
    break;
  case CXCursor_CompoundAssignOperator:
  case CXCursor_UnaryOperator:
    pick = bwsc__pick_children(cursor);
    if (at && pick.nexpr == 1 && target_hit(w, pick.first) &&
        (kind == CXCursor_CompoundAssignOperator ||
         bwsc__unary_writes(w->tu, cursor)))
      w->found = 1;
    break;
  default:
    break;
  }
  return w->found ? CXChildVisit_Break : CXChildVisit_Recurse;
}

static int writes(write_find *w, CXCursor stmt) {
  w->found = 0;
  write_visitor(stmt, stmt, w);
  if (!w->found)
    clang_visitChildren(stmt, write_visitor, w);
  return w->found;
}

/* A loop of `func` around offset `at`. */
typedef struct loop_find {
  unsigned at;
  int found;
} loop_find;

static enum CXChildVisitResult loop_visitor(CXCursor cursor, CXCursor parent,
                                            CXClientData data) {
  (void)parent;
  loop_find *l = data;
  enum CXCursorKind kind = clang_getCursorKind(cursor);
  if (l->at < begin_of(cursor) || l->at >= end_of(cursor))
    return CXChildVisit_Continue;
  if (kind == CXCursor_ForStmt || kind == CXCursor_WhileStmt ||
      kind == CXCursor_DoStmt) {
    l->found = 1;
    return CXChildVisit_Break;
  }
  return CXChildVisit_Recurse;
}

/* The one argument `&v` of a local struct variable: 1, *var and *arg. */
static int struct_address(CXCursor call, CXCursor *var, CXCursor *arg) {
  int n = clang_Cursor_getNumArguments(call), count = 0;
  for (int i = 0; i < n; i++) {
    CXCursor a = bwsc__strip_casts(clang_Cursor_getArgument(call, (unsigned)i));
    if (clang_getCursorKind(a) != CXCursor_UnaryOperator)
      continue;
    child_pick pick = bwsc__pick_children(a);
    CXCursor e = pick.nexpr == 1 ? bwsc__strip_casts(pick.first) : a;
    if (clang_getCursorKind(e) != CXCursor_DeclRefExpr)
      continue;
    CXCursor v = clang_getCursorReferenced(e);
    CXType type = clang_getCanonicalType(clang_getCursorType(v));
    if (clang_getCursorKind(v) != CXCursor_VarDecl ||
        clang_Cursor_hasVarDeclGlobalStorage(v) || type.kind != CXType_Record)
      continue;
    *var = v;
    *arg = a;
    count++;
  }
  return count == 1;
}

/* Field `field` of `var` holds a cancelled cancellable at stmts[index]:
 * the closest earlier statement that writes it (s) is followed by a
 * cancel of the field, or is `v.f = c` of a variable c cancelled in
 * another earlier statement, with no write of c between the two. */
static int field_cancelled(CXTranslationUnit tu, CXCursor *stmts, size_t index,
                           CXCursor var, CXCursor field) {
  write_find w = {tu, var, field, field, 1, 0, 0, 0};
  size_t s = index;
  while (s-- > 0 && !writes(&w, stmts[s]))
    ;
  if (s == (size_t)-1)
    return 0;
  CXCursor arg, f;
  for (size_t c = s + 1; c < index; c++)
    if (cancel_stmt(stmts[c], &arg) && member_of(arg, var, &f) &&
        clang_equalCursors(f, field))
      return 1;
  CXCursor store = bwsc__strip_casts(stmts[s]);
  child_pick pick = bwsc__pick_children(store);
  if (clang_getCursorKind(store) != CXCursor_BinaryOperator ||
      pick.nexpr != 2 || !bwsc__is_assignment(tu, store) ||
      !member_of(pick.first, var, &f))
    return 0;
  CXCursor from = bwsc__strip_casts(pick.last);
  if (clang_getCursorKind(from) != CXCursor_DeclRefExpr)
    return 0;
  CXCursor local = clang_getCursorReferenced(from);
  if (clang_getCursorKind(local) != CXCursor_VarDecl ||
      clang_Cursor_hasVarDeclGlobalStorage(local))
    return 0;
  write_find lw = {tu, local, local, local, 0, 0, 0, 0};
  for (size_t c = 0; c < index; c++) {
    if (c == s || !cancel_stmt(stmts[c], &arg) || !bwsc__names_var(arg, local))
      continue;
    size_t lo = c < s ? c : s, hi = c < s ? s : c, k;
    for (k = lo + 1; k < hi && !writes(&lw, stmts[k]); k++)
      ;
    if (k == hi)
      return 1;
  }
  return 0;
}

char *bwsc__cancelled_fields(CXCursor func, CXCursor call) {
  CXCursor var, arg;
  if (!struct_address(call, &var, &arg))
    return NULL;
  loop_find loop = {begin_of(call), 0};
  clang_visitChildren(func, loop_visitor, &loop);
  if (loop.found)
    return NULL;
  CXTranslationUnit tu = clang_Cursor_getTranslationUnit(call);
  CXCursor *stmts = NULL;
  size_t index = 0;
  size_t n = bwsc__block_stmts(func, call, &stmts, &index);
  char *out = NULL;
  for (size_t j = 0; j < index && j < n; j++) {
    CXCursor e = bwsc__strip_casts(stmts[j]), field, cancelled;
    child_pick pick = bwsc__pick_children(e);
    if (cancel_stmt(stmts[j], &cancelled) && member_of(cancelled, var, &field))
      ;
    else if (clang_getCursorKind(e) != CXCursor_BinaryOperator ||
             pick.nexpr != 2 || !bwsc__is_assignment(tu, e) ||
             !member_of(pick.first, var, &field))
      continue;
    if (!bwsc__is_cancellable(clang_getCursorType(field)))
      continue;
    char *usr = take_string(clang_getCursorUSR(field));
    int seen = !*usr || (out && strstr(out, usr)); /* once per field */
    /* Nothing after the call writes the field or takes &v. */
    write_find after = {tu, var, field, arg, 1, 1, end_of(call), 0};
    if (!seen && !writes(&after, func) &&
        field_cancelled(tu, stmts, index, var, field)) {
      char *joined =
          out ? bwsc__xasprintf("%s %s", out, usr) : bwsc__xstrdup(usr);
      free(out);
      out = joined;
    }
    free(usr);
  }
  free(stmts);
  return out;
}

typedef struct cancel_find {
  int found;
} cancel_find;

static enum CXChildVisitResult cancel_visitor(CXCursor cursor, CXCursor parent,
                                              CXClientData data) {
  (void)parent;
  cancel_find *c = data;
  c->found = is_cancel(cursor);
  return c->found ? CXChildVisit_Break : CXChildVisit_Recurse;
}

int bwsc__calls_cancel(CXCursor func) {
  cancel_find c = {0};
  clang_visitChildren(func, cancel_visitor, &c);
  return c.found;
}
