/* parse_desc.c - the libclang side of descriptor tracking: which integer
 * variable, field or parameter an expression names, its constants and the
 * other ways it is written (`&fd`, `n++`), and the operator of a binary
 * expression (libclang 14 does not expose it: it is read from the token
 * between the two operands).
 *
 * Invariants: no function here allocates anything it does not return;
 * a binary operator written inside a macro has no tokens of its own and
 * counts as no OR (the conservative answer); it is an assignment when its
 * left operand is a bare lvalue (bwsc__is_assignment), as only an
 * assignment's is in C.
 */
#include "parse_clang.h"

#include "facts.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static enum CXChildVisitResult pick_visitor(CXCursor cursor, CXCursor parent,
                                            CXClientData data) {
  (void)parent;
  child_pick *pick = data;
  enum CXCursorKind kind = clang_getCursorKind(cursor);
  if (kind == CXCursor_MemberRef) {
    pick->member_ref = cursor;
    pick->has_member_ref = 1;
  } else if (clang_isExpression(kind)) {
    if (!pick->nexpr++)
      pick->first = cursor;
    pick->last = cursor;
  }
  return CXChildVisit_Continue;
}

child_pick bwsc__pick_children(CXCursor cursor) {
  child_pick pick;
  memset(&pick, 0, sizeof(pick));
  clang_visitChildren(cursor, pick_visitor, &pick);
  return pick;
}

CXCursor bwsc__peel(CXCursor cursor) {
  for (int depth = 0; depth < 64; depth++) {
    enum CXCursorKind kind = clang_getCursorKind(cursor);
    child_pick pick;
    switch (kind) {
    case CXCursor_UnexposedExpr:
    case CXCursor_ParenExpr:
    case CXCursor_CStyleCastExpr:
    case CXCursor_UnaryOperator:
      pick = bwsc__pick_children(cursor);
      if (pick.nexpr != 1 && kind != CXCursor_CStyleCastExpr)
        return cursor;
      if (!pick.nexpr)
        return cursor;
      cursor = pick.last;
      break;
    case CXCursor_ArraySubscriptExpr:
      pick = bwsc__pick_children(cursor);
      if (!pick.nexpr)
        return cursor;
      cursor = pick.first;
      break;
    default:
      return cursor;
    }
  }
  return cursor;
}

char *bwsc__param_slot(CXCursor parm) {
  CXCursor fn = clang_getCursorSemanticParent(parm);
  if (!is_function_kind(clang_getCursorKind(fn)))
    return NULL;
  int nargs = clang_Cursor_getNumArguments(fn);
  for (int i = 0; i < nargs; i++) {
    if (clang_equalCursors(clang_Cursor_getArgument(fn, (unsigned)i), parm)) {
      char *usr = take_string(clang_getCursorUSR(fn));
      char *slot = bwsc__xasprintf("%s#%d", usr, i);
      free(usr);
      return slot;
    }
  }
  return NULL;
}

static int is_integer(CXType type) {
  type = clang_getCanonicalType(type);
  if (type.kind == CXType_ConstantArray)
    type = clang_getCanonicalType(clang_getArrayElementType(type));
  switch (type.kind) {
  case CXType_Short:
  case CXType_UShort:
  case CXType_Int:
  case CXType_UInt:
  case CXType_Long:
  case CXType_ULong:
  case CXType_LongLong:
  case CXType_ULongLong:
  case CXType_Enum: /* GLib's flags: GFileMonitorFlags, GIOCondition */
    return 1;
  default:
    return 0;
  }
}

/* The name of the canonical pointee of a pointer type, or NULL. */
static char *pointee_name(CXType type) {
  type = clang_getCanonicalType(type);
  if (type.kind != CXType_Pointer)
    return NULL;
  return take_string(clang_getTypeSpelling(
      clang_getCanonicalType(clang_getPointeeType(type))));
}

/* A `FILE *`: stdio streams are tracked like descriptors (a FILE opened
 * on a memory-backed file never waits). */
static int is_file_pointer(CXType type) {
  char *name = pointee_name(type);
  int file = name && (!strcmp(name, "struct _IO_FILE") ||
                      !strcmp(name, "FILE") || !strcmp(name, "struct __sFILE"));
  free(name);
  return file;
}

/* `struct _G...InputStream` or `struct _G...OutputStream`: a GIO stream
 * class, whose constructor may say it never waits (a memory stream). */
static int is_stream_struct(const char *name) {
  static const char *const ends[] = {"InputStream", "OutputStream", NULL};
  size_t len = strlen(name);
  if (strncmp(name, "struct _G", 9) != 0)
    return 0;
  for (size_t i = 0; ends[i]; i++) {
    size_t n = strlen(ends[i]);
    if (len >= 9 + n && strcmp(name + len - n, ends[i]) == 0)
      return 1;
  }
  return 0;
}

/* An object whose blocking mode is its own (GIO's `GSocket *`: its
 * descriptor is always O_NONBLOCK, and g_socket_set_blocking says whether
 * its calls wait; a GIO stream, which a memory stream's constructor makes
 * one that never waits), or a `GSource *`, whose callback is a readiness
 * callback when a socket's source made it: tracked like descriptors. */
static int is_object_pointer(CXType type) {
  char *name = pointee_name(type);
  int object =
      name && (!strcmp(name, "struct _GSocket") ||
               !strcmp(name, "struct _GSource") || is_stream_struct(name));
  free(name);
  return object;
}

int bwsc__is_cancellable(CXType type) {
  char *name = pointee_name(type);
  int cancellable = name && !strcmp(name, "struct _GCancellable");
  free(name);
  return cancellable;
}

int bwsc__desc_key_is_int(CXCursor ref) {
  enum CXCursorKind kind = clang_getCursorKind(ref);
  return (kind == CXCursor_VarDecl || kind == CXCursor_FieldDecl ||
          kind == CXCursor_ParmDecl) &&
         is_integer(clang_getCursorType(ref));
}

int bwsc__desc_key_returned(CXCursor ref) {
  enum CXCursorKind kind = clang_getCursorKind(ref);
  return (kind == CXCursor_VarDecl || kind == CXCursor_FieldDecl ||
          kind == CXCursor_ParmDecl) &&
         (is_integer(clang_getCursorType(ref)) ||
          is_object_pointer(clang_getCursorType(ref)));
}

char *bwsc__desc_key(CXCursor ref) {
  enum CXCursorKind kind = clang_getCursorKind(ref);
  if (kind != CXCursor_VarDecl && kind != CXCursor_FieldDecl &&
      kind != CXCursor_ParmDecl)
    return NULL;
  CXType type = clang_getCursorType(ref);
  if (!is_integer(type) && !is_file_pointer(type) && !is_object_pointer(type) &&
      !bwsc__is_cancellable(type))
    return NULL;
  if (kind == CXCursor_ParmDecl)
    return bwsc__param_slot(ref);
  return take_string(clang_getCursorUSR(ref));
}

char *bwsc__desc_param_source(CXCursor expr, CXCursor ref) {
  if (clang_getCursorKind(ref) != CXCursor_ParmDecl ||
      !is_object_pointer(clang_getCursorType(expr)) ||
      clang_getCanonicalType(clang_getCursorType(ref)).kind != CXType_Pointer)
    return NULL;
  return bwsc__param_slot(ref);
}

char *bwsc__callee_name(CXCursor call) {
  if (clang_getCursorKind(call) != CXCursor_CallExpr)
    return NULL;
  CXCursor fn = clang_getCursorReferenced(call);
  if (!is_function_kind(clang_getCursorKind(fn)))
    return NULL;
  return take_string(clang_getCursorSpelling(fn));
}

