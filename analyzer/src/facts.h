/* facts.h - "TU facts": everything blockscan keeps from one translation unit.
 *
 * A plain value with no libclang types in it, so that parsing can run on any
 * thread (or, later, on another machine) and the analysis only ever sees
 * these. Every string is owned by the bwsc__tu_facts that holds it until
 * bwsc__facts_intern; from then on every string is an interned copy
 * (util.h), shared with every other TU's facts, never freed or changed.
 *
 * Keys: functions are named by USR. A "slot" is anything that can hold a
 * function pointer: a variable or field (keyed by its USR) or a function's
 * parameter (keyed "<function USR>#<index>", because libclang gives a
 * parameter a location-based USR that differs between a prototype and the
 * definition).
 *
 * Locations are expansion locations: a call written inside a macro is placed
 * where the macro is used, which is where a reader (and a suppression
 * comment) sees it.
 */
#ifndef BLOCKSCAN_FACTS_H
#define BLOCKSCAN_FACTS_H

#include <stddef.h>

typedef struct bwsc__loc {
  char *file; /* absolute or as given; NULL when unknown */
  unsigned line, col;
} bwsc__loc;

/* A function declared or defined in a file that is not a system header. */
typedef struct bwsc__func_fact {
  char *usr;
  char *name;
  bwsc__loc loc; /* the definition when is_def, else a declaration */
  /* Flags of one bit each: every TU holds one of these per function its
   * headers declare (millions on GLib), so 40 bytes rather than 56. */
  unsigned is_def : 1;    /* this TU holds its body */
  unsigned is_static : 1; /* internal linkage */
  unsigned annotated : 1; /* carries annotate("blockwatch::pool_callback") */
  unsigned noreturn : 1;  /* __attribute__((noreturn)) or _Noreturn */
  int nparams;
} bwsc__func_fact;

/* What an expression denotes once casts, parentheses and & are peeled. */
typedef enum bwsc__value_kind {
  BWSC__VAL_OTHER = 0, /* anything else */
  BWSC__VAL_FUNC,      /* a function: ref = USR, name = its name */
  BWSC__VAL_SLOT,      /* a variable, field or parameter: ref = slot key */
  BWSC__VAL_INT,       /* an integer constant expression: ival */
} bwsc__value_kind;

typedef struct bwsc__value {
  bwsc__value_kind kind;
  char *ref;  /* FUNC, SLOT */
  char *name; /* FUNC, SLOT: the spelling, for messages */
  long long ival;
  /* A call argument that points to (or is) a struct with function-pointer
   * fields: that struct's USR, borrowed from bwsc__tu_facts.records. */
  const char *record;
} bwsc__value;

/* What a local integer argument is known to hold as flags beyond the bits
 * it surely has (bwsc__arg_desc.bits), from the closest earlier statements
 * of its block that write it: bits it surely lacks (`mode &=
 * ~O_NONBLOCK`), and bits that depend on a test of the caller's own
 * parameter (tmux's setblocking: `if (!state) mode |= O_NONBLOCK; else
 * mode &= ~O_NONBLOCK;`). */
typedef struct bwsc__arg_flags {
  long long clear; /* surely not set */
  /* -1: none; else the index of the caller's parameter, never written in
   * its body, that a branch tests against `value`: `eq_set` bits are set
   * when the parameter equals it and clear when not, `ne_set` bits the
   * other way round. */
  int param;
  long long value, eq_set, ne_set;
} bwsc__arg_flags;

/* What a call argument says about descriptors. */
typedef struct bwsc__arg_desc {
  /* An integer variable, field or parameter (or array of integers), or a
   * `FILE *` one: its slot key; NULL for anything else. */
  char *key;
  /* Not a constant, but bits it surely has: an OR with constant operands
   * (`flags | O_NONBLOCK`), or a local whose closest earlier write in its
   * block sets them (`val |= O_NONBLOCK; fcntl(fd, F_SETFL, val)`). */
  long long bits;
  /* The argument is `key` itself (through casts and parentheses only), so
   * its value is the slot's (`poll(fds, n, timeout)`), not `-timeout`. */
  int plain;
  /* Not 0: the argument is `key & mask` with a constant mask (`flags &
   * UV_NONBLOCK_PIPE`), which has a flag of the mask when `key` has it. */
  long long mask;
  /* A `char *` argument whose text is known: a string literal, or the
   * format a "...printf" call printed into the local variable passed, in
   * the closest earlier statement of the block (`xasprintf(&path,
   * "/proc/%lld/cmdline", pgrp); fopen(path, "r")`); NULL otherwise. */
  char *text;
  /* A local integer's other flags (owned, never interned), or NULL. */
  bwsc__arg_flags *flags;
  /* The object the argument names (a variable, field or parameter, the
   * same expression) was tested just before the call (parse_ready.h):
   * "<test function>#<its argument index>", or NULL. */
  char *tested;
  /* The struct the argument points to, for a condition on its field
   * (`arg2->ai_flags`): "&<USR>" for `&v` of a struct variable v,
   * "*<USR>" for a `struct ... *` variable (whose stores, desc flows into
   * that key from "&<USR>" keys, say where it points); else NULL. Struct
   * variables' fields are slots "<USR>.<field>". */
  char *points;
  /* The argument is `p->f` of a descriptor field f (key is f's) through a
   * local struct pointer variable or a pointer parameter p: the slot of
   * that field of what p points to, "<p's key>-><f's key>" (p's key
   * "*<USR>" or its slot), whose stores are those through p (desc flows
   * into that key) and, when p copies another such pointer (a parameter,
   * or a registration's user data), that pointer's field; else NULL. */
  char *via;
} bwsc__arg_desc;

