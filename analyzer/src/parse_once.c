/* parse_once.c - once-only initialisation: the part of a function that runs
 * only while a variable of static storage is still unset, and that sets it
 * (a lazily made singleton, a table loaded on first use).
 *
 * Invariants: a region is a source range inside one function body, found
 * from an `if` the body visitor meets; a region already found is kept
 * while the ifs met lie inside it (nested tests of the same start-up);
 * only these shapes count, each requiring the code to set the variable:
 * `if (!v) { ... v = x; }` (the then-branch; v may be a local copy of the
 * static that the branch stores back, as GLib's localcharset.c does),
 * `if (v) return ...;` followed by the rest of the body that sets v
 * (libuv's uv_default_loop), and `if (gate(&v)) {
 * ... other(&v, x); }` for a flag or pointer v, not a lock (GLib's
 * g_once_init_enter/leave), or `if (gate(p)) { ... other(p, x); }` for a
 * pointer p to one, the gate also as a statement expression, bare or under
 * `__extension__`; a gate's region holds the condition too, since the gate call
 * waits only while another thread runs that initialisation.
 */
#include "parse_once.h"

#include <stdlib.h>
#include <string.h>

/* A variable that keeps its value from call to call: a global or a
 * function's static. */
static int static_storage(CXCursor ref) {
  if (clang_getCursorKind(ref) != CXCursor_VarDecl)
    return 0;
  return clang_Cursor_getStorageClass(ref) == CX_SC_Static ||
         clang_getCursorKind(clang_getCursorSemanticParent(ref)) ==
             CXCursor_TranslationUnit;
}

/* The variable `expr` names (through casts and parentheses). */
static int any_var(CXCursor expr, CXCursor *var) {
  CXCursor peeled = bwsc__strip_casts(expr);
  if (clang_getCursorKind(peeled) != CXCursor_DeclRefExpr)
    return 0;
  *var = clang_getCursorReferenced(peeled);
  return clang_getCursorKind(*var) == CXCursor_VarDecl;
}

/* ... if it has static storage. */
static int static_var(CXCursor expr, CXCursor *var) {
  return any_var(expr, var) && static_storage(*var);
}

/* A pointer or an integer: a flag or a handle, not a lock (a struct). */
static int scalar(CXCursor var) {
  enum CXTypeKind kind = clang_getCanonicalType(clang_getCursorType(var)).kind;
  return kind == CXType_Pointer ||
         (kind >= CXType_Bool && kind <= CXType_Int128);
}

/* An "unset" value: NULL, 0, FALSE, or -1 (a descriptor not yet open).
 * NULL's cast to a pointer is stripped: libclang evaluates integers only. */
static int unset_value(CXCursor expr) {
  long long v;
  return bwsc__eval_int(bwsc__strip_casts(expr), &v) && (v == 0 || v == -1);
}

/* The first token of `cursor` that is one of `a`, `b`: 1 for a, 2 for b. */
static int first_of(CXTranslationUnit tu, CXCursor cursor, const char *a,
                    const char *b) {
  CXToken *tokens = NULL;
  unsigned count = 0;
  int found = 0;
  clang_tokenize(tu, clang_getCursorExtent(cursor), &tokens, &count);
  for (unsigned i = 0; i < count && !found; i++) {
    char *text = take_string(clang_getTokenSpelling(tu, tokens[i]));
    found = strcmp(text, a) == 0 ? 1 : strcmp(text, b) == 0 ? 2 : 0;
    free(text);
  }
  clang_disposeTokens(tu, tokens, count);
  return found;
}

/* `&v`, v a scalar of static storage. */
static int address_of_static(CXTranslationUnit tu, CXCursor expr,
                             CXCursor *var) {
  CXCursor peeled = bwsc__strip_casts(expr);
  child_pick pick = bwsc__pick_children(peeled);
  return clang_getCursorKind(peeled) == CXCursor_UnaryOperator &&
         pick.nexpr == 1 && first_of(tu, peeled, "&", "&") == 1 &&
         static_var(pick.first, var) && scalar(*var);
}

/* `p`, a local or parameter pointing to a word: the flag's address
 * handed down (GLib's g_dbus_error_register_error_domain(name, &quark,
 * ...) gates on its `quark` pointer). A pointer to a struct is a lock. */
static int pointer_to_flag(CXCursor expr, CXCursor *var) {
  CXCursor peeled = bwsc__strip_casts(expr);
  if (clang_getCursorKind(peeled) != CXCursor_DeclRefExpr)
    return 0;
  *var = clang_getCursorReferenced(peeled);
  enum CXCursorKind kind = clang_getCursorKind(*var);
  if (kind != CXCursor_ParmDecl &&
      (kind != CXCursor_VarDecl || static_storage(*var)))
    return 0;
  CXType type = clang_getCanonicalType(clang_getCursorType(*var));
  if (type.kind != CXType_Pointer)
    return 0;
  /* A once flag handed down is a word (gsize): not a pointer (GLib's
   * GError **error, given to most calls), a string, nor an int or a
   * buffer that a check-and-release pair is given. */
  enum CXTypeKind to = clang_getCanonicalType(clang_getPointeeType(type)).kind;
  return to == CXType_Long || to == CXType_ULong || to == CXType_LongLong ||
         to == CXType_ULongLong;
}