CXCursor bwsc__peel_checked_casts(CXCursor expr) {
  CXCursor e = bwsc__peel(expr);
  for (int depth = 0; depth < 4; depth++) {
    if (clang_Cursor_getNumArguments(e) != 2)
      break;
    char *name = bwsc__callee_name(e);
    int cast = name && strcmp(name, "g_type_check_instance_cast") == 0;
    free(name);
    if (!cast)
      break;
    e = bwsc__peel(clang_Cursor_getArgument(e, 0));
  }
  return e;
}

/* Offset of a location in its file (spelling: the operator is written
 * in the file, not in a macro, or it has no token of its own). */
static unsigned offset_of(CXSourceLocation loc) {
  unsigned offset = 0;
  clang_getSpellingLocation(loc, NULL, NULL, NULL, &offset);
  return offset;
}

/* The spelling of the first token after a binary operator's left operand:
 * the operator. Writes "" when there is none (a macro). */
static void operator_of(CXTranslationUnit tu, CXCursor binop, char *buf,
                        size_t size) {
  buf[0] = '\0';
  child_pick pick = bwsc__pick_children(binop);
  if (pick.nexpr != 2)
    return;
  unsigned left_end =
      offset_of(clang_getRangeEnd(clang_getCursorExtent(pick.first)));
  CXToken *tokens = NULL;
  unsigned count = 0;
  clang_tokenize(tu, clang_getCursorExtent(binop), &tokens, &count);
  for (unsigned i = 0; i < count; i++) {
    if (offset_of(clang_getTokenLocation(tu, tokens[i])) < left_end)
      continue;
    char *text = take_string(clang_getTokenSpelling(tu, tokens[i]));
    if (strlen(text) < size)
      strcpy(buf, text);
    free(text);
    break;
  }
  clang_disposeTokens(tu, tokens, count);
}

/* `*e` of a pointer e: its type is e's pointee type (`&e`, `++e`, `-e`
 * and `!e` have other types). */
static int is_deref(CXCursor unary) {
  child_pick pick = bwsc__pick_children(unary);
  if (pick.nexpr != 1)
    return 0;
  CXType operand = clang_getCanonicalType(clang_getCursorType(pick.first));
  return operand.kind == CXType_Pointer &&
         clang_equalTypes(clang_getCanonicalType(clang_getPointeeType(operand)),
                          clang_getCanonicalType(clang_getCursorType(unary)));
}

/* An lvalue written as one, with no conversion around it: a variable, `*e`,
 * `a[i]`, `p->f`, or `v.f` of one (through parentheses). In C only an
 * assignment's left operand is such: every other binary operator converts
 * its left operand to a value (an implicit cast, UnexposedExpr), and an
 * enumerator, a call or a call's `.f` is no lvalue. */
static int is_bare_lvalue(CXCursor expr) {
  for (int depth = 0; depth < 16; depth++) {
    enum CXCursorKind kind = clang_getCursorKind(expr);
    child_pick pick;
    switch (kind) {
    case CXCursor_ParenExpr:
      pick = bwsc__pick_children(expr);
      if (pick.nexpr != 1)
        return 0;
      expr = pick.first;
      break;
    case CXCursor_DeclRefExpr: {
      enum CXCursorKind ref =
          clang_getCursorKind(clang_getCursorReferenced(expr));
      return ref == CXCursor_VarDecl || ref == CXCursor_ParmDecl;
    }
    case CXCursor_ArraySubscriptExpr:
      return 1;
    case CXCursor_UnaryOperator:
      return is_deref(expr);
    case CXCursor_MemberRefExpr:
      pick = bwsc__pick_children(expr);
      if (!pick.nexpr)
        return 0;
      if (clang_getCanonicalType(clang_getCursorType(pick.first)).kind ==
          CXType_Pointer)
        return 1; /* `p->f` */
      expr = pick.first;
      break;
    default:
      return 0;
    }
  }
  return 0;
}

int bwsc__is_assignment(CXTranslationUnit tu, CXCursor binop) {
  char op[4];
  operator_of(tu, binop, op, sizeof(op));
  if (strcmp(op, "=") == 0)
    return 1;
  /* A macro's operator has no token here (GLib's g_once_init_leave writes
   * `*(location) = (result)` in its body): the left operand says it. */
  child_pick pick = bwsc__pick_children(binop);
  return clang_getCursorKind(binop) == CXCursor_BinaryOperator &&
         pick.nexpr == 2 && is_bare_lvalue(pick.first);
}

int bwsc__binop_is(CXTranslationUnit tu, CXCursor binop, const char *spelling) {
  char op[4];
  operator_of(tu, binop, op, sizeof(op));
  return strcmp(op, spelling) == 0;
}

int bwsc__is_equality(CXTranslationUnit tu, CXCursor binop) {
  return bwsc__binop_is(tu, binop, "==");
}

/* A constant operand's value, or the bits of a nested OR (through
 * parentheses and casts); 0 for anything else. */
static long long operand_bits(CXTranslationUnit tu, CXCursor expr) {
  long long bits;
  if (bwsc__eval_int(expr, &bits))
    return bits;
  for (int depth = 0; depth < 8; depth++) {
    enum CXCursorKind kind = clang_getCursorKind(expr);
    if (kind == CXCursor_BinaryOperator)
      return bwsc__or_bits(tu, expr);
    if (kind != CXCursor_ParenExpr && kind != CXCursor_UnexposedExpr &&
        kind != CXCursor_CStyleCastExpr)
      return 0;
    child_pick pick = bwsc__pick_children(expr);
    if (pick.nexpr != 1)
      return 0;
    expr = pick.first;
  }
  return 0;
}

long long bwsc__or_bits(CXTranslationUnit tu, CXCursor binop) {
  char op[4];
  operator_of(tu, binop, op, sizeof(op));
  if (strcmp(op, "|") != 0)
    return 0;
  child_pick pick = bwsc__pick_children(binop);
  return operand_bits(tu, pick.first) | operand_bits(tu, pick.last);
}

static char *and_mask(CXTranslationUnit tu, CXCursor binop, long long *mask) {
  char op[4];
  operator_of(tu, binop, op, sizeof(op));
  child_pick pick = bwsc__pick_children(binop);
  if (strcmp(op, "&") != 0 || pick.nexpr != 2)
    return NULL;
  CXCursor sides[2] = {pick.first, pick.last};
  for (int i = 0; i < 2; i++) {
    CXCursor ref = bwsc__strip_casts(sides[i]);
    long long value;
    if (!bwsc__is_plain_ref(ref) || !bwsc__eval_int(sides[1 - i], &value) ||
        !value)
      continue;
    char *key = bwsc__desc_key(clang_getCursorReferenced(ref));
    if (key)
      *mask = value;
    return key;
  }
  return NULL;
}

void bwsc__binop_desc(CXTranslationUnit tu, CXCursor binop,
                      bwsc__arg_desc *out) {
  out->bits = bwsc__or_bits(tu, binop);
  if (!out->bits)
    out->key = and_mask(tu, binop, &out->mask);
}

/* ---- what a reader sees ------------------------------------------------- */