/* A call's part in a loop that waits for another thread by polling. */
typedef enum bwsc__spin {
  BWSC__SPIN_NONE = 0,
  /* The call is the whole body of a while or do loop whose condition reads
   * memory another thread may change (`while (!flag) uv_sleep(0);`). */
  BWSC__SPIN_BODY,
  /* Not a call: a loop with an empty body whose condition only reads such
   * memory (`while (!atomic_load(&done));`). The callee is BWSC__VAL_OTHER
   * named by the loop's text, the location the loop's. */
  BWSC__SPIN_BARE
} bwsc__spin;

/* One call expression inside a function body. */
/* A test of one of the caller's integer parameters that the branch a call
 * is written in passes whenever it runs: the call is in the then-branch of
 * `if (flags & WATCH && ...)` (the test `flags & WATCH`, one per operand
 * of a top-level `&&`), or in the else-branch of `if (!p)` or of an `||`
 * of tests (each negated). When the walk's chain passed the parameter a
 * constant (it is then never written in its body) that fails the test,
 * the branch does not run on that chain. */
typedef enum bwsc__test_kind {
  BWSC__TEST_SOME_BITS = 1, /* `p & value` is not 0 (`p`: value -1) */
  BWSC__TEST_NO_BITS,       /* `p & value` is 0 (`!p`: value -1) */
  BWSC__TEST_EQ,            /* `p == value` */
  BWSC__TEST_NE             /* `p != value` */
} bwsc__test_kind;

typedef struct bwsc__param_test {
  int param; /* the parameter's index, at most 63 */
  int kind;  /* a bwsc__test_kind */
  long long value;
  /* The parameter's type, which a passed constant is converted to: its
   * bits, negative when signed (-32: int, 8: unsigned char, 1: _Bool). */
  int width;
} bwsc__param_test;

/* At most this many tests are kept per call (the innermost branches'). */
#define BWSC__CALL_TESTS_MAX 4

typedef struct bwsc__call_fact {
  char *caller;       /* USR of the enclosing function */
  bwsc__value callee; /* FUNC for a direct call, SLOT through a pointer;
                         through a pointer, name is the callee expression's
                         text ("ops->run") */
  bwsc__loc loc;
  /* Written in the failure branch of an assertion macro (assert,
   * g_return_if_fail): the call runs only when the program is already
   * failing. Calls in the macro's arguments are not cold. */
  int cold;
  /* Written where a once-only initialisation runs (a global or static
   * still unset is tested, and set there): the first call does it, before
   * any pool or loop usually exists; later calls skip it. */
  int once;
  /* Written in the child's branch of a fork() (`if ((pid = fork()) == 0)
   * { ... }`, parse_fork.h): it runs in another process, never on the
   * thread that forked; the walk neither reports nor follows it. */
  int forked;
  size_t nargs;
  bwsc__value *args;
  bwsc__arg_desc *descs; /* nargs entries, or NULL: no argument is one */
  char *result; /* the descriptor key its result is stored into, or NULL */
  int spin;     /* a bwsc__spin */
  /* The first argument is the caller's own first parameter, through C
   * casts and GObject's checked cast (`G_FOO (self)`, a call of
   * g_type_check_instance_cast): a method called on its own object. */
  int self;
  /* The parameter tests its branches pass (bwsc__param_test), owned. */
  bwsc__param_test *tests;
  size_t ntests;
  /* A call given `&v` of a local struct variable v (a registration's user
   * data): the fields of v that hold, at the call, a `GCancellable *`
   * that g_cancellable_cancel cancelled in an earlier statement of the
   * call's block (parse_cancel.c), as their keys (USRs) joined by ' ';
   * NULL: none. */
  char *cancelled;
} bwsc__call_fact;

/* `slot` may hold `value` (a FUNC or another SLOT): an initialiser, an
 * assignment or an initialiser-list element. */