/* A call given `&v` or a pointer to the flag (a gate such as GLib's
 * g_once_init_enter). */
static int call_on_address(CXTranslationUnit tu, CXCursor call, CXCursor *var) {
  int n = clang_Cursor_getNumArguments(call);
  for (int i = 0; i < n; i++) {
    CXCursor arg = clang_Cursor_getArgument(call, (unsigned)i);
    if (address_of_static(tu, arg, var) || pointer_to_flag(arg, var))
      return 1;
  }
  return 0;
}

static int stores_into(CXTranslationUnit tu, CXCursor code, CXCursor *var,
                       int gate);

/* A gate written as a macro that expands to a statement expression
 * (GLib's g_once_init_enter checks the pointer atomically first): the
 * call given `&v` inside it. */
static int gate_inside(CXTranslationUnit tu, CXCursor expr, CXCursor *var) {
  *var = clang_getNullCursor();
  return stores_into(tu, expr, var, 1);
}

/* `__extension__ e` as `e`: GLib's g_once_init_enter is
 * `(G_GNUC_EXTENSION ({ ... }))`, and clang keeps the keyword as a unary
 * operator around the statement expression. libclang 14 cannot say a unary
 * operator's kind, and the tokens of a macro's expansion are those of the
 * macro's call, so the operator is read from the one token at the
 * cursor's place, which clang_getToken takes where it is spelled. */
static CXCursor without_extension(CXTranslationUnit tu, CXCursor expr) {
  if (clang_getCursorKind(expr) != CXCursor_UnaryOperator)
    return expr;
  child_pick pick = bwsc__pick_children(expr);
  if (pick.nexpr != 1)
    return expr;
  CXCursor inner = bwsc__strip_casts(pick.first);
  CXToken *token = clang_getCursorKind(inner) == CXCursor_StmtExpr
                       ? clang_getToken(tu, clang_getCursorLocation(expr))
                       : NULL;
  if (!token)
    return expr;
  char *text = take_string(clang_getTokenSpelling(tu, *token));
  int extension = strcmp(text, "__extension__") == 0;
  free(text);
  clang_disposeTokens(tu, token, 1);
  return extension ? inner : expr;
}

/* A call of __builtin_expect (GLib's G_LIKELY / G_UNLIKELY): its first
 * argument, which is what the condition tests, into *inner. */
static int expected(CXCursor call, CXCursor *inner) {
  char *name = take_string(clang_getCursorSpelling(call));
  int builtin = strcmp(name, "__builtin_expect") == 0 &&
                clang_Cursor_getNumArguments(call) == 2;
  free(name);
  if (builtin)
    *inner = clang_Cursor_getArgument(call, 0);
  return builtin;
}

/* The variable `cond` tests (a static, or a local copy of one), and
 * whether the test holds while it is unset (`!v`, `v == NULL`: UNSET) or
 * once it is set (`v`, `v != NULL`: SET), or the condition is a call
 * given `&v` (GATE); NONE for any other condition. */
enum { NONE, UNSET, SET, GATE };
static int tested(CXTranslationUnit tu, CXCursor cond, CXCursor *var) {
  CXCursor expr = without_extension(tu, bwsc__strip_casts(cond));
  enum CXCursorKind kind = clang_getCursorKind(expr);
  if (kind == CXCursor_CallExpr && expected(expr, &cond))
    return tested(tu, cond, var); /* G_UNLIKELY (gate (&v)) */
  if (kind == CXCursor_DeclRefExpr)
    return any_var(expr, var) ? SET : NONE;
  if (kind == CXCursor_CallExpr)
    return call_on_address(tu, expr, var) ? GATE : NONE;
  if (kind == CXCursor_StmtExpr)
    return gate_inside(tu, expr, var) ? GATE : NONE;
  child_pick pick = bwsc__pick_children(expr);
  if (kind == CXCursor_UnaryOperator && pick.nexpr == 1)
    return first_of(tu, expr, "!", "!") == 1 && any_var(pick.first, var) ? UNSET
                                                                         : NONE;
  if (kind != CXCursor_BinaryOperator || pick.nexpr != 2)
    return NONE;
  if (!(any_var(pick.first, var) && unset_value(pick.last)) &&
      !(any_var(pick.last, var) && unset_value(pick.first)))
    return NONE;
  int op = first_of(tu, expr, "==", "!=");
  return op == 1 ? UNSET : op == 2 ? SET : NONE;
}

typedef struct store_search {
  CXTranslationUnit tu;
  CXCursor *var; /* a null cursor: any gate's variable, set when found */
  int gate;      /* look for a call given &var rather than a store */
  int found;
} store_search;