char *bwsc__source_text(CXTranslationUnit tu, CXCursor expr) {
  CXToken *tokens = NULL;
  unsigned count = 0;
  clang_tokenize(tu, clang_getCursorExtent(expr), &tokens, &count);
  if (!count)
    return NULL;
  char buf[96];
  size_t len = 0;
  int word = 0; /* the previous token was a word: a space keeps words apart */
  for (unsigned i = 0; i < count && len + 1 < sizeof(buf); i++) {
    char *spelling = take_string(clang_getTokenSpelling(tu, tokens[i]));
    CXTokenKind kind = clang_getTokenKind(tokens[i]);
    int is_word = kind == CXToken_Identifier || kind == CXToken_Keyword;
    len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%s%s",
                            word && is_word ? " " : "", spelling);
    word = is_word;
    free(spelling);
  }
  clang_disposeTokens(tu, tokens, count);
  if (len >= sizeof(buf))
    len = sizeof(buf) - 1;
  buf[len] = '\0';
  return bwsc__xstrdup(buf);
}

/* ---- constants and the writes of integer slots -------------------------- */

int bwsc__eval_int(CXCursor expr, long long *out) {
  CXEvalResult result = clang_Cursor_Evaluate(expr);
  if (!result)
    return 0;
  int ok = clang_EvalResult_getKind(result) == CXEval_Int;
  if (ok)
    *out = clang_EvalResult_getAsLongLong(result);
  clang_EvalResult_dispose(result);
  return ok;
}

int bwsc__maybe_constant(CXCursor peeled) {
  switch (clang_getCursorKind(peeled)) {
  case CXCursor_IntegerLiteral:
  case CXCursor_CharacterLiteral:
  case CXCursor_BinaryOperator:
  case CXCursor_UnaryOperator:
  case CXCursor_CXXBoolLiteralExpr:
    return 1;
  case CXCursor_DeclRefExpr:
    return clang_getCursorKind(clang_getCursorReferenced(peeled)) ==
           CXCursor_EnumConstantDecl;
  default:
    return 0;
  }
}

int bwsc__desc_is_local(CXCursor ref) {
  enum CXCursorKind kind = clang_getCursorKind(ref);
  return kind == CXCursor_ParmDecl ||
         (kind == CXCursor_VarDecl &&
          !clang_Cursor_hasVarDeclGlobalStorage(ref));
}

CXCursor bwsc__strip_casts(CXCursor expr) {
  for (int depth = 0; depth < 16; depth++) {
    enum CXCursorKind kind = clang_getCursorKind(expr);
    if (kind != CXCursor_UnexposedExpr && kind != CXCursor_ParenExpr &&
        kind != CXCursor_CStyleCastExpr)
      break;
    child_pick pick = bwsc__pick_children(expr);
    if (!pick.nexpr)
      break;
    expr = pick.last;
  }
  return expr;
}

int bwsc__is_plain_ref(CXCursor expr) {
  enum CXCursorKind kind = clang_getCursorKind(bwsc__strip_casts(expr));
  return kind == CXCursor_DeclRefExpr || kind == CXCursor_MemberRefExpr;
}

/* Copies a token's spelling into buf ("" when it does not fit). */
static void token_text(CXTranslationUnit tu, CXToken token, char *buf,
                       size_t size) {
  char *text = take_string(clang_getTokenSpelling(tu, token));
  buf[0] = '\0';
  if (strlen(text) < size)
    strcpy(buf, text);
  free(text);
}

static unsigned token_offset(CXTranslationUnit tu, CXToken token) {
  unsigned offset = 0;
  clang_getSpellingLocation(clang_getTokenLocation(tu, token), NULL, NULL, NULL,
                            &offset);
  return offset;
}

/* The first token clang_tokenize lexes at `at`: it lexes at least one
 * token from a range's start, and on while the last ends before the
 * range's end, so an empty range lexes exactly one. */
static int token_at(CXTranslationUnit tu, CXSourceLocation at, char *buf,
                    size_t size, unsigned *offset) {
  CXToken *tokens = NULL;
  unsigned count = 0;
  clang_tokenize(tu, clang_getRange(at, at), &tokens, &count);
  if (count) {
    if (buf)
      token_text(tu, tokens[0], buf, size);
    *offset = token_offset(tu, tokens[0]);
  }
  clang_disposeTokens(tu, tokens, count);
  return count > 0;
}

/* Whether clang_tokenize lexes anything of `range`: it lexes nothing when
 * the spellings of its ends lie in different files (an extent that starts
 * inside a macro's definition and ends at its use). Tokenizing the range
 * reversed makes the same test at the cost of one token. */
static int lexable(CXTranslationUnit tu, CXSourceRange range) {
  CXToken *tokens = NULL;
  unsigned count = 0;
  clang_tokenize(
      tu, clang_getRange(clang_getRangeEnd(range), clang_getRangeStart(range)),
      &tokens, &count);
  clang_disposeTokens(tu, tokens, count);
  return count > 0;
}

/* The last token of a cursor whose extent lexes, lexing only what follows
 * its innermost last operand that ends before the extent does (the `)`
 * of `!f (a, b)` after `b`). 0 when that cannot be shown to be the
 * whole extent's last token: the caller lexes the whole extent then. */
static int last_token_fast(CXTranslationUnit tu, CXCursor cursor,
                           CXSourceRange whole, char *buf, size_t size) {
  CXSourceLocation end = clang_getRangeEnd(whole), inner = end;
  CXCursor node = cursor;
  for (int depth = 0; depth < 64; depth++) {
    child_pick pick = bwsc__pick_children(node);
    if (!pick.nexpr)
      break;
    inner = clang_getRangeEnd(clang_getCursorExtent(pick.last));
    if (!clang_equalLocations(inner, end))
      break;
    node = pick.last;
  }
  unsigned first_offset, after_offset;
  if (clang_equalLocations(inner, end) ||
      !token_at(tu, clang_getRangeStart(whole), NULL, 0, &first_offset) ||
      !token_at(tu, end, NULL, 0, &after_offset))
    return 0;
  CXToken *tokens = NULL;
  unsigned count = 0;
  clang_tokenize(tu, clang_getRange(inner, end), &tokens, &count);
  /* The lexed tokens must lie within the extent: from its first token on
   * and before the token that follows it. Lexing from a token boundary
   * inside the extent then ends on the extent's own last token. */
  int ok = count && token_offset(tu, tokens[0]) >= first_offset &&
           token_offset(tu, tokens[count - 1]) < after_offset;
  if (ok)
    token_text(tu, tokens[count - 1], buf, size);
  clang_disposeTokens(tu, tokens, count);
  return ok;
}

/* The spelling of the first (last) token of a cursor into buf, exactly as
 * lexing its whole extent would give it, but lexing only a token or a few.
 * The scans of a function ask this of every unary operator once per
 * argument they describe, and lexing each whole operand (a call with all
 * its arguments) made them quadratic in the function's length: it was a
 * fifth of a GLib TU's parse. */
static void edge_token(CXTranslationUnit tu, CXCursor cursor, int last,
                       char *buf, size_t size) {
  buf[0] = '\0';
  CXSourceRange whole = clang_getCursorExtent(cursor);
  if (!lexable(tu, whole))
    return;
  unsigned offset;
  if (!last) {
    token_at(tu, clang_getRangeStart(whole), buf, size, &offset);
    return;
  }
  if (last_token_fast(tu, cursor, whole, buf, size))
    return;
  CXToken *tokens = NULL;
  unsigned count = 0;
  clang_tokenize(tu, whole, &tokens, &count);
  if (count)
    token_text(tu, tokens[count - 1], buf, size);
  clang_disposeTokens(tu, tokens, count);
}

