/* modules.c - which code is whose: the address ranges of the libraries a
 * call site is never filed under (libc, the pool and loop libraries,
 * sanitizer runtimes, the shim and the bundled runtime), which of them is
 * libuv or GLib, and which segment holds each event loop's runner.
 *
 * Invariants:
 *  - The table only grows: a range is appended under `adding` (a short
 *    spin, never held across a call into the loader) and published by the
 *    release store of `count`; readers take no lock and see a prefix of the
 *    table. A library unloaded later keeps its range (its addresses are not
 *    reused by program code often enough to pay a removal protocol for).
 *  - A scan walks the loader's list (dl_iterate_phdr, which takes the
 *    loader's lock): it runs at start and when a new call site is about to
 *    be claimed (a library loaded since may hold its caller), never on the
 *    path of a call whose site is known. After a fork the table holds.
 *  - The program itself (the module with an empty name) is never a system
 *    module, so a program that links libuv statically files its sites
 *    under libuv's code: the names are all there is to go by. A loop's
 *    runner marks the segment it lies in by address instead (the
 *    program's own, then, for a static libuv): the loop's waits are told by
 *    where they come from, whatever the module's name.
 *  - bwsh__uv_hull and bwsh__interposer_hull span libuv's code and the
 *    interposers' (the latter published only once libuv is known: with no
 *    libuv there is no setup to tell). They only grow, each bound on its
 *    own, so a reader between the two stores sees the old hull or more: a
 *    superset filter for the callers that need asking, never a verdict.
 *  - The same scan records every module with a file (objects[]: its path,
 *    load bias, code range and GNU build-id, read from its mapped notes),
 *    published the same way, so that a frame is named by module + offset
 *    without a lock or an allocation, in a signal handler too.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "merge.h"

#include <link.h>
#include <string.h>
#include <unistd.h>

#define MAX_RANGES 96
#define MAX_OBJECTS 128

typedef struct range {
  uintptr_t lo, hi;
  int kind;        /* BW_CODE_*: PROGRAM only for a loop's segment */
  int lib;         /* BW_LIB_* */
  atomic_int loop; /* 1 + the BW_LOOP_* whose runner lies here, 0: none */
} range;

static range ranges[MAX_RANGES];
static atomic_int count;
/* The hull of every range published so far, widened before `count` is
 * published: a pc outside it (the program's code, mapped apart from the
 * libraries) is in no range, with no walk of the table. */
static bwsh__code_hull ranges_hull = {UINTPTR_MAX, 0};
static atomic_int scanning;
static atomic_flag adding = ATOMIC_FLAG_INIT;

/* A module with a file: where it is mapped and what it is. */
typedef struct object {
  uintptr_t bias, lo, hi; /* lo..hi: its PT_LOAD segments */
  char path[384];
  char build_id[2 * 32 + 1]; /* hex, "" when it has none */
} object;

static object objects[MAX_OBJECTS];
static atomic_int nobjects;

bwsh__code_hull bwsh__uv_hull = {UINTPTR_MAX, 0};
bwsh__code_hull bwsh__interposer_hull = {UINTPTR_MAX, 0};
static uintptr_t interposer_lo = UINTPTR_MAX, interposer_hi;

/* Libraries whose frames are the means of a blocking call, not its
 * cause: a call site is the first frame below them. Prefixes of the file
 * name, so every soname version matches; the first match wins, so the
 * runtime comes before the shim. The interposers (sanitizer runtimes, the
 * shim) stand between the program and the function it called, so they are
 * never the `via` of a site either. */
typedef struct lib_name {
  const char *prefix;
  int kind;
  int lib;
} lib_name;

#define LIB(p)                                                                 \
  { p, BW_CODE_LIBRARY, BW_LIB_NONE }
#define LIB_OF(p, lib)                                                         \
  { p, BW_CODE_LIBRARY, lib }
#define INTERPOSER(p)                                                          \
  { p, BW_CODE_INTERPOSER, BW_LIB_NONE }
static const lib_name system_libs[] = {
    LIB("libc.so"),
    LIB("libc-"),
    LIB("libpthread"),
    LIB("libm.so"),
    LIB("librt.so"),
    LIB("libdl.so"),
    LIB("ld-linux"),
    LIB("libstdc++"),
    LIB("libgcc_s"),
    LIB_OF("libuv.so", BW_LIB_UV),
    LIB_OF("libglib-2.0", BW_LIB_GLIB),
    LIB("libgio-2.0"),
    LIB("libgobject-2.0"),
    LIB("libgthread-2.0"),
    LIB("libevent"),
    LIB("libgomp"),
    LIB("libtbb"),
    LIB("libblockwatch-runtime"),
    INTERPOSER("libblockwatch"),
    INTERPOSER("libasan"),
    INTERPOSER("libtsan"),
    INTERPOSER("libubsan"),
    INTERPOSER("liblsan"),
    INTERPOSER("libclang_rt."),
};
#undef LIB
#undef LIB_OF
#undef INTERPOSER