/* Does `cursor` set the static the search is about: `v = x` for a static
 * v, `s = v` (a static s) for a local copy v, a call given `&v` for a
 * gate (g_once_init_leave)? */
static int sets(store_search *s, CXCursor cursor) {
  CXCursor var, from;
  enum CXCursorKind kind = clang_getCursorKind(cursor);
  if (s->gate) {
    if (kind != CXCursor_CallExpr || !call_on_address(s->tu, cursor, &var))
      return 0;
    if (clang_Cursor_isNull(*s->var))
      *s->var = var;
    return clang_equalCursors(var, *s->var);
  }
  if (kind != CXCursor_BinaryOperator || !bwsc__is_assignment(s->tu, cursor))
    return 0;
  child_pick pick = bwsc__pick_children(cursor);
  if (pick.nexpr != 2 || !static_var(pick.first, &var))
    return 0;
  if (static_storage(*s->var))
    return clang_equalCursors(var, *s->var);
  return any_var(pick.last, &from) && clang_equalCursors(from, *s->var);
}

static enum CXChildVisitResult store_visitor(CXCursor cursor, CXCursor parent,
                                             CXClientData data) {
  (void)parent;
  store_search *s = data;
  if (sets(s, cursor)) {
    s->found = 1;
    return CXChildVisit_Break;
  }
  return CXChildVisit_Recurse;
}

static int stores_into(CXTranslationUnit tu, CXCursor code, CXCursor *var,
                       int gate) {
  store_search s = {tu, var, gate, 0};
  if (sets(&s, code))
    return 1;
  clang_visitChildren(code, store_visitor, &s);
  return s.found;
}

/* What an if (or a block) is made of: its first two children (an if's
 * condition and then-branch; a C `if` has no init), how many children
 * there are, and how many of them are return statements. */
typedef struct parts {
  CXCursor first, second;
  int n, returns;
} parts;

static enum CXChildVisitResult part_visitor(CXCursor cursor, CXCursor parent,
                                            CXClientData data) {
  (void)parent;
  parts *p = data;
  if (p->n == 0)
    p->first = cursor;
  else if (p->n == 1)
    p->second = cursor;
  p->returns += clang_getCursorKind(cursor) == CXCursor_ReturnStmt;
  p->n++;
  return CXChildVisit_Continue;
}

/* `return ...;` alone, or in braces. */
static int only_returns(CXCursor stmt) {
  if (clang_getCursorKind(stmt) == CXCursor_CompoundStmt) {
    parts inner = {clang_getNullCursor(), clang_getNullCursor(), 0, 0};
    clang_visitChildren(stmt, part_visitor, &inner);
    return inner.n == 1 && inner.returns == 1;
  }
  return clang_getCursorKind(stmt) == CXCursor_ReturnStmt;
}

/* File and offset of a cursor's place (expansion: where a reader sees it). */
static unsigned place(CXSourceLocation loc, CXFile *file) {
  unsigned offset = 0;
  clang_getExpansionLocation(loc, file, NULL, NULL, &offset);
  return offset;
}

int bwsc__once_covers(CXSourceRange region, CXCursor cursor) {
  if (clang_Range_isNull(region))
    return 0;
  CXFile file = NULL, begin_file = NULL, end_file = NULL;
  unsigned at = place(clang_getCursorLocation(cursor), &file);
  unsigned begin = place(clang_getRangeStart(region), &begin_file);
  unsigned end = place(clang_getRangeEnd(region), &end_file);
  return file && begin_file && clang_File_isEqual(file, begin_file) &&
         clang_File_isEqual(file, end_file) && begin <= at && at < end;
}

void bwsc__once_region(CXTranslationUnit tu, CXCursor if_stmt, CXCursor func,
                       CXSourceRange *region) {
  if (clang_Cursor_isNull(func) || bwsc__once_covers(*region, if_stmt))
    return;
  parts p = {clang_getNullCursor(), clang_getNullCursor(), 0, 0};
  clang_visitChildren(if_stmt, part_visitor, &p);
  CXCursor var;
  int test = p.n >= 2 ? tested(tu, p.first, &var) : NONE;
  if ((test == UNSET || test == GATE) &&
      stores_into(tu, p.second, &var, test == GATE)) {
    *region = clang_getCursorExtent(p.second);
    /* The gate itself too: it waits only while another thread runs the
     * same initialisation (g_once_init_enter's g_cond_wait). */
    if (test == GATE)
      *region =
          clang_getRange(clang_getRangeStart(clang_getCursorExtent(p.first)),
                         clang_getRangeEnd(*region));
  } else if (test == SET && p.n == 2 && only_returns(p.second) &&
             stores_into(tu, func, &var, 0)) {
    /* From the end of the if to the end of the function's body. */
    *region = clang_getRange(clang_getRangeEnd(clang_getCursorExtent(if_stmt)),
                             clang_getRangeEnd(clang_getCursorExtent(func)));
  }
}