int bwsc__is_not(CXTranslationUnit tu, CXCursor unary) {
  char first[4];
  if (clang_getCursorKind(unary) != CXCursor_UnaryOperator ||
      bwsc__pick_children(unary).nexpr != 1)
    return 0;
  edge_token(tu, unary, 0, first, sizeof(first));
  return strcmp(first, "!") == 0;
}

char *bwsc__desc_written(CXTranslationUnit tu, CXCursor op, int *addr) {
  enum CXCursorKind kind = clang_getCursorKind(op);
  child_pick pick = bwsc__pick_children(op);
  *addr = 0;
  if (!pick.nexpr || (kind != CXCursor_UnaryOperator &&
                      kind != CXCursor_CompoundAssignOperator))
    return NULL;
  if (kind == CXCursor_UnaryOperator) {
    char first[4], last[4];
    edge_token(tu, op, 0, first, sizeof(first));
    edge_token(tu, op, 1, last, sizeof(last));
    int incdec = !strcmp(first, "++") || !strcmp(first, "--") ||
                 !strcmp(last, "++") || !strcmp(last, "--");
    *addr = !strcmp(first, "&");
    if (!incdec && !*addr)
      return NULL;
  }
  CXCursor target = bwsc__strip_casts(pick.first);
  enum CXCursorKind tkind = clang_getCursorKind(target);
  if (tkind != CXCursor_DeclRefExpr && tkind != CXCursor_MemberRefExpr)
    return NULL;
  CXCursor ref = clang_getCursorReferenced(target);
  if (*addr && is_object_pointer(clang_getCursorType(ref)))
    *addr = 2; /* `&obj`: g_clear_object's, storing NULL (facts.h) */
  return bwsc__desc_key(ref);
}

/* ---- loops that poll: spin waits ---------------------------------------- */

typedef struct cond_scan {
  CXTranslationUnit tu;
  int shared;  /* reads memory another thread may write */
  int changes; /* writes something or calls a function */
} cond_scan;

static enum CXChildVisitResult cond_visitor(CXCursor cursor, CXCursor parent,
                                            CXClientData data) {
  (void)parent;
  cond_scan *scan = data;
  char op[4];
  switch (clang_getCursorKind(cursor)) {
  case CXCursor_MemberRefExpr:
  case CXCursor_ArraySubscriptExpr:
    scan->shared = 1;
    break;
  case CXCursor_DeclRefExpr: {
    CXCursor ref = clang_getCursorReferenced(cursor);
    if (clang_getCursorKind(ref) == CXCursor_VarDecl &&
        clang_Cursor_hasVarDeclGlobalStorage(ref))
      scan->shared = 1;
    break;
  }
  case CXCursor_CallExpr:
    scan->shared = scan->changes = 1;
    break;
  case CXCursor_BinaryOperator:
    if (bwsc__is_assignment(scan->tu, cursor))
      scan->changes = 1;
    break;
  case CXCursor_CompoundAssignOperator:
    scan->changes = 1;
    break;
  case CXCursor_UnaryOperator: {
    char last[4];
    edge_token(scan->tu, cursor, 0, op, sizeof(op));
    edge_token(scan->tu, cursor, 1, last, sizeof(last));
    if (!strcmp(op, "*"))
      scan->shared = 1;
    if (!strcmp(op, "++") || !strcmp(op, "--") || !strcmp(last, "++") ||
        !strcmp(last, "--"))
      scan->changes = 1;
    break;
  }
  default:
    break;
  }
  return CXChildVisit_Recurse;
}

/* The statements of a body: a compound statement's children, or the
 * statement itself. */
typedef struct body_scan {
  int nstmts; /* not counting empty statements */
  CXCursor call;
  int ncalls;
} body_scan;

static enum CXChildVisitResult
body_stmt_visitor(CXCursor cursor, CXCursor parent, CXClientData data) {
  (void)parent;
  body_scan *body = data;
  enum CXCursorKind kind = clang_getCursorKind(cursor);
  if (kind == CXCursor_NullStmt)
    return CXChildVisit_Continue;
  body->nstmts++;
  CXCursor stmt = bwsc__strip_casts(cursor);
  if (clang_getCursorKind(stmt) == CXCursor_CallExpr) {
    body->call = stmt;
    body->ncalls++;
  }
  return CXChildVisit_Continue;
}

static enum CXChildVisitResult kids_visitor(CXCursor cursor, CXCursor parent,
                                            CXClientData data) {
  (void)parent;
  bwsc__kids *kids = data;
  if (kids->n < 3)
    kids->at[kids->n] = cursor;
  kids->n++;
  return CXChildVisit_Continue;
}

bwsc__kids bwsc__kids_of(CXCursor cursor) {
  bwsc__kids kids = {
      {clang_getNullCursor(), clang_getNullCursor(), clang_getNullCursor()}, 0};
  clang_visitChildren(cursor, kids_visitor, &kids);
  return kids;
}

int bwsc__spin_loop(CXTranslationUnit tu, CXCursor loop, CXCursor *body_call,
                    CXCursor *cond) {
  /* While: condition, body. Do: body, condition. A while whose condition
   * declares a variable has three children: not a polling loop. */
  bwsc__kids kids = bwsc__kids_of(loop);
  if (kids.n != 2)
    return BWSC__SPIN_NONE;
  int is_do = clang_getCursorKind(loop) == CXCursor_DoStmt;
  *cond = kids.at[is_do ? 1 : 0];
  CXCursor body = kids.at[is_do ? 0 : 1];
  cond_scan scan = {tu, 0, 0};
  cond_visitor(*cond, loop, &scan);
  clang_visitChildren(*cond, cond_visitor, &scan);
  if (!scan.shared)
    return BWSC__SPIN_NONE;
  body_scan stmts;
  memset(&stmts, 0, sizeof(stmts));
  if (clang_getCursorKind(body) == CXCursor_CompoundStmt)
    clang_visitChildren(body, body_stmt_visitor, &stmts);
  else
    body_stmt_visitor(body, loop, &stmts);
  if (stmts.nstmts == 0)
    return scan.changes ? BWSC__SPIN_NONE : BWSC__SPIN_BARE;
  if (stmts.nstmts != 1 || stmts.ncalls != 1)
    return BWSC__SPIN_NONE;
  *body_call = stmts.call;
  return BWSC__SPIN_BODY;
}

/* ---- the value a local holds at a store: the closest earlier write ------ */

/* The statements of the innermost block that holds an offset, and which
 * of them holds it. */
typedef struct block_find {
  unsigned at;
  CXCursor *stmts; /* owned */
  size_t nstmts, cap, index;
  int found;
} block_find;

void bwsc__expansion_offsets(CXCursor cursor, unsigned *begin, unsigned *end) {
  CXSourceRange range = clang_getCursorExtent(cursor);
  clang_getExpansionLocation(clang_getRangeStart(range), NULL, NULL, NULL,
                             begin);
  clang_getExpansionLocation(clang_getRangeEnd(range), NULL, NULL, NULL, end);
}

static enum CXChildVisitResult
stmt_list_visitor(CXCursor cursor, CXCursor parent, CXClientData data) {
  (void)parent;
  block_find *find = data;
  *BWSC__PUSH(find->stmts, find->nstmts, find->cap) = cursor;
  return CXChildVisit_Continue;
}