typedef struct bwsc__flow_fact {
  char *slot;
  bwsc__value value;
  /* The function the store is written in (its USR), NULL at file scope. */
  char *in_fn;
  /* The store sets a default method of a GObject interface or class: it
   * is written in a `*_default_init` or `*_class_init` function, into a
   * field of the struct its parameter points to (vtables.c). */
  int in_default;
} bwsc__flow_fact;

/* Integer slot `to` is assigned (or initialised from) integer slot
 * `from`: the same descriptor, in two places (`ctx->sock = sock`); from
 * NULL when the value is neither a slot, a call nor a constant, or when
 * `to` may be written some other way (`&to` is taken, `to++`, `to += n`).
 * A constant store (`options = WNOHANG`) has from NULL and is_const set. */
typedef struct bwsc__desc_flow {
  char *to, *from;
  int is_const;
  long long ival; /* is_const: the constant */
  /* `to` is a local variable or a parameter: every store into it is in
   * the facts (a global or field may hold its initial value too). */
  int local;
  /* from NULL because `&to` is taken (a callee may store through it, or
   * only read it: ioctl(fd, FIONBIO, &on)); 2: `to` is an object pointer
   * (a GSocket *, a GIO stream, a GSource *), whose address GLib takes to
   * clear it (g_clear_object(&obj) stores NULL). */
  int addr;
  /* `from` is a local variable, and the closest earlier statement of the
   * same block that writes it is `from = <alt>` (`err = uv__socket(...);
   * if (err < 0) return err; h->fd = err;`): the value stored, named by
   * a slot key or a called function's "<USR>#ret"; NULL when unknown. The
   * store is of `from` or of `alt`, whichever vouches for it. */
  char *alt;
} bwsc__desc_flow;
/* Desc flows also record, apart from the stores above: a store into a
 * field through a pointer, `p->f = x`, once more into "<p's key>-><f's
 * key>" (bwsc__arg_desc.via; not local, from NULL for a call's result or
 * another kind of write); and a copy of a pointer such a key names into a
 * local struct pointer variable (`IPTestData *data = user_data;`), into
 * "*<USR>" from the pointer's key (`&v` gives "&<USR of v>"). */

/* A `blockscan-ignore` or `NOLINT(blockscan...)` comment. It covers its own
 * line and the next one. rule NULL means every rule. */
typedef struct bwsc__suppress_fact {
  char *file;
  unsigned line;
  char *rule;
} bwsc__suppress_fact;

/* A parse error (severity error or fatal). */
typedef struct bwsc__diag_fact {
  bwsc__loc loc;
  char *message;
} bwsc__diag_fact;

typedef struct bwsc__tu_facts {
  char *file; /* the main file, as named in the input */
  int failed; /* the TU did not parse: diags say why */
  bwsc__func_fact *funcs;
  size_t nfuncs, capfuncs;
  bwsc__call_fact *calls;
  size_t ncalls, capcalls;
  bwsc__flow_fact *flows;
  size_t nflows, capflows;
  bwsc__desc_flow *desc_flows;
  size_t ndesc_flows, capdesc_flows;
  bwsc__suppress_fact *suppress;
  size_t nsuppress, capsuppress;
  bwsc__diag_fact *diags;
  size_t ndiags, capdiags;
  char **records; /* the struct USRs that values' `record` point to */
  size_t nrecords, caprecords;
  int interned; /* the strings are bwsc__intern's: not the facts' to free */
} bwsc__tu_facts;

/* Frees everything the facts own (not the struct itself). */
void bwsc__facts_free(bwsc__tu_facts *facts);

/* Replaces every string of the facts by its interned copy and frees the
 * facts' own: a TU that includes a large header holds that header's
 * thousands of USRs and file names once for the whole run, not once per
 * TU; each array's spare capacity is given back too. Call it when the
 * facts are complete (after the parse: facts read
 * from a file come interned); the facts are the same, compared as strings. */
void bwsc__facts_intern(bwsc__tu_facts *facts);

/* Frees what one of facts->calls owns (its strings unless interned). */
void bwsc__call_free(const bwsc__tu_facts *facts, bwsc__call_fact *call);

/* Frees a value's strings. */
void bwsc__value_free(bwsc__value *value);

/* Scans a source buffer for suppression comments and appends them. */
void bwsc__facts_scan_suppressions(bwsc__tu_facts *facts, const char *file,
                                   const char *text, size_t len);

/* 1 when the identifier at text[offset] names an assertion or fatal-error
 * macro (assert, g_assert, g_return_if_fail, g_error, ...): the calls in
 * its body run only on the failure branch. */
int bwsc__facts_cold_macro_at(const char *text, size_t len, size_t offset);

#endif /* BLOCKSCAN_FACTS_H */
