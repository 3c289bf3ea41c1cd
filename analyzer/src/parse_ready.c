/* parse_ready.c - readiness tests just before a call (see parse_ready.h).
 *
 * Invariants: a test counts only when the assertion's or the if's whole
 * condition is the test call, and the covered call is the outermost call
 * of the very next statement (or of the branch's first statement); the
 * object is compared by declaration and by source text, so `a->out` and
 * `b->out` differ. Every string is freed by bwsc__ready_drop.
 */
#include "parse_ready.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

/* Assertion macros that stop the program (or the function) unless their
 * condition holds: what follows them runs only when it did. Not
 * g_warn_if_fail (it goes on), nor g_assert_false (the test failed). */
static const char *const truth_asserts[] = {"assert",
                                            "g_assert",
                                            "g_assert_true",
                                            "g_return_if_fail",
                                            "g_return_val_if_fail",
                                            NULL};

/* The variable, field or parameter `expr` names through casts and GLib's
 * checked casts: 1 with its declaration and source text (owned). */
static int object_of(CXTranslationUnit tu, CXCursor expr, CXCursor *decl,
                     char **text) {
  CXCursor e = bwsc__strip_casts(expr);
  for (int depth = 0; depth < 4; depth++) {
    char *name = bwsc__callee_name(e);
    int cast = name && strcmp(name, "g_type_check_instance_cast") == 0 &&
               clang_Cursor_getNumArguments(e) == 2;
    free(name);
    if (!cast)
      break;
    e = bwsc__strip_casts(clang_Cursor_getArgument(e, 0));
  }
  enum CXCursorKind kind = clang_getCursorKind(e);
  if (kind != CXCursor_DeclRefExpr && kind != CXCursor_MemberRefExpr)
    return 0;
  *decl = clang_getCursorReferenced(e);
  if (clang_Cursor_isNull(*decl))
    return 0;
  *text = bwsc__source_text(tu, e);
  return *text != NULL;
}

/* The statement's outermost call: itself, an assignment's value, a lone
 * declaration's initialiser, or what it returns; else a null cursor. */
static CXCursor outermost_call(CXTranslationUnit tu, CXCursor stmt) {
  CXCursor e = stmt;
  for (int depth = 0; depth < 4; depth++) {
    e = bwsc__strip_casts(e);
    enum CXCursorKind kind = clang_getCursorKind(e);
    if (kind == CXCursor_CallExpr)
      return e;
    bwsc__kids k = bwsc__kids_of(e);
    if (kind == CXCursor_BinaryOperator && k.n == 2 &&
        bwsc__binop_is(tu, e, "="))
      e = k.at[1];
    else if ((kind == CXCursor_DeclStmt || kind == CXCursor_ReturnStmt) &&
             k.n == 1)
      e = k.at[0];
    else if (kind == CXCursor_VarDecl && k.n >= 1 && k.n <= 3)
      e = k.at[k.n - 1]; /* the initialiser follows any type reference */
    else
      break;
  }
  return clang_getNullCursor();
}

static unsigned offset_of(CXCursor cursor) {
  unsigned offset = 0;
  clang_getExpansionLocation(clang_getCursorLocation(cursor), NULL, NULL, NULL,
                             &offset);
  return offset;
}

/* Skips blanks (and newlines) from `i` in text[0..len). */
static size_t skip_blanks(const char *text, size_t len, size_t i) {
  while (i < len && isspace((unsigned char)text[i]))
    i++;
  return i;
}

/* An identifier at `i`: its length, else 0. */
static size_t ident_at(const char *text, size_t len, size_t i) {
  size_t n = 0;
  if (i < len && (isalpha((unsigned char)text[i]) || text[i] == '_'))
    while (i + n < len &&
           (isalnum((unsigned char)text[i + n]) || text[i + n] == '_'))
      n++;
  return n;
}

/* The name of the function an assertion statement's whole condition
 * calls: `g_assert_true (T (...))`, `g_return_val_if_fail (T (...), v)`,
 * read from the text where the macro is used (a macro's statement has no
 * tokens of its own), owned; else NULL. */
static char *asserted_test(CXTranslationUnit tu, CXCursor stmt) {
  CXFile file = NULL;
  unsigned offset = 0;
  size_t len = 0;
  clang_getExpansionLocation(clang_getCursorLocation(stmt), &file, NULL, NULL,
                             &offset);
  const char *text = file ? clang_getFileContents(tu, file, &len) : NULL;
  if (!text || offset >= len)
    return NULL;
  size_t i = offset, n = ident_at(text, len, i);
  int known = 0, is_val = 0;
  for (size_t m = 0; n && truth_asserts[m]; m++)
    if (strlen(truth_asserts[m]) == n &&
        memcmp(truth_asserts[m], text + i, n) == 0) {
      known = 1;
      is_val = strcmp(truth_asserts[m], "g_return_val_if_fail") == 0;
    }
  if (!known)
    return NULL;
  i = skip_blanks(text, len, i + n);
  if (i >= len || text[i] != '(')
    return NULL;
  size_t name_at = skip_blanks(text, len, i + 1);
  size_t name_len = ident_at(text, len, name_at);
  i = skip_blanks(text, len, name_at + name_len);
  if (!name_len || i >= len || text[i] != '(')
    return NULL;
  /* The test's closing parenthesis must end the macro's condition; a
   * string or character literal is skipped whole. */
  int depth = 1;
  for (i++; i < len && depth; i++) {
    char c = text[i];
    if (c == '"' || c == '\'') {
      for (i++; i < len && text[i] != c; i++)
        if (text[i] == '\\')
          i++;
    } else if (c == '(') {
      depth++;
    } else if (c == ')') {
      depth--;
    }
  }
  i = skip_blanks(text, len, i);
  if (depth || i >= len || text[i] != (is_val ? ',' : ')'))
    return NULL;
  char *name = bwsc__xmalloc(name_len + 1);
  memcpy(name, text + name_at, name_len);
  name[name_len] = '\0';
  return name;
}