static enum CXChildVisitResult block_visitor(CXCursor cursor, CXCursor parent,
                                             CXClientData data) {
  block_find *find = data;
  unsigned begin, end;
  bwsc__expansion_offsets(cursor, &begin, &end);
  if (find->at < begin || find->at >= end)
    return CXChildVisit_Continue;
  if (clang_getCursorKind(parent) == CXCursor_CompoundStmt) {
    find->nstmts = 0;
    clang_visitChildren(parent, stmt_list_visitor, find);
    find->found = 0;
    for (size_t i = 0; i < find->nstmts && !find->found; i++) {
      unsigned stmt_begin, stmt_end; /* equalCursors compares more than this */
      bwsc__expansion_offsets(find->stmts[i], &stmt_begin, &stmt_end);
      find->index = i;
      find->found = find->at >= stmt_begin && find->at < stmt_end;
    }
  }
  return CXChildVisit_Recurse;
}

size_t bwsc__block_stmts(CXCursor body, CXCursor use, CXCursor **stmts,
                         size_t *index) {
  block_find find;
  memset(&find, 0, sizeof(find));
  unsigned end;
  bwsc__expansion_offsets(use, &find.at, &end);
  clang_visitChildren(body, block_visitor, &find);
  *stmts = find.stmts;
  *index = find.index;
  return find.found ? find.nstmts : 0;
}

/* Whether a statement may write variable `var` or be jumped into; with
 * `strict`, whether it names `var` at all (a call given a buffer may
 * write into it). */
typedef struct write_scan {
  CXTranslationUnit tu;
  CXCursor var;
  int strict;
  int writes, label;
  CXCursor rhs; /* `var = rhs`, `T var = rhs`, or a format `rhs` printed
                   into var */
  int defines;
} write_scan;

int bwsc__names_var(CXCursor expr, CXCursor var) {
  CXCursor target = bwsc__strip_casts(expr);
  return clang_getCursorKind(target) == CXCursor_DeclRefExpr &&
         clang_equalCursors(clang_getCursorReferenced(target), var);
}

int bwsc__unary_writes(CXTranslationUnit tu, CXCursor op) {
  char first[4], last[4];
  edge_token(tu, op, 0, first, sizeof(first));
  edge_token(tu, op, 1, last, sizeof(last));
  return !strcmp(first, "&") || !strcmp(first, "++") || !strcmp(first, "--") ||
         !strcmp(last, "++") || !strcmp(last, "--");
}

static enum CXChildVisitResult write_visitor(CXCursor cursor, CXCursor parent,
                                             CXClientData data) {
  (void)parent;
  write_scan *scan = data;
  child_pick pick;
  switch (clang_getCursorKind(cursor)) {
  case CXCursor_LabelStmt:
  case CXCursor_CaseStmt:
  case CXCursor_DefaultStmt:
    scan->label = 1;
    break;
  case CXCursor_DeclRefExpr:
    scan->writes |= scan->strict && bwsc__names_var(cursor, scan->var);
    break;
  case CXCursor_BinaryOperator:
    pick = bwsc__pick_children(cursor);
    if (pick.nexpr == 2 && bwsc__names_var(pick.first, scan->var) &&
        bwsc__is_assignment(scan->tu, cursor))
      scan->writes = 1;
    break;
  case CXCursor_CompoundAssignOperator:
  case CXCursor_UnaryOperator:
    pick = bwsc__pick_children(cursor);
    if (pick.nexpr == 1 && bwsc__names_var(pick.first, scan->var))
      scan->writes |=
          clang_getCursorKind(cursor) == CXCursor_CompoundAssignOperator ||
          bwsc__unary_writes(scan->tu, cursor);
    break;
  case CXCursor_VarDecl:
    scan->writes |= clang_equalCursors(cursor, scan->var);
    break;
  default:
    break;
  }
  return scan->writes || scan->label ? CXChildVisit_Break
                                     : CXChildVisit_Recurse;
}

/* A call of a function named "...printf" whose first argument is `&var`
 * or `var` (asprintf, xasprintf, snprintf, sprintf, g_snprintf) prints
 * into var: its first string literal argument is the format. */
static int prints_into(write_scan *scan, CXCursor call) {
  int nargs = clang_Cursor_getNumArguments(call);
  char *name = take_string(clang_getCursorSpelling(call));
  size_t len = strlen(name);
  int printf_like = len >= 6 && strcmp(name + len - 6, "printf") == 0;
  free(name);
  if (!printf_like || nargs < 2)
    return 0;
  CXCursor target = bwsc__strip_casts(clang_Cursor_getArgument(call, 0));
  if (clang_getCursorKind(target) == CXCursor_UnaryOperator) {
    child_pick pick = bwsc__pick_children(target);
    if (pick.nexpr != 1)
      return 0;
    target = pick.first;
  }
  if (!bwsc__names_var(target, scan->var))
    return 0;
  for (int i = 1; i < nargs; i++) {
    CXCursor arg = bwsc__strip_casts(clang_Cursor_getArgument(call, i));
    if (clang_getCursorKind(arg) == CXCursor_StringLiteral) {
      scan->rhs = arg;
      return 1;
    }
  }
  return 0;
}

static void scan_stmt(write_scan *scan, CXCursor stmt) {
  scan->writes = scan->label = scan->defines = 0;
  enum CXCursorKind kind = clang_getCursorKind(stmt);
  child_pick pick = bwsc__pick_children(stmt);
  if (kind == CXCursor_BinaryOperator && pick.nexpr == 2 &&
      bwsc__names_var(pick.first, scan->var) &&
      bwsc__is_assignment(scan->tu, stmt)) {
    scan->defines = 1;
    scan->rhs = pick.last;
  } else if (kind == CXCursor_CallExpr) {
    scan->defines = prints_into(scan, stmt);
  } else if (kind == CXCursor_DeclStmt) {
    unsigned begin, end, at, var_end;
    bwsc__expansion_offsets(stmt, &begin, &end);
    bwsc__expansion_offsets(scan->var, &at, &var_end);
    if (at >= begin && at < end) {
      child_pick init = bwsc__pick_children(scan->var);
      scan->defines = init.nexpr > 0;
      scan->writes = !init.nexpr; /* `int err;`: nothing known */
      scan->rhs = init.last;
    }
  }
  if (scan->defines)
    return;
  write_visitor(stmt, stmt, scan);
  if (!scan->writes && !scan->label)
    clang_visitChildren(stmt, write_visitor, scan);
}

/* The key a value names: an integer slot's, or for a direct call its
 * callee's "<USR>#ret"; NULL for anything else. */
static char *value_key(CXCursor expr) {
  CXCursor peeled = bwsc__strip_casts(expr);
  enum CXCursorKind kind = clang_getCursorKind(peeled);
  if (kind == CXCursor_DeclRefExpr || kind == CXCursor_MemberRefExpr)
    return bwsc__desc_key(clang_getCursorReferenced(peeled));
  if (kind != CXCursor_CallExpr)
    return NULL;
  CXCursor callee = clang_getCursorReferenced(peeled);
  if (!is_function_kind(clang_getCursorKind(callee)))
    return NULL;
  char *usr = take_string(clang_getCursorUSR(callee));
  char *key = *usr ? bwsc__xasprintf("%s#ret", usr) : NULL;
  free(usr);
  return key;
}

/* Reaching definitions through one block: 1 and *rhs when the closest
 * earlier statement of the block holding `use` that writes `var` defines
 * it; the statement holding `use` must not write `var` itself, and no
 * statement between may write it (with `strict`, name it) or carry a
 * label (a jump could enter there). */
