/* parse_clang.h - libclang helpers shared by parse.c and parse_desc.c.
 *
 * Invariant: only the parser's files include this (it is the one place
 * outside parse.c that sees libclang types); every CXString a helper reads
 * is disposed before it returns.
 */
#ifndef BLOCKSCAN_PARSE_CLANG_H
#define BLOCKSCAN_PARSE_CLANG_H

#include "util.h"

#include <clang-c/Index.h>

/* Copies a CXString into a malloc'd string and disposes it. */
static inline char *take_string(CXString str) {
  const char *text = clang_getCString(str);
  char *copy = bwsc__xstrdup(text ? text : "");
  clang_disposeString(str);
  return copy;
}

static inline int is_function_kind(enum CXCursorKind kind) {
  return kind == CXCursor_FunctionDecl;
}

/* The first and last expression children of a cursor, and its last
 * MemberRef child (designators). */
typedef struct child_pick {
  CXCursor first, last;
  int nexpr;
  CXCursor member_ref;
  int has_member_ref;
} child_pick;

child_pick bwsc__pick_children(CXCursor cursor);

/* Strips implicit conversions, casts, parentheses, unary & and *, and array
 * subscripts (a table of handlers), leaving what the value names. */
CXCursor bwsc__peel(CXCursor cursor);

/* The source text of a cursor, tokens joined ("ops->run"), for the chain
 * of a finding (at most 95 bytes); NULL when libclang gives no tokens (a
 * macro). */
char *bwsc__source_text(CXTranslationUnit tu, CXCursor expr);

/* The slot key of a parameter: "<function USR>#<index>", or NULL. */
char *bwsc__param_slot(CXCursor parm);

/* The descriptor key of a declaration `ref` (what a DeclRefExpr or
 * MemberRefExpr references) of integer type, an array of integers
 * (pipe2's `int fds[2]`), a `FILE *`, or an object whose blocking mode is
 * its own (`GSocket *`; and `GSource *`, for readiness sources): its USR,
 * or its parameter slot; else NULL. */
char *bwsc__desc_key(CXCursor ref);
/* The source of a store into an object pointer: the slot of parameter `ref`
 * of another pointer type (`GOutputStream *out = user_data`, a gpointer or
 * a GObject *), when `expr`, the stored value, is such an object pointer
 * (owned); else NULL. */
char *bwsc__desc_param_source(CXCursor expr, CXCursor ref);
/* `expr` through GLib's checked casts (G_OUTPUT_STREAM(x),
 * g_type_check_instance_cast): x, peeled; else `expr` peeled. */
CXCursor bwsc__peel_checked_casts(CXCursor expr);

/* `&x`, `x++`, `--x`: a unary operator that may change its operand. */
int bwsc__unary_writes(CXTranslationUnit tu, CXCursor op);
/* Whether `expr` is variable `var` itself, through casts. */
int bwsc__names_var(CXCursor expr, CXCursor var);
/* The name of the function `call` calls (owned); NULL when it is no call
 * or calls through a pointer. */
char *bwsc__callee_name(CXCursor call);
/* The expansion offsets of a cursor's extent, so that a statement and the
 * expressions in it compare. */
void bwsc__expansion_offsets(CXCursor cursor, unsigned *begin, unsigned *end);

/* A `GCancellable *` (its slots have descriptor keys too: a condition
 * `is cancelled` reads a field of one through a pointer). */
int bwsc__is_cancellable(CXType type);

/* The statements of the innermost block of `body` that holds `use`, into
 * *stmts (owned by the caller, free it also when 0 is returned), and in
 * *index the one holding it: how many, or 0 when none does. */
size_t bwsc__block_stmts(CXCursor body, CXCursor use, CXCursor **stmts,
                         size_t *index);

/* `call`'s one argument `&v` of a local struct variable v: the keys of
 * v's fields that hold, when the call runs, a `GCancellable *`
 * g_cancellable_cancel cancelled in an earlier statement of the call's
 * block, joined by ' ' (owned); NULL for none (parse_cancel.c). */
char *bwsc__cancelled_fields(CXCursor func, CXCursor call);

/* 1 when the body of `func` calls g_cancellable_cancel. */
int bwsc__calls_cancel(CXCursor func);

/* `&v` of a struct variable: "&<USR of v>"; a variable of a pointer to a
 * struct (not an object or FILE pointer): "*<USR>"; else NULL
 * (bwsc__arg_desc.points). */
char *bwsc__points_key(CXCursor expr);

/* `v.f` of a struct variable v (not `p->f`), f an integer field:
 * "<USR of v>.f", else NULL. */
char *bwsc__var_field_key(CXCursor member_ref);

/* The assignment `binop` (of a pointer to a struct) stores into the
 * variable `lhs` names, peeled (`p`, `*(&p)`): that variable's "*<USR>"; the
 * same for a declaration, `binop` and `lhs` both the VarDecl. */
char *bwsc__struct_pointer_key(CXCursor binop, CXCursor lhs);

/* `p->f` of a field f whose descriptor key is `field_key`, through a local
 * struct pointer variable p or a pointer parameter p: "<p's key>-><field
 * key>" ("*<USR of p>" or p's slot), the field of what p points to
 * (bwsc__arg_desc.via); else NULL. */
char *bwsc__via_key(CXCursor member_ref, const char *field_key);

/* An expression that copies a pointer such a key names (through casts):
 * a local struct pointer variable's "*<USR>", a pointer parameter's slot
 * (`IPTestData *data = user_data;`); else NULL. */