/* The entry of the module at path (NULL: none of the above, the
 * program's). */
static const lib_name *entry_of_name(const char *path) {
  if (path == NULL || path[0] == '\0')
    return NULL;
  const char *base = strrchr(path, '/');
  base = base ? base + 1 : path;
  for (size_t i = 0; i < sizeof system_libs / sizeof system_libs[0]; i++) {
    const char *p = system_libs[i].prefix;
    if (strncmp(base, p, strlen(p)) == 0)
      return &system_libs[i];
  }
  return NULL;
}

/* The index of the range starting at lo among the first n, or -1. */
static int known(uintptr_t lo, int n) {
  for (int i = 0; i < n; i++)
    if (ranges[i].lo == lo)
      return i;
  return -1;
}

/* Widens h to hold [lo, hi) (under `adding`). */
static void widen(bwsh__code_hull *h, uintptr_t lo, uintptr_t hi) {
  if (lo < atomic_load_explicit(&h->lo, memory_order_relaxed))
    atomic_store_explicit(&h->lo, lo, memory_order_relaxed);
  if (hi > atomic_load_explicit(&h->hi, memory_order_relaxed))
    atomic_store_explicit(&h->hi, hi, memory_order_relaxed);
}

/* Takes the new range r into the hulls (under `adding`). */
static void widen_hulls(const range *r) {
  if (r->lib == BW_LIB_UV)
    widen(&bwsh__uv_hull, r->lo, r->hi);
  if (r->kind == BW_CODE_INTERPOSER) {
    interposer_lo = r->lo < interposer_lo ? r->lo : interposer_lo;
    interposer_hi = r->hi > interposer_hi ? r->hi : interposer_hi;
  }
  if (atomic_load_explicit(&bwsh__uv_hull.hi, memory_order_relaxed) &&
      interposer_hi)
    widen(&bwsh__interposer_hull, interposer_lo, interposer_hi);
}

/* Appends [lo, hi) of the module at path unless it is there; its index
 * (-1: the table is full). `loop` (1 + a BW_LOOP_*, or 0) marks it. */
static int append(uintptr_t lo, uintptr_t hi, const char *path, int loop) {
  while (atomic_flag_test_and_set_explicit(&adding, memory_order_acquire))
    __builtin_ia32_pause();
  int n = atomic_load_explicit(&count, memory_order_relaxed);
  int i = known(lo, n);
  if (i < 0 && n < MAX_RANGES) {
    const lib_name *e = entry_of_name(path);
    ranges[n].lo = lo;
    ranges[n].hi = hi;
    ranges[n].kind = e ? e->kind : BW_CODE_PROGRAM;
    ranges[n].lib = e ? e->lib : BW_LIB_NONE;
    atomic_store_explicit(&ranges[n].loop, 0, memory_order_relaxed);
    widen_hulls(&ranges[n]);
    widen(&ranges_hull, lo, hi);
    i = n;
    atomic_store_explicit(&count, n + 1, memory_order_release);
  }
  if (i >= 0 && loop)
    atomic_store_explicit(&ranges[i].loop, loop, memory_order_relaxed);
  atomic_flag_clear_explicit(&adding, memory_order_release);
  return i;
}

/* The GNU build-id of a mapped module, from its PT_NOTE segments, as hex
 * into out ("" when it has none). */
static void read_build_id(const struct dl_phdr_info *info, char *out,
                          size_t size) {
  static const char hex[] = "0123456789abcdef";
  out[0] = '\0';
  for (int i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
    if (ph->p_type != PT_NOTE)
      continue;
    const char *p = (const char *)(info->dlpi_addr + ph->p_vaddr);
    const char *end = p + ph->p_memsz;
    while (p + sizeof(ElfW(Nhdr)) <= end) {
      const ElfW(Nhdr) *n = (const ElfW(Nhdr) *)(const void *)p;
      const char *name = p + sizeof *n;
      const unsigned char *desc =
          (const unsigned char *)name + ((n->n_namesz + 3) & ~3u);
      p = (const char *)desc + ((n->n_descsz + 3) & ~3u);
      if (p > end)
        break;
      if (n->n_type != NT_GNU_BUILD_ID || n->n_namesz != 4 ||
          memcmp(name, "GNU", 4) != 0 || 2 * n->n_descsz >= size)
        continue;
      for (unsigned k = 0; k < n->n_descsz; k++) {
        out[2 * k] = hex[desc[k] >> 4];
        out[2 * k + 1] = hex[desc[k] & 15];
      }
      out[2 * n->n_descsz] = '\0';
      return;
    }
  }
}

void bwsh__load_span(const struct dl_phdr_info *info, uintptr_t *lo,
                     uintptr_t *hi) {
  *lo = UINTPTR_MAX;
  *hi = 0;
  for (int i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
    if (ph->p_type != PT_LOAD)
      continue;
    uintptr_t start = (uintptr_t)info->dlpi_addr + ph->p_vaddr;
    if (start < *lo)
      *lo = start;
    if (start + ph->p_memsz > *hi)
      *hi = start + ph->p_memsz;
  }
}