static int find_def(CXTranslationUnit tu, CXCursor body, CXCursor use,
                    CXCursor var, int strict, CXCursor *rhs) {
  block_find find;
  memset(&find, 0, sizeof(find));
  unsigned end;
  bwsc__expansion_offsets(use, &find.at, &end);
  clang_visitChildren(body, block_visitor, &find);
  write_scan scan;
  memset(&scan, 0, sizeof(scan));
  scan.tu = tu;
  scan.var = var;
  int found = 0;
  if (find.found && find.index < find.nstmts) {
    scan_stmt(&scan, find.stmts[find.index]);
    scan.strict = strict;
    for (size_t i = find.index;
         !scan.writes && !scan.label && !scan.defines && i-- > 0;) {
      scan_stmt(&scan, find.stmts[i]);
      found = scan.defines;
    }
  }
  free(find.stmts);
  *rhs = scan.rhs;
  return found;
}

static int is_local_var(CXCursor ref) {
  return clang_getCursorKind(ref) == CXCursor_VarDecl &&
         bwsc__desc_is_local(ref);
}

static char *reaching(CXTranslationUnit tu, CXCursor body, CXCursor use,
                      CXCursor var, int depth) {
  CXCursor rhs;
  if (!find_def(tu, body, use, var, 0, &rhs))
    return NULL;
  CXCursor from = bwsc__strip_casts(rhs);
  CXCursor ref = clang_getCursorReferenced(from);
  char *key = NULL;
  if (depth < 4 && clang_getCursorKind(from) == CXCursor_DeclRefExpr &&
      is_local_var(ref))
    key = reaching(tu, body, rhs, ref, depth + 1);
  return key ? key : value_key(rhs);
}

char *bwsc__reaching_key(CXTranslationUnit tu, CXCursor func, CXCursor use,
                         CXCursor ref) {
  CXCursor var = clang_getCursorReferenced(ref);
  if (!is_local_var(var) || clang_Cursor_isNull(func))
    return NULL;
  return reaching(tu, func, use, var, 0);
}

/* A string literal's text (owned) as written between its quotes, escapes
 * kept (a path prefix has none), or NULL: libclang 14 does not evaluate a
 * literal standing alone. */
static char *literal_text(CXCursor expr) {
  CXCursor literal = bwsc__strip_casts(expr);
  if (clang_getCursorKind(literal) != CXCursor_StringLiteral)
    return NULL;
  char *text = take_string(clang_getCursorSpelling(literal));
  size_t len = strlen(text);
  if (len < 2 || text[0] != '"' || text[len - 1] != '"') {
    free(text); /* L"...", adjacent literals: not read */
    return NULL;
  }
  memmove(text, text + 1, len - 2);
  text[len - 2] = '\0';
  return text;
}

char *bwsc__known_text(CXTranslationUnit tu, CXCursor func, CXCursor arg) {
  char *text = literal_text(arg);
  CXCursor ref = bwsc__strip_casts(arg), rhs;
  if (text || clang_getCursorKind(ref) != CXCursor_DeclRefExpr ||
      clang_Cursor_isNull(func))
    return text;
  ref = clang_getCursorReferenced(ref);
  if (!is_local_var(ref) || bwsc__desc_key_is_int(ref) ||
      !find_def(tu, func, arg, ref, 1, &rhs))
    return NULL; /* an integer holds no text */
  return literal_text(rhs);
}

/* ---- the flags a local holds at a call: its closest earlier writes ------ */

/* What one statement does to the flags of a local: nothing (it does not
 * write it), something unknown (or it can be jumped into), or known
 * effects on its bits. */
enum { FX_NONE, FX_UNKNOWN, FX_KNOWN };

typedef struct flag_fx {
  long long set, clear;
  int param; /* -1, or a test of a parameter as in bwsc__arg_flags */
  long long value, eq_set, ne_set;
} flag_fx;

typedef struct flag_walk {
  CXTranslationUnit tu;
  CXCursor func, var;
} flag_walk;

/* Whether `stmt` may write `var` (or holds a label or case): the
 * conservative scan of find_def. */
static int may_write(flag_walk *walk, CXCursor stmt, CXCursor var) {
  write_scan scan;
  memset(&scan, 0, sizeof(scan));
  scan.tu = walk->tu;
  scan.var = var;
  write_visitor(stmt, stmt, &scan);
  if (!scan.writes && !scan.label)
    clang_visitChildren(stmt, write_visitor, &scan);
  return scan.writes || scan.label;
}

/* Whether `&var` appears anywhere in a function (a callee could write it
 * between the statements read), or with `any`, any write of it: an
 * assignment, `var op= x`, `++`, `--` or `&var`. Labels do not matter. */
typedef struct var_scan {
  CXTranslationUnit tu;
  CXCursor var;
  int any, found;
} var_scan;

static enum CXChildVisitResult var_visitor(CXCursor cursor, CXCursor parent,
                                           CXClientData data) {
  (void)parent;
  var_scan *scan = data;
  char op[4];
  child_pick pick;
  switch (clang_getCursorKind(cursor)) {
  case CXCursor_UnaryOperator:
    pick = bwsc__pick_children(cursor);
    edge_token(scan->tu, cursor, 0, op, sizeof(op));
    scan->found =
        pick.nexpr == 1 && bwsc__names_var(pick.first, scan->var) &&
        (scan->any ? bwsc__unary_writes(scan->tu, cursor) : !strcmp(op, "&"));
    break;
  case CXCursor_CompoundAssignOperator:
    pick = bwsc__pick_children(cursor);
    scan->found =
        scan->any && pick.nexpr == 2 && bwsc__names_var(pick.first, scan->var);
    break;
  case CXCursor_BinaryOperator:
    pick = bwsc__pick_children(cursor);
    scan->found = scan->any && pick.nexpr == 2 &&
                  bwsc__names_var(pick.first, scan->var) &&
                  bwsc__is_assignment(scan->tu, cursor);
    break;
  default:
    break;
  }
  return scan->found ? CXChildVisit_Break : CXChildVisit_Recurse;
}

static int var_touched(CXTranslationUnit tu, CXCursor func, CXCursor var,
                       int any) {
  var_scan scan = {tu, var, any, 0};
  clang_visitChildren(func, var_visitor, &scan);
  return scan.found;
}

/* A constant, as the rules' conditions read one. */
static int const_of(CXCursor expr, long long *out) {
  return bwsc__maybe_constant(bwsc__peel(expr)) && bwsc__eval_int(expr, out);
}

/* The index of parameter `parm` in the function being walked, or -1. */
static int param_index(flag_walk *walk, CXCursor parm) {
  int nargs = clang_Cursor_getNumArguments(walk->func);
  for (int i = 0; i < nargs && i < 64; i++)
    if (clang_equalCursors(clang_Cursor_getArgument(walk->func, (unsigned)i),
                           parm))
      return i;
  return -1;
}

/* A parameter of the walked function of integer or boolean type that no
 * statement of its body writes (or takes the address of). */
static int stable_param(flag_walk *walk, CXCursor expr, int *index) {
  CXCursor ref = bwsc__strip_casts(expr);
  if (clang_getCursorKind(ref) != CXCursor_DeclRefExpr)
    return 0;
  ref = clang_getCursorReferenced(ref);
  CXType type = clang_getCanonicalType(clang_getCursorType(ref));
  if (clang_getCursorKind(ref) != CXCursor_ParmDecl ||
      (type.kind != CXType_Bool && !bwsc__desc_key_is_int(ref)))
    return 0;
  *index = param_index(walk, ref);
  return *index >= 0 && !var_touched(walk->tu, walk->func, ref, 1);
}