typedef struct find_call {
  const char *name;
  CXCursor found;
} find_call;

static enum CXChildVisitResult find_visitor(CXCursor cursor, CXCursor parent,
                                            CXClientData data) {
  (void)parent;
  find_call *f = data;
  char *name = bwsc__callee_name(cursor);
  int hit = name && strcmp(name, f->name) == 0;
  free(name);
  if (hit) {
    f->found = cursor;
    return CXChildVisit_Break;
  }
  return CXChildVisit_Recurse;
}

/* Records what `test` (a call of a function) tests about its arguments
 * for `call`, the covered call. */
static void add_tests(CXTranslationUnit tu, CXCursor test, CXCursor call,
                      bwsc__ready_test *out, int *n, int max) {
  char *name = bwsc__callee_name(test);
  if (!name || clang_Cursor_isNull(call)) {
    free(name);
    return;
  }
  int nargs = clang_Cursor_getNumArguments(test);
  for (int k = 0; k < nargs && *n < max; k++) {
    CXCursor decl;
    char *text;
    if (!object_of(tu, clang_Cursor_getArgument(test, (unsigned)k), &decl,
                   &text))
      continue;
    bwsc__ready_test *t = &out[(*n)++];
    t->call_offset = offset_of(call);
    t->object = decl;
    t->text = text;
    t->test = bwsc__xasprintf("%s#%d", name, k);
  }
  free(name);
}

/* Every child of a cursor (a block's statements), malloc'd. */
typedef struct stmts {
  CXCursor *at;
  size_t n, cap;
} stmts;

static enum CXChildVisitResult stmt_visitor(CXCursor cursor, CXCursor parent,
                                            CXClientData data) {
  (void)parent;
  stmts *s = data;
  *BWSC__PUSH(s->at, s->n, s->cap) = cursor;
  return CXChildVisit_Continue;
}

void bwsc__ready_tests(CXTranslationUnit tu, CXCursor block,
                       bwsc__ready_test *out, int *n, int max) {
  stmts k = {NULL, 0, 0};
  clang_visitChildren(block, stmt_visitor, &k);
  for (size_t i = 0; i < k.n && *n < max; i++) {
    CXCursor stmt = k.at[i];
    /* if (T (x)) call (x, ...); or if (T (x)) { call (x, ...); ... } */
    if (clang_getCursorKind(stmt) == CXCursor_IfStmt) {
      bwsc__kids b = bwsc__kids_of(stmt);
      if (b.n >= 2) {
        CXCursor cond = bwsc__strip_casts(b.at[0]);
        CXCursor then = b.at[1];
        if (clang_getCursorKind(then) == CXCursor_CompoundStmt) {
          bwsc__kids t = bwsc__kids_of(then);
          then = t.n ? t.at[0] : clang_getNullCursor();
        }
        if (clang_getCursorKind(cond) == CXCursor_CallExpr &&
            !clang_Cursor_isNull(then))
          add_tests(tu, cond, outermost_call(tu, then), out, n, max);
      }
    }
    /* assert (T (x)); call (x, ...); */
    if (i + 1 < k.n) {
      char *name = asserted_test(tu, stmt);
      if (name) {
        find_call f = {name, clang_getNullCursor()};
        clang_visitChildren(stmt, find_visitor, &f);
        if (!clang_Cursor_isNull(f.found))
          add_tests(tu, f.found, outermost_call(tu, k.at[i + 1]), out, n, max);
        free(name);
      }
    }
  }
  free(k.at);
}

char *bwsc__ready_tested(CXTranslationUnit tu, const bwsc__ready_test *tests,
                         int n, CXCursor call, CXCursor arg) {
  if (!n)
    return NULL;
  unsigned offset = offset_of(call);
  CXCursor decl;
  char *text = NULL;
  char *found = NULL;
  for (int i = 0; i < n && !found; i++) {
    if (tests[i].call_offset != offset)
      continue;
    if (!text && !object_of(tu, arg, &decl, &text))
      return NULL;
    if (clang_equalCursors(decl, tests[i].object) &&
        strcmp(text, tests[i].text) == 0)
      found = bwsc__xstrdup(tests[i].test);
  }
  free(text);
  return found;
}

void bwsc__ready_drop(bwsc__ready_test *tests, int *n) {
  for (int i = 0; i < *n; i++) {
    free(tests[i].text);
    free(tests[i].test);
  }
  *n = 0;
}
