/* diff_git.c - where --diff and --diff-file get their patch: git, run in
 * the repository of the inputs, or a patch file, or stdin.
 *
 * Invariants: git runs without a shell (the revision is one argument,
 * never shell text), with stdin closed (it may be the patch blockscan
 * reads) and with flags that hold whatever the user's configuration says
 * (no colour, no external diff, rename detection on, "a/" and "b/"
 * prefixes, paths from the top of the work tree); its stderr is kept for
 * the error message.
 */
#include "diff.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

typedef struct git_run {
  char *out, *err; /* malloc'd, NUL-terminated */
  size_t len;      /* of out */
  int ok;          /* git ran and exited 0 */
} git_run;

/* Reads the whole of fd into a malloc'd string. */
static char *slurp(int fd, size_t *len) {
  size_t cap = 4096, n = 0;
  char *buf = bwsc__xmalloc(cap);
  for (;;) {
    if (n + 1 >= cap)
      buf = bwsc__xrealloc(buf, cap *= 2);
    ssize_t got = read(fd, buf + n, cap - n - 1);
    if (got < 0 && errno == EINTR)
      continue;
    if (got <= 0)
      break;
    n += (size_t)got;
  }
  buf[n] = '\0';
  *len = n;
  return buf;
}

/* Runs "git -C dir ARGS..." (args ends with NULL). */
static void run_git(const char *dir, const char *const *args, git_run *run) {
  memset(run, 0, sizeof(*run));
  const char *argv[16] = {"git", "-C", dir};
  size_t n = 3;
  for (; args[n - 3] && n < 15; n++)
    argv[n] = args[n - 3];
  argv[n] = NULL;
  int fds[2];
  FILE *err = tmpfile();
  if (!err || pipe(fds) != 0) {
    run->err = bwsc__xasprintf("cannot run git: %s", strerror(errno));
    if (err)
      fclose(err);
    return;
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, fds[1], 1);
  posix_spawn_file_actions_adddup2(&actions, fileno(err), 2);
  posix_spawn_file_actions_addclose(&actions, fds[0]);
  posix_spawn_file_actions_addclose(&actions, fds[1]);
  pid_t pid;
  int spawned =
      posix_spawnp(&pid, "git", &actions, NULL, (char **)argv, environ);
  posix_spawn_file_actions_destroy(&actions);
  close(fds[1]);
  if (spawned != 0) {
    close(fds[0]);
    fclose(err);
    run->err = bwsc__xasprintf("cannot run git: %s", strerror(spawned));
    return;
  }
  run->out = slurp(fds[0], &run->len);
  close(fds[0]);
  int status = 0;
  pid_t waited;
  while ((waited = waitpid(pid, &status, 0)) < 0 && errno == EINTR)
    ;
  run->ok = waited == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0;
  size_t errlen;
  lseek(fileno(err), 0, SEEK_SET);
  run->err = slurp(fileno(err), &errlen);
  fclose(err);
  while (errlen &&
         (run->err[errlen - 1] == '\n' || run->err[errlen - 1] == '\r'))
    run->err[--errlen] = '\0';
  if (!run->ok && !errlen) {
    free(run->err);
    run->err = bwsc__xstrdup("git failed and said nothing");
  }
}

static void git_free(git_run *run) {
  free(run->out);
  free(run->err);
}

static void git_error(bwsc__errors *errors, const char *what, const char *dir,
                      const git_run *run) {
  char *message = bwsc__xasprintf("%s (in %s): %s", what, dir, run->err);
  bwsc__errors_add(errors, NULL, 0, 0, message);
  free(message);
}

/* The top of the work tree holding `dir` (malloc'd), or NULL. */
static char *toplevel(const char *dir, git_run *run) {
  static const char *const args[] = {"rev-parse", "--show-toplevel", NULL};
  run_git(dir, args, run);
  if (!run->ok)
    return NULL;
  char *top = bwsc__xstrdup(run->out);
  top[strcspn(top, "\n")] = '\0';
  return top;
}