/* A branch condition that tests a parameter: `p`, `!p`, `p == K`,
 * `p != K` (either order). *eq is 1 when the branch is taken when the
 * parameter equals *value, 0 when it is taken when it does not. */
static int param_test(flag_walk *walk, CXCursor cond, int *index,
                      long long *value, int *eq) {
  CXCursor expr = bwsc__strip_casts(cond);
  char op[4];
  *value = 0;
  switch (clang_getCursorKind(expr)) {
  case CXCursor_DeclRefExpr:
    *eq = 0;
    return stable_param(walk, expr, index);
  case CXCursor_UnaryOperator: {
    child_pick pick = bwsc__pick_children(expr);
    edge_token(walk->tu, expr, 0, op, sizeof(op));
    *eq = 1;
    return pick.nexpr == 1 && !strcmp(op, "!") &&
           stable_param(walk, pick.first, index);
  }
  case CXCursor_BinaryOperator: {
    child_pick pick = bwsc__pick_children(expr);
    operator_of(walk->tu, expr, op, sizeof(op));
    if (pick.nexpr != 2 || (strcmp(op, "==") && strcmp(op, "!=")))
      return 0;
    *eq = !strcmp(op, "==");
    return (stable_param(walk, pick.first, index) &&
            const_of(pick.last, value)) ||
           (stable_param(walk, pick.last, index) &&
            const_of(pick.first, value));
  }
  default:
    return 0;
  }
}

/* Joins the two sides of a branch, both FX_KNOWN and unconditional, into
 * *out: the bits both set or both clear, and when the branch tests a
 * parameter, the bits that follow the test. */
static int join_branches(flag_walk *walk, CXCursor cond, const flag_fx *yes,
                         const flag_fx *no, flag_fx *out) {
  int index, eq;
  long long value;
  if (yes->param >= 0 || no->param >= 0)
    return FX_UNKNOWN;
  memset(out, 0, sizeof(*out));
  out->param = -1;
  out->set = yes->set & no->set;
  out->clear = yes->clear & no->clear;
  if (param_test(walk, cond, &index, &value, &eq)) {
    const flag_fx *when_eq = eq ? yes : no, *when_ne = eq ? no : yes;
    out->eq_set = when_eq->set & when_ne->clear;
    out->ne_set = when_ne->set & when_eq->clear;
    if (out->eq_set || out->ne_set) {
      out->param = index;
      out->value = value;
    }
  }
  return out->set || out->clear || out->param >= 0 ? FX_KNOWN : FX_UNKNOWN;
}

static int stmt_fx(flag_walk *walk, CXCursor stmt, int depth, flag_fx *out);

/* The value an assignment stores: a constant, `x | C`, `x & C`, or
 * `test ? a : b` of those. */
static int value_fx(flag_walk *walk, CXCursor rhs, int depth, flag_fx *out) {
  CXCursor expr = bwsc__strip_casts(rhs);
  long long v;
  char op[4];
  memset(out, 0, sizeof(*out));
  out->param = -1;
  if (const_of(rhs, &v)) {
    out->set = v;
    out->clear = ~v;
    return FX_KNOWN;
  }
  enum CXCursorKind kind = clang_getCursorKind(expr);
  if (kind == CXCursor_ConditionalOperator && depth < 4) {
    bwsc__kids kids = bwsc__kids_of(expr);
    flag_fx yes, no;
    if (kids.n != 3 ||
        value_fx(walk, kids.at[1], depth + 1, &yes) != FX_KNOWN ||
        value_fx(walk, kids.at[2], depth + 1, &no) != FX_KNOWN)
      return FX_UNKNOWN;
    return join_branches(walk, kids.at[0], &yes, &no, out);
  }
  if (kind != CXCursor_BinaryOperator)
    return FX_UNKNOWN;
  operator_of(walk->tu, expr, op, sizeof(op));
  child_pick pick = bwsc__pick_children(expr);
  if (!strcmp(op, "|"))
    out->set = bwsc__or_bits(walk->tu, expr);
  else if (!strcmp(op, "&") && pick.nexpr == 2 &&
           (const_of(pick.last, &v) || const_of(pick.first, &v)))
    out->clear = ~v;
  return out->set || out->clear ? FX_KNOWN : FX_UNKNOWN;
}

/* A block's effect: that of its last statement that writes the local. */
static int block_fx(flag_walk *walk, CXCursor block, int depth, flag_fx *out) {
  block_find list;
  memset(&list, 0, sizeof(list));
  clang_visitChildren(block, stmt_list_visitor, &list);
  int fx = FX_NONE;
  for (size_t i = list.nstmts; fx == FX_NONE && i-- > 0;)
    fx = stmt_fx(walk, list.stmts[i], depth, out);
  free(list.stmts);
  return fx;
}

/* An if statement's effect: both branches write the local, each with
 * known bits, and the condition does not write it. */
static int if_fx(flag_walk *walk, CXCursor stmt, int depth, flag_fx *out) {
  bwsc__kids kids = bwsc__kids_of(stmt);
  flag_fx yes, no;
  if (kids.n < 2 || kids.n > 3 || may_write(walk, kids.at[0], walk->var))
    return FX_UNKNOWN;
  int fx_yes = stmt_fx(walk, kids.at[1], depth + 1, &yes);
  int fx_no = kids.n == 3 ? stmt_fx(walk, kids.at[2], depth + 1, &no) : FX_NONE;
  if (fx_yes == FX_NONE && fx_no == FX_NONE)
    return FX_NONE;
  if (fx_yes != FX_KNOWN || fx_no != FX_KNOWN)
    return FX_UNKNOWN; /* one side keeps the earlier value: not read */
  return join_branches(walk, kids.at[0], &yes, &no, out);
}

static int stmt_fx(flag_walk *walk, CXCursor stmt, int depth, flag_fx *out) {
  CXCursor expr = bwsc__strip_casts(stmt);
  enum CXCursorKind kind = clang_getCursorKind(expr);
  child_pick pick = bwsc__pick_children(expr);
  char op[4];
  long long v;
  if (depth > 4)
    return may_write(walk, stmt, walk->var) ? FX_UNKNOWN : FX_NONE;
  memset(out, 0, sizeof(*out));
  out->param = -1;
  switch (kind) {
  case CXCursor_CompoundStmt:
    return block_fx(walk, expr, depth + 1, out);
  case CXCursor_IfStmt:
    return if_fx(walk, expr, depth, out);
  case CXCursor_BinaryOperator:
    if (pick.nexpr == 2 && bwsc__names_var(pick.first, walk->var) &&
        bwsc__is_assignment(walk->tu, expr))
      return may_write(walk, pick.last, walk->var)
                 ? FX_UNKNOWN
                 : value_fx(walk, pick.last, depth, out);
    break;
  case CXCursor_CompoundAssignOperator:
    if (pick.nexpr != 2 || !bwsc__names_var(pick.first, walk->var))
      break;
    operator_of(walk->tu, expr, op, sizeof(op));
    if (!const_of(pick.last, &v))
      return FX_UNKNOWN;
    if (!strcmp(op, "|="))
      out->set = v;
    else if (!strcmp(op, "&="))
      out->clear = ~v;
    return out->set || out->clear ? FX_KNOWN : FX_UNKNOWN;
  case CXCursor_DeclStmt: {
    unsigned begin, end, at, var_end;
    bwsc__expansion_offsets(expr, &begin, &end);
    bwsc__expansion_offsets(walk->var, &at, &var_end);
    if (at < begin || at >= end)
      break;
    child_pick init = bwsc__pick_children(walk->var);
    return init.nexpr ? value_fx(walk, init.last, depth, out) : FX_UNKNOWN;
  }
  default:
    break;
  }
  return may_write(walk, stmt, walk->var) ? FX_UNKNOWN : FX_NONE;
}