/* Appends the module to objects[] unless it is there (by bias and path)
 * or has no file (the vDSO). The program's own, whose name is empty, is
 * the file /proc/self/exe names. */
static void add_object(struct dl_phdr_info *info) {
  int n = atomic_load_explicit(&nobjects, memory_order_relaxed);
  const char *name = info->dlpi_name;
  if (n == MAX_OBJECTS || (name && name[0] && !strchr(name, '/')))
    return;
  object *o = &objects[n];
  if (name && name[0]) {
    size_t len = strlen(name);
    if (len >= sizeof o->path)
      return;
    memcpy(o->path, name, len + 1);
  } else {
    static int program_known; /* once: a scan runs per new call site */
    if (program_known)
      return;
    program_known = 1;
    ssize_t len = readlink("/proc/self/exe", o->path, sizeof o->path - 1);
    if (len <= 0)
      return;
    o->path[len] = '\0';
  }
  for (int i = 0; i < n; i++)
    if (objects[i].bias == info->dlpi_addr &&
        strcmp(objects[i].path, o->path) == 0)
      return;
  o->bias = info->dlpi_addr;
  bwsh__load_span(info, &o->lo, &o->hi);
  if (o->hi == 0)
    return;
  read_build_id(info, o->build_id, sizeof o->build_id);
  atomic_store_explicit(&nobjects, n + 1, memory_order_release);
}

static int add_module(struct dl_phdr_info *info, size_t size, void *data) {
  (void)size;
  (void)data;
  add_object(info);
  if (!entry_of_name(info->dlpi_name))
    return 0;
  for (int i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
    if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
      continue;
    uintptr_t lo = (uintptr_t)info->dlpi_addr + ph->p_vaddr;
    if (known(lo, atomic_load_explicit(&count, memory_order_acquire)) < 0)
      append(lo, lo + ph->p_memsz, info->dlpi_name, 0);
  }
  return 0;
}

void bwsh__modules_scan(void) {
  if (atomic_exchange_explicit(&scanning, 1, memory_order_acquire))
    return; /* another thread is at it: its table is good enough */
  dl_iterate_phdr(add_module, NULL);
  atomic_store_explicit(&scanning, 0, memory_order_release);
}

/* The executable segment holding addr, and its module's name. */
typedef struct segment {
  uintptr_t addr, lo, hi;
  const char *name;
} segment;

static int find_segment(struct dl_phdr_info *info, size_t size, void *data) {
  (void)size;
  segment *s = data;
  for (int i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
    if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
      continue;
    uintptr_t lo = (uintptr_t)info->dlpi_addr + ph->p_vaddr;
    if (s->addr >= lo && s->addr < lo + ph->p_memsz) {
      s->lo = lo;
      s->hi = lo + ph->p_memsz;
      s->name = info->dlpi_name;
      return 1;
    }
  }
  return 0;
}

/* The range holding pc among the published ones, or NULL. */
static const range *range_of(const void *pc) {
  uintptr_t a = (uintptr_t)pc;
  int n = atomic_load_explicit(&count, memory_order_acquire);
  if (a < atomic_load_explicit(&ranges_hull.lo, memory_order_relaxed) ||
      a >= atomic_load_explicit(&ranges_hull.hi, memory_order_relaxed))
    return NULL;
  for (int i = 0; i < n; i++)
    if (a >= ranges[i].lo && a < ranges[i].hi)
      return &ranges[i];
  return NULL;
}

void bwsh__modules_mark_loop(const void *runner, int loop_kind) {
  const range *r = range_of(runner);
  if (r &&
      atomic_load_explicit(&r->loop, memory_order_relaxed) == loop_kind + 1)
    return;
  segment s = {.addr = (uintptr_t)runner};
  if (dl_iterate_phdr(find_segment, &s))
    append(s.lo, s.hi, s.name, loop_kind + 1);
}

int bwsh__code_kind(const void *pc) {
  const range *r = range_of(pc);
  return r ? r->kind : BW_CODE_PROGRAM;
}

int bwsh__code_library(const void *pc) {
  const range *r = range_of(pc);
  return r ? r->lib : BW_LIB_NONE;
}

int bwsh__code_loop(const void *pc) {
  const range *r = range_of(pc);
  return r ? atomic_load_explicit(&r->loop, memory_order_relaxed) - 1 : -1;
}

int bwsh__module_of(const void *pc, bwsh__module *out) {
  uintptr_t a = (uintptr_t)pc;
  int n = atomic_load_explicit(&nobjects, memory_order_acquire);
  /* Newest first: a range reused after a dlclose is the newer module's. */
  for (int i = n - 1; i >= 0; i--)
    if (a >= objects[i].lo && a < objects[i].hi) {
      out->path = objects[i].path;
      out->build_id = objects[i].build_id[0] ? objects[i].build_id : NULL;
      out->offset = a - objects[i].bias;
      return 1;
    }
  out->path = out->build_id = NULL;
  out->offset = a;
  return 0;
}