/* Files git does not track yet are new in their whole. */
static void add_untracked(bwsc__changes *changes, const char *top,
                          const char *out, size_t len) {
  for (size_t at = 0; at < len; at += strlen(out + at) + 1)
    if (out[at])
      bwsc__changes_add(changes, top, out + at, 1, UINT_MAX);
}

static int from_git(bwsc__changes *changes, const char *rev, const char *dir,
                    bwsc__errors *errors) {
  if (rev[0] == '-' || rev[0] == '\0') {
    char *message = bwsc__xasprintf("--diff: bad revision '%s'", rev);
    bwsc__errors_add(errors, NULL, 0, 0, message);
    free(message);
    return -1;
  }
  git_run run;
  char *top = toplevel(dir, &run);
  if (!top) {
    git_error(errors, "--diff needs a git repository", dir, &run);
    git_free(&run);
    return -1;
  }
  git_free(&run);
  const char *const diff[] = {"diff",
                              "--no-color",
                              "--no-ext-diff",
                              "--no-textconv",
                              "--no-relative",
                              "-U0",
                              "-M",
                              "--src-prefix=a/",
                              "--dst-prefix=b/",
                              rev,
                              "--",
                              NULL};
  char *what = bwsc__xasprintf("git diff %s", rev);
  int rc = -1;
  run_git(top, diff, &run);
  if (!run.ok) {
    git_error(errors, what, top, &run);
  } else {
    FILE *in = run.len ? fmemopen(run.out, run.len, "r") : NULL;
    rc = in ? bwsc__changes_read(changes, in, what, top, errors) : 0;
    if (in)
      fclose(in);
  }
  git_free(&run);
  static const char *const others[] = {"ls-files", "-z", "--others",
                                       "--exclude-standard", NULL};
  if (rc == 0) {
    run_git(top, others, &run);
    if (run.ok)
      add_untracked(changes, top, run.out, run.len);
    git_free(&run);
  }
  free(what);
  free(top);
  return rc;
}

/* A patch's paths are relative to the top of the work tree that holds the
 * inputs (as git writes them), else to the current directory. */
static int from_file(bwsc__changes *changes, const char *path, const char *dir,
                     bwsc__errors *errors) {
  git_run run;
  char *root = toplevel(dir, &run);
  git_free(&run);
  if (!root) {
    char cwd[PATH_MAX];
    root = bwsc__xstrdup(getcwd(cwd, sizeof(cwd)) ? cwd : ".");
  }
  int is_stdin = strcmp(path, "-") == 0;
  FILE *in = is_stdin ? stdin : fopen(path, "r");
  int rc = -1;
  if (!in) {
    char *message = bwsc__xasprintf("cannot read patch: %s", strerror(errno));
    bwsc__errors_add(errors, path, 0, 0, message);
    free(message);
  } else {
    rc = bwsc__changes_read(changes, in, is_stdin ? "<stdin>" : path, root,
                            errors);
    if (!is_stdin)
      fclose(in);
  }
  free(root);
  return rc;
}

int bwsc__changes_load(bwsc__changes *changes, const bwsc__options *opts,
                       const bwsc__inputs *inputs, bwsc__errors *errors) {
  if (opts->diff_rev && opts->diff_file) {
    bwsc__errors_add(errors, NULL, 0, 0,
                     "--diff and --diff-file cannot be used together");
    return -1;
  }
  /* The repository is the one holding the first input (they are sorted). */
  char *dir = bwsc__xstrdup(inputs->count ? inputs->items[0].file : "./");
  char *slash = strrchr(dir, '/');
  if (slash)
    slash[slash == dir ? 1 : 0] = '\0';
  int rc = opts->diff_file ? from_file(changes, opts->diff_file, dir, errors)
                           : from_git(changes, opts->diff_rev, dir, errors);
  free(dir);
  return rc;
}