char *bwsc__pointer_copy_key(CXCursor rhs);

/* For a binary operator that is not a constant: the bits its constant
 * operands set when it is an OR (`flags | O_NONBLOCK`, nested ORs too);
 * 0 for any other operator. */
long long bwsc__or_bits(CXTranslationUnit tu, CXCursor binop);

/* 1 when binary operator `binop` is a plain assignment `lhs = rhs`: its
 * operator token, or inside a macro its left operand, an lvalue with no
 * conversion. */
int bwsc__is_assignment(CXTranslationUnit tu, CXCursor binop);

/* 1 when `unary` is `!e` (its first token; a macro's `!` is not read). */
int bwsc__is_not(CXTranslationUnit tu, CXCursor unary);

/* 1 when a binary operator is `==` (its operator token, not a macro's). */
int bwsc__is_equality(CXTranslationUnit tu, CXCursor binop);

/* 1 when a binary operator's operator token is `spelling` ("||"). */
int bwsc__binop_is(CXTranslationUnit tu, CXCursor binop, const char *spelling);

/* What a binary operator passed as an argument says about descriptors:
 * the bits of an OR with constant operands (`flags | O_NONBLOCK`), or for
 * `x & C` (either order) with x an integer variable, field or parameter
 * and C a non-zero constant, x's key (owned) with mask C. */
struct bwsc__arg_desc;
void bwsc__binop_desc(CXTranslationUnit tu, CXCursor binop,
                      struct bwsc__arg_desc *out);

/* Integer constants, for the rules' "does not block when" conditions:
 * 1 and *out when libclang evaluates `expr` to an integer. */
int bwsc__eval_int(CXCursor expr, long long *out);

/* Worth asking libclang to evaluate: literals, operators and enumerators
 * (macros such as WNOHANG or FALSE expand to these). */
int bwsc__maybe_constant(CXCursor peeled);

/* 1 when declaration `ref` is a parameter or a local variable without
 * static storage: every store into it is written in its function. */
int bwsc__desc_is_local(CXCursor ref);

/* 1 when `ref` is an integer variable, field or parameter (or an array of
 * integers). */
int bwsc__desc_key_is_int(CXCursor ref);

/* 1 when `ref` is a variable, field or parameter whose value a `return`
 * hands back as a descriptor: an integer (or an array of integers), or an
 * object bwsc__desc_key tracks (a `GSocket *`, a `GSource *`). */
int bwsc__desc_key_returned(CXCursor ref);

/* A cursor's first three children, statements and expressions alike, and
 * how many it has in all (the rest are not kept): the parsers' shape tests
 * read an if's condition and branches, an operator's operands and a
 * loop's parts through it. */
typedef struct bwsc__kids {
  CXCursor at[3];
  int n;
} bwsc__kids;
bwsc__kids bwsc__kids_of(CXCursor cursor);

/* Strips implicit conversions, parentheses and casts only. */
CXCursor bwsc__strip_casts(CXCursor expr);

/* 1 when `expr` is a variable or field itself, through casts and
 * parentheses only (not `-x`, `!x`, `*x`). */
int bwsc__is_plain_ref(CXCursor expr);

/* What a while or do loop is, for spin waits (see bwsc__spin in
 * facts.h): BWSC__SPIN_BODY with *body_call set to the one call that is
 * its body, BWSC__SPIN_BARE for an empty body, or BWSC__SPIN_NONE; *cond
 * is its condition. A loop waits for another thread only when its
 * condition reads a field, a global, a pointer's target or a call's
 * result, and, for an empty body, changes nothing itself. */
int bwsc__spin_loop(CXTranslationUnit tu, CXCursor loop, CXCursor *body_call,
                    CXCursor *cond);

/* For `&x`, `x++`, `--x` and `x op= y`: the descriptor key of the integer
 * slot x it may write (owned), else NULL; *addr is 1 for `&x`. */
char *bwsc__desc_written(CXTranslationUnit tu, CXCursor op, int *addr);

/* The value the local variable `ref` (an expression naming it) refers to
 * holds where `use` reads it in function `func`, when the closest earlier
 * statement of the same block that writes it is `var = value` and nothing
 * between can write it or be jumped to: `value`'s slot key, or a direct
 * call's "<USR>#ret" (owned); else NULL. */
char *bwsc__reaching_key(CXTranslationUnit tu, CXCursor func, CXCursor use,
                         CXCursor ref);

/* The text call argument `arg` of function `func` is known to hold (see
 * bwsc__arg_desc.text), owned, or NULL. */
char *bwsc__known_text(CXTranslationUnit tu, CXCursor func, CXCursor arg);

/* The flags call argument `arg` of function `func`, a local integer
 * variable, is known to hold from the closest earlier statements of its
 * block that write it (see bwsc__arg_flags): 1 with the bits it surely has
 * in *set and, when it surely lacks some or some follow a test of one of
 * `func`'s parameters, *flags (owned; else NULL); 0 when nothing is
 * known. What is read: `v = C`, `v = x | C`, `v = x & C`, `v |= C`, `v &=
 * C`, `v = t ? a : b` and an if/else writing it in both branches, with
 * nothing between that may write it or be jumped to, and `&v` nowhere in
 * the function. */
struct bwsc__arg_flags;
int bwsc__arg_flags_of(CXTranslationUnit tu, CXCursor func, CXCursor arg,
                       long long *set, struct bwsc__arg_flags **flags);

#endif /* BLOCKSCAN_PARSE_CLANG_H */
