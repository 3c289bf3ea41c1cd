/* symbolize.c - return addresses to function, file and line, at report time.
 *
 * Invariants:
 *  - libdw (elfutils) does the work, loaded with dlopen when the first
 *    address of a report is symbolized: the shim has no link dependency on
 *    it, and a machine without it still gets function names from dladdr.
 *    Only the libdw header is used at build time, for the types.
 *  - One Dwfl session per report (bwsh__symbolize_end closes it), so a fork
 *    child or a program that dlopens more code later sees its own maps.
 *  - In a signal handler (safe_only) nothing that can allocate or lock is
 *    called: the address is printed as it is.
 *  - Return addresses point after the call: the line looked up is pc - 1.
 *  - Inlined calls are expanded as addr2line -i does: the inline scopes of
 *    the address (dwarf_getscopes), innermost first; each inlined frame is
 *    named by its DIE and located at the line the line table gives for the
 *    innermost one, else at the call site recorded in the scope inside it.
 *    The outermost frame keeps the ELF symbol name.
 *  - A frame of another process (a report read back, bw-merge) is named
 *    from its module file and offset (bwsh__symbolize_file) by the same
 *    code, one offline Dwfl per module file, kept until
 *    bwsh__symbolize_files_end: N frames in one module cost one open. A
 *    file whose build-id is not the one the report gives names nothing.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "merge.h"

#include <dlfcn.h>
#include <dwarf.h>
#include <elfutils/libdwfl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct libdw_api {
  int loaded; /* 0 not tried, 1 ok, -1 unavailable */
  Dwfl *(*begin)(const Dwfl_Callbacks *);
  int (*proc_report)(Dwfl *, pid_t);
  int (*report_end)(Dwfl *,
                    int (*)(Dwfl_Module *, void *, const char *, Dwarf_Addr,
                            void *),
                    void *);
  Dwfl_Module *(*addrmodule)(Dwfl *, Dwarf_Addr);
  const char *(*addrname)(Dwfl_Module *, GElf_Addr);
  Dwfl_Line *(*getsrc)(Dwfl_Module *, Dwarf_Addr);
  const char *(*lineinfo)(Dwfl_Line *, Dwarf_Addr *, int *, int *, Dwarf_Word *,
                          Dwarf_Word *);
  void (*end)(Dwfl *);
  /* Inline scopes (optional: without them every frame is one function). */
  Dwarf_Die *(*addrdie)(Dwfl_Module *, Dwarf_Addr, Dwarf_Addr *);
  int (*getscopes)(Dwarf_Die *, Dwarf_Addr, Dwarf_Die **);
  int (*tag)(Dwarf_Die *);
  const char *(*diename)(Dwarf_Die *);
  Dwarf_Attribute *(*attr)(Dwarf_Die *, unsigned int, Dwarf_Attribute *);
  int (*formudata)(Dwarf_Attribute *, Dwarf_Word *);
  int (*getsrcfiles)(Dwarf_Die *, Dwarf_Files **, size_t *);
  const char *(*filesrc)(Dwarf_Files *, size_t, Dwarf_Word *, Dwarf_Word *);
  int has_inline;
  /* Offline modules (optional: without them frames of other processes
   * stay unnamed). */
  Dwfl_Module *(*report_elf)(Dwfl *, const char *, const char *, int, GElf_Addr,
                             bool);
  int (*build_id)(Dwfl_Module *, const unsigned char **, GElf_Addr *);
  Elf *(*getelf)(Dwfl_Module *, GElf_Addr *);
  int has_offline;
  Dwfl_Callbacks callbacks, offline_callbacks;
  char *debuginfo_path;
} libdw_api;

static libdw_api dw;
static Dwfl *session;

/* Copies a dlsym result into a typed function pointer slot. */
static int sym(void *lib, const char *name, void *slot, size_t size) {
  void *p = dlsym(lib, name);
  memcpy(slot, &p, size);
  return p != NULL;
}

#define SYM(field, name) sym(lib, name, &dw.field, sizeof dw.field)

