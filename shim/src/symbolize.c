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
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "shim.h"

#include <dlfcn.h>
#include <elfutils/libdwfl.h>
#include <stdio.h>
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
  Dwfl_Callbacks callbacks;
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

void bwsh__symbolize(void *pc, bwsh__sym *out, int safe_only) {
  out->function[0] = out->file[0] = '\0';
  out->line = 0;
  if (safe_only) {
    raw_address(pc, out);
    return;
  }
  bwsh__self.depth++;
  Dwarf_Addr addr = (Dwarf_Addr)(uintptr_t)pc - 1;
  Dwfl *d = get_session();
  Dwfl_Module *mod = d ? dw.addrmodule(d, addr) : NULL;
  if (mod) {
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
  if (!out->function[0]) {
    Dl_info info;
    int found = dladdr((void *)(uintptr_t)addr, &info);
    if (found && info.dli_sname) {
      copy(out->function, sizeof out->function, info.dli_sname);
    } else if (found && info.dli_fname) {
      /* No symbol (a stripped library): module and offset, which
       * addr2line -e MODULE can still resolve with its debug file. */
      const char *base = strrchr(info.dli_fname, '/');
      snprintf(out->function, sizeof out->function, "%s+0x%lx",
               base ? base + 1 : info.dli_fname,
               (unsigned long)((uintptr_t)pc - (uintptr_t)info.dli_fbase));
    } else {
      raw_address(pc, out);
    }
  }
  bwsh__self.depth--;
}

void bwsh__symbolize_end(void) {
  if (session) {
    bwsh__self.depth++;
    dw.end(session);
    session = NULL;
    bwsh__self.depth--;
  }
}