int bwsc__arg_flags_of(CXTranslationUnit tu, CXCursor func, CXCursor arg,
                       long long *set, bwsc__arg_flags **flags) {
  CXCursor ref = bwsc__strip_casts(arg);
  *set = 0;
  *flags = NULL;
  if (clang_getCursorKind(ref) != CXCursor_DeclRefExpr ||
      clang_Cursor_isNull(func))
    return 0;
  CXCursor var = clang_getCursorReferenced(ref);
  if (!is_local_var(var) || !bwsc__desc_key_is_int(var))
    return 0;
  flag_walk walk = {tu, func, var};
  block_find find;
  memset(&find, 0, sizeof(find));
  unsigned end;
  bwsc__expansion_offsets(arg, &find.at, &end);
  clang_visitChildren(func, block_visitor, &find);
  flag_fx fx;
  int state = FX_UNKNOWN;
  if (find.found && find.index < find.nstmts &&
      !may_write(&walk, find.stmts[find.index], var)) {
    state = FX_NONE;
    for (size_t i = find.index; state == FX_NONE && i-- > 0;)
      state = stmt_fx(&walk, find.stmts[i], 0, &fx);
  }
  free(find.stmts);
  if (state != FX_KNOWN)
    return 0;
  if (var_touched(tu, func, var, 0))
    return 0;
  *set = fx.set;
  if (fx.clear || fx.param >= 0) {
    bwsc__arg_flags *out = bwsc__xcalloc(1, sizeof(*out));
    out->clear = fx.clear;
    out->param = fx.param;
    out->value = fx.value;
    out->eq_set = fx.eq_set;
    out->ne_set = fx.ne_set;
    *flags = out;
  }
  return 1;
}

/* ---- structs a condition reads a field of -------------------------------- */

static int is_record(CXType type) {
  return clang_getCanonicalType(type).kind == CXType_Record;
}

/* A pointer to a struct that is not tracked as a descriptor is (a
 * `GSocket *`, a stream, a `FILE *` have slot keys of their own). */
static int is_record_pointer(CXType type) {
  CXType canon = clang_getCanonicalType(type);
  return canon.kind == CXType_Pointer &&
         is_record(clang_getPointeeType(canon)) && !is_object_pointer(type) &&
         !is_file_pointer(type);
}

static char *usr_of(CXCursor cursor) {
  return take_string(clang_getCursorUSR(cursor));
}

/* A struct pointer variable's slot: "*<USR>", apart from slot keys. */
static char *pointer_slot(CXCursor var) {
  char *usr = usr_of(var);
  char *key = bwsc__xasprintf("*%s", usr);
  free(usr);
  return key;
}

char *bwsc__points_key(CXCursor expr) {
  CXCursor e = bwsc__strip_casts(expr);
  enum CXCursorKind kind = clang_getCursorKind(e);
  if (kind == CXCursor_DeclRefExpr) {
    CXCursor var = clang_getCursorReferenced(e);
    return clang_getCursorKind(var) == CXCursor_VarDecl &&
                   is_record_pointer(clang_getCursorType(var))
               ? pointer_slot(var)
               : NULL;
  }
  if (kind != CXCursor_UnaryOperator)
    return NULL;
  CXTranslationUnit tu = clang_Cursor_getTranslationUnit(e);
  char first[4];
  edge_token(tu, e, 0, first, sizeof(first));
  child_pick pick = bwsc__pick_children(e);
  if (strcmp(first, "&") != 0 || pick.nexpr != 1)
    return NULL;
  CXCursor target = bwsc__strip_casts(pick.first);
  if (clang_getCursorKind(target) != CXCursor_DeclRefExpr)
    return NULL;
  CXCursor var = clang_getCursorReferenced(target);
  if (clang_getCursorKind(var) != CXCursor_VarDecl ||
      !is_record(clang_getCursorType(var)))
    return NULL;
  char *usr = usr_of(var);
  char *key = bwsc__xasprintf("&%s", usr);
  free(usr);
  return key;
}

char *bwsc__var_field_key(CXCursor member_ref) {
  if (clang_getCursorKind(member_ref) != CXCursor_MemberRefExpr)
    return NULL;
  CXCursor field = clang_getCursorReferenced(member_ref);
  child_pick pick = bwsc__pick_children(member_ref);
  if (clang_getCursorKind(field) != CXCursor_FieldDecl || !pick.nexpr ||
      !is_integer(clang_getCursorType(field)))
    return NULL;
  CXCursor base = bwsc__strip_casts(pick.first);
  if (clang_getCursorKind(base) != CXCursor_DeclRefExpr ||
      !is_record(clang_getCursorType(base)))
    return NULL; /* `p->f`, `a[i].f`, `f().f` */
  CXCursor var = clang_getCursorReferenced(base);
  if (clang_getCursorKind(var) != CXCursor_VarDecl)
    return NULL;
  char *usr = usr_of(var);
  char *name = take_string(clang_getCursorSpelling(field));
  char *key = bwsc__xasprintf("%s.%s", usr, name);
  free(usr);
  free(name);
  return key;
}

char *bwsc__struct_pointer_key(CXCursor binop, CXCursor lhs) {
  int decl = clang_getCursorKind(lhs) == CXCursor_VarDecl;
  if (!is_record_pointer(clang_getCursorType(binop)) ||
      (!decl && clang_getCursorKind(lhs) != CXCursor_DeclRefExpr))
    return NULL;
  CXCursor var = decl ? lhs : clang_getCursorReferenced(lhs);
  return clang_getCursorKind(var) == CXCursor_VarDecl &&
                 is_record_pointer(clang_getCursorType(var))
             ? pointer_slot(var)
             : NULL;
}

/* ---- fields read and written through a pointer --------------------------- */

/* A local variable of a pointer to a struct: "*<USR>"; a parameter of a
 * pointer type (a `gpointer user_data` too): its slot; else NULL. */
static char *pointer_base(CXCursor expr) {
  CXCursor e = bwsc__strip_casts(expr);
  if (clang_getCursorKind(e) != CXCursor_DeclRefExpr)
    return NULL;
  CXCursor var = clang_getCursorReferenced(e);
  enum CXCursorKind kind = clang_getCursorKind(var);
  CXType type = clang_getCanonicalType(clang_getCursorType(var));
  if (kind == CXCursor_ParmDecl && type.kind == CXType_Pointer)
    return bwsc__param_slot(var);
  if (kind == CXCursor_VarDecl && !clang_Cursor_hasVarDeclGlobalStorage(var) &&
      is_record_pointer(clang_getCursorType(var)))
    return pointer_slot(var);
  return NULL;
}

char *bwsc__via_key(CXCursor member_ref, const char *field_key) {
  if (!field_key || clang_getCursorKind(member_ref) != CXCursor_MemberRefExpr)
    return NULL;
  child_pick pick = bwsc__pick_children(member_ref);
  if (!pick.nexpr)
    return NULL;
  char *base = pointer_base(pick.first);
  if (!base)
    return NULL;
  char *key = bwsc__xasprintf("%s->%s", base, field_key);
  free(base);
  return key;
}

char *bwsc__pointer_copy_key(CXCursor rhs) {
  return pointer_base(rhs);
}