static void load_libdw(void) {
  dw.loaded = -1;
  void *lib = dlopen("libdw.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib)
    return;
  int ok =
      SYM(begin, "dwfl_begin") & SYM(proc_report, "dwfl_linux_proc_report") &
      SYM(report_end, "dwfl_report_end") & SYM(addrmodule, "dwfl_addrmodule") &
      SYM(addrname, "dwfl_module_addrname") &
      SYM(getsrc, "dwfl_module_getsrc") & SYM(lineinfo, "dwfl_lineinfo") &
      SYM(end, "dwfl_end") &
      sym(lib, "dwfl_linux_proc_find_elf", &dw.callbacks.find_elf,
          sizeof dw.callbacks.find_elf) &
      sym(lib, "dwfl_standard_find_debuginfo", &dw.callbacks.find_debuginfo,
          sizeof dw.callbacks.find_debuginfo);
  if (!ok)
    return; /* the library stays loaded: unloading libdw is not worth it */
  dw.callbacks.debuginfo_path = &dw.debuginfo_path;
  dw.has_inline =
      SYM(addrdie, "dwfl_module_addrdie") & SYM(getscopes, "dwarf_getscopes") &
      SYM(tag, "dwarf_tag") & SYM(diename, "dwarf_diename") &
      SYM(attr, "dwarf_attr") & SYM(formudata, "dwarf_formudata") &
      SYM(getsrcfiles, "dwarf_getsrcfiles") & SYM(filesrc, "dwarf_filesrc");
  dw.offline_callbacks = dw.callbacks;
  dw.has_offline =
      SYM(report_elf, "dwfl_report_elf") &
      SYM(build_id, "dwfl_module_build_id") &
      SYM(getelf, "dwfl_module_getelf") &
      sym(lib, "dwfl_build_id_find_elf", &dw.offline_callbacks.find_elf,
          sizeof dw.offline_callbacks.find_elf) &
      sym(lib, "dwfl_offline_section_address",
          &dw.offline_callbacks.section_address,
          sizeof dw.offline_callbacks.section_address);
  dw.loaded = 1;
}

static Dwfl *get_session(void) {
  if (session)
    return session;
  if (dw.loaded == 0)
    load_libdw();
  if (dw.loaded != 1)
    return NULL;
  session = dw.begin(&dw.callbacks);
  if (!session)
    return NULL;
  if (dw.proc_report(session, getpid()) != 0 ||
      dw.report_end(session, NULL, NULL) != 0) {
    dw.end(session);
    session = NULL;
  }
  return session;
}

static void copy(char *dst, size_t size, const char *src) {
  size_t n = strlen(src);
  if (n >= size)
    n = size - 1;
  memcpy(dst, src, n);
  dst[n] = '\0';
}

static void raw_address(void *pc, bwsh__sym *out) {
  static const char hex[] = "0123456789abcdef";
  uintptr_t v = (uintptr_t)pc;
  char buf[2 + 16 + 1];
  int i = sizeof buf - 1;
  buf[i] = '\0';
  do {
    buf[--i] = hex[v & 15];
    v >>= 4;
  } while (v && i > 2);
  buf[--i] = 'x';
  buf[--i] = '0';
  copy(out->function, sizeof out->function, buf + i);
}

static void clear(bwsh__sym *out) {
  out->function[0] = out->file[0] = '\0';
  out->line = 0;
  out->inlined = 0;
}

/* The ELF symbol and the line of addr (a module address) into out. */
static void name_physical(Dwfl_Module *mod, Dwarf_Addr addr, bwsh__sym *out) {
  const char *name = dw.addrname(mod, addr);
  if (name)
    copy(out->function, sizeof out->function, name);
  Dwfl_Line *line = dw.getsrc(mod, addr);
  int lineno = 0;
  const char *file =
      line ? dw.lineinfo(line, NULL, &lineno, NULL, NULL, NULL) : NULL;
  if (file) {
    copy(out->file, sizeof out->file, file);
    out->line = lineno;
  }
}

/* No symbol (a stripped library): module and offset, which addr2line -e
 * MODULE can still resolve with its debug file. */
static void module_offset(const char *path, uintptr_t offset, bwsh__sym *out) {
  const char *base = strrchr(path, '/');
  snprintf(out->function, sizeof out->function, "%s+0x%lx",
           base ? base + 1 : path, (unsigned long)offset);
}

void bwsh__symbolize(void *pc, bwsh__sym *out, int safe_only) {
  clear(out);
  if (safe_only) {
    raw_address(pc, out);
    return;
  }
  bwsh__self.depth++;
  Dwarf_Addr addr = (Dwarf_Addr)(uintptr_t)pc - 1;
  Dwfl *d = get_session();
  Dwfl_Module *mod = d ? dw.addrmodule(d, addr) : NULL;
  if (mod)
    name_physical(mod, addr, out);
  if (!out->function[0]) {
    Dl_info info;
    int found = dladdr((void *)(uintptr_t)addr, &info);
    if (found && info.dli_sname) {
      copy(out->function, sizeof out->function, info.dli_sname);
    } else if (found && info.dli_fname) {
      module_offset(info.dli_fname, (uintptr_t)pc - (uintptr_t)info.dli_fbase,
                    out);
    } else {
      raw_address(pc, out);
    }
  }
  bwsh__self.depth--;
}

/* The call site an inlined scope records (DW_AT_call_file / _line) into
 * out; 0 when it has none. */
static int call_site(Dwarf_Die *cu, Dwarf_Die *scope, bwsh__sym *out) {
  Dwarf_Attribute a;
  Dwarf_Word file_idx = 0, line = 0;
  Dwarf_Files *files;
  size_t nfiles;
  if (dw.formudata(dw.attr(scope, DW_AT_call_file, &a), &file_idx) != 0 ||
      dw.formudata(dw.attr(scope, DW_AT_call_line, &a), &line) != 0 ||
      dw.getsrcfiles(cu, &files, &nfiles) != 0 || file_idx >= nfiles)
    return 0;
  const char *name = dw.filesrc(files, file_idx, NULL, NULL);
  copy(out->file, sizeof out->file, name ? name : "");
  out->line = (int)line;
  return 1;
}

/* Expands the inline scopes of addr into out[0..max-1] (out[0] already
 * holds the physical frame: its symbol and the innermost line). */
static int expand_inline(Dwfl_Module *mod, Dwarf_Addr addr, bwsh__sym *out,
                         int max) {
  Dwarf_Addr bias = 0;
  Dwarf_Die *cu = dw.addrdie(mod, addr, &bias);
  Dwarf_Die *scopes = NULL;
  int nscopes = cu ? dw.getscopes(cu, addr - bias, &scopes) : 0;
  bwsh__sym physical = out[0];
  int n = 0;
  for (int i = 0; i < nscopes; i++) {
    int tag = dw.tag(&scopes[i]);
    if (tag == DW_TAG_subprogram)
      break;
    if (tag != DW_TAG_inlined_subroutine)
      continue;
    if (n == max - 1) {
      /* More levels than room: the last frame's line is not its own. */
      out[n].file[0] = '\0';
      out[n].line = 0;
      break;
    }
    bwsh__sym *f = &out[n];
    const char *name = dw.diename(&scopes[i]);
    copy(f->function, sizeof f->function, name ? name : "??");
    f->inlined = 1;
    if (n == 0) {
      copy(f->file, sizeof f->file, physical.file);
      f->line = physical.line;
    }
    /* The next frame out is located where this one was called. */
    out[n + 1] = physical;
    if (!call_site(cu, &scopes[i], &out[n + 1])) {
      out[n + 1].file[0] = '\0';
      out[n + 1].line = 0;
    }
    n++;
  }
  free(scopes); /* dwarf_getscopes allocates it with malloc */
  return n + 1;
}

int bwsh__symbolize_inline(void *pc, bwsh__sym *out, int max, int safe_only) {
  bwsh__symbolize(pc, &out[0], safe_only);
  if (safe_only || max < 2 || dw.loaded != 1 || !dw.has_inline)
    return 1;
  bwsh__self.depth++;
  Dwarf_Addr addr = (Dwarf_Addr)(uintptr_t)pc - 1;
  Dwfl *d = get_session();
  Dwfl_Module *mod = d ? dw.addrmodule(d, addr) : NULL;
  int n = mod ? expand_inline(mod, addr, out, max) : 1;
  bwsh__self.depth--;
  return n;
}

static atomic_int lookup_lock;
/* ThreadSanitizer's annotations, when its runtime is loaded: the shim is
 * not instrumented, so TSan cannot see this lock, but it sees libdw's
 * malloc and realloc, and would call two threads' lookups one after the
 * other a race. The lock tells it they are ordered. */
static void (*tsan_acquire)(void *), (*tsan_release)(void *);

void bwsh__symbolize_init(void) {
  void *a = dlsym(RTLD_DEFAULT, "__tsan_acquire");
  void *r = dlsym(RTLD_DEFAULT, "__tsan_release");
  if (a && r) {
    memcpy(&tsan_acquire, &a, sizeof a);
    memcpy(&tsan_release, &r, sizeof r);
  }
}

void bwsh__symbolize_lock(void) {
  while (atomic_exchange_explicit(&lookup_lock, 1, memory_order_acquire))
    __builtin_ia32_pause();
  if (tsan_acquire)
    tsan_acquire(&lookup_lock);
}

void bwsh__symbolize_unlock(void) {
  if (tsan_release)
    tsan_release(&lookup_lock);
  atomic_store_explicit(&lookup_lock, 0, memory_order_release);
}

void bwsh__symbolize_after_fork(void) {
  atomic_store_explicit(&lookup_lock, 0, memory_order_relaxed);
}

void bwsh__symbolize_end(void) {
  if (session) {
    bwsh__self.depth++;
    dw.end(session);
    session = NULL;
    bwsh__self.depth--;
  }
}

/* ---- frames of other processes: module file + offset --------------------- */

/* One module file opened offline, by its path; mod NULL when it cannot
 * name frames (gone, not ELF), note then says why. build_id is the
 * file's: each frame's own is checked against it, since reports of one
 * path may come from two builds. */
typedef struct offline {
  char *path;
  Dwfl *dwfl;
  Dwfl_Module *mod;
  GElf_Addr bias;
  const char *note;
  char build_id[2 * 32 + 1];
} offline;

#define MAX_OFFLINE 64
static offline offlines[MAX_OFFLINE];
static int noffline;

/* The module's build-id as hex in out (size >= 2 * 32 + 1); "" if none. */
static void file_build_id(Dwfl_Module *mod, char *out, size_t size) {
  static const char hex[] = "0123456789abcdef";
  const unsigned char *bits;
  GElf_Addr vaddr;
  int n = dw.build_id(mod, &bits, &vaddr);
  out[0] = '\0';
  for (int i = 0; i < n && (size_t)(2 * i + 2) < size; i++) {
    out[2 * i] = hex[bits[i] >> 4];
    out[2 * i + 1] = hex[bits[i] & 15];
    out[2 * i + 2] = '\0';
  }
}

static void open_offline(offline *e) {
  e->note = "module not found or not readable";
  e->dwfl = dw.begin(&dw.offline_callbacks);
  if (!e->dwfl)
    return;
  Dwfl_Module *mod = dw.report_elf(e->dwfl, e->path, e->path, -1, 0, false);
  if (!mod || dw.report_end(e->dwfl, NULL, NULL) != 0)
    return;
  file_build_id(mod, e->build_id, sizeof e->build_id);
  dw.getelf(mod, &e->bias);
  e->mod = mod;
  e->note = NULL;
}

/* The entry of path, opened on first use (NULL: table full, or no libdw). */
static offline *offline_module(const char *path) {
  for (int i = 0; i < noffline; i++)
    if (strcmp(offlines[i].path, path) == 0)
      return &offlines[i];
  if (dw.loaded == 0)
    load_libdw();
  if (dw.loaded != 1 || !dw.has_offline || noffline == MAX_OFFLINE)
    return NULL;
  offline *e = &offlines[noffline];
  *e = (offline){.path = strdup(path)};
  if (!e->path)
    return NULL;
  noffline++;
  open_offline(e);
  return e;
}

int bwsh__symbolize_file(const char *path, const char *build_id,
                         uintptr_t offset, bwsh__sym *out, int max,
                         const char **note) {
  offline *e = offline_module(path);
  *note = e ? e->note : "no libdw to read the module with";
  if (!e || !e->mod || max < 1)
    return 0;
  if (build_id && strcmp(build_id, e->build_id) != 0) {
    *note = "module rebuilt since the run (build-id differs)";
    return 0;
  }
  bwsh__self.depth++;
  Dwarf_Addr addr = (Dwarf_Addr)offset - 1 + e->bias;
  clear(&out[0]);
  name_physical(e->mod, addr, &out[0]);
  if (!out[0].function[0])
    module_offset(path, offset, &out[0]);
  int n = max >= 2 && dw.has_inline ? expand_inline(e->mod, addr, out, max) : 1;
  bwsh__self.depth--;
  return n;
}

void bwsh__symbolize_files_end(void) {
  bwsh__self.depth++;
  for (int i = 0; i < noffline; i++) {
    if (offlines[i].dwfl)
      dw.end(offlines[i].dwfl);
    free(offlines[i].path);
  }
  noffline = 0;
  bwsh__self.depth--;
}
