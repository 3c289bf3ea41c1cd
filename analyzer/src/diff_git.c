/* diff_git.c - where --diff and --diff-file get their patch: git, run in
 * the repository of the inputs, or a patch file, or stdin.
 *
 * Invariants: git runs without a shell (the revision is one argument,
 * never shell text), with stdin closed (it may be the patch blockscan
 * reads) and with flags that hold whatever the user's configuration says
 * (no colour, no external diff, rename detection on, "a/" and "b/"
 * prefixes, paths from the top of the work tree); its stderr is kept for
 * the error message. The revision and the work tree are checked before
 * any TU is read (a bad one ends the run at once); git diff and git
 * ls-files then run beside the analysis, writing to unlinked temporary
 * files, and are waited for once, by bwsc__changes_finish or at free.
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

/* A temporary file that no child inherits by accident (posix_spawn's
 * dup2 clears the flag on the copy a child is meant to get). */
static FILE *private_tmpfile(void) {
  FILE *f = tmpfile();
  if (f)
    fcntl(fileno(f), F_SETFD, FD_CLOEXEC);
  return f;
}

/* Starts "git -C dir ARGS..." (args ends with NULL), its stdout and stderr
 * into temporary files. Returns 0, or -1 with *message set (malloc'd). */
static int git_start(const char *dir, const char *const *args,
                     bwsc__git_job *job, char **message) {
  memset(job, 0, sizeof(*job));
  const char *argv[16] = {"git", "-C", dir};
  size_t n = 3;
  for (; args[n - 3] && n < 15; n++)
    argv[n] = args[n - 3];
  argv[n] = NULL;
  job->out = private_tmpfile();
  job->err = job->out ? private_tmpfile() : NULL;
  int spawned = errno;
  if (job->err) {
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&actions, fileno(job->out), 1);
    posix_spawn_file_actions_adddup2(&actions, fileno(job->err), 2);
    spawned =
        posix_spawnp(&job->pid, "git", &actions, NULL, (char **)argv, environ);
    posix_spawn_file_actions_destroy(&actions);
  }
  if (job->err && spawned == 0)
    return 0;
  *message = bwsc__xasprintf("cannot run git: %s", strerror(spawned));
  if (job->out)
    fclose(job->out);
  if (job->err)
    fclose(job->err);
  memset(job, 0, sizeof(*job));
  return -1;
}

/* Reads the rest of a temporary file from its start (malloc'd). */
static char *slurp_file(FILE *f, size_t *len) {
  fflush(f);
  lseek(fileno(f), 0, SEEK_SET);
  return slurp(fileno(f), len);
}

/* Waits for the job and takes what it printed into `run`; the job is
 * none afterwards. */
static void git_wait(bwsc__git_job *job, git_run *run) {
  memset(run, 0, sizeof(*run));
  int status = 0;
  pid_t waited;
  while ((waited = waitpid(job->pid, &status, 0)) < 0 && errno == EINTR)
    ;
  run->ok = waited == job->pid && WIFEXITED(status) && WEXITSTATUS(status) == 0;
  run->out = slurp_file(job->out, &run->len);
  size_t errlen;
  run->err = slurp_file(job->err, &errlen);
  fclose(job->out);
  fclose(job->err);
  memset(job, 0, sizeof(*job));
  while (errlen &&
         (run->err[errlen - 1] == '\n' || run->err[errlen - 1] == '\r'))
    run->err[--errlen] = '\0';
  if (!run->ok && !errlen) {
    free(run->err);
    run->err = bwsc__xstrdup("git failed and said nothing");
  }
}

/* Runs "git -C dir ARGS..." to its end. */
static void run_git(const char *dir, const char *const *args, git_run *run) {
  bwsc__git_job job;
  char *message = NULL;
  if (git_start(dir, args, &job, &message) != 0) {
    memset(run, 0, sizeof(*run));
    run->err = message;
    return;
  }
  git_wait(&job, run);
}

void bwsc__git_job_drop(bwsc__git_job *job) {
  if (!job->pid)
    return;
  git_run run;
  git_wait(job, &run);
  free(run.out);
  free(run.err);
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

/* The first line of git's output (malloc'd), or NULL when it printed
 * none. */
static char *first_line(const git_run *run) {
  if (!run->out || !run->out[0] || run->out[0] == '\n')
    return NULL;
  char *line = bwsc__xstrdup(run->out);
  line[strcspn(line, "\n")] = '\0';
  return line;
}

/* The top of the work tree holding `dir` (malloc'd), or NULL. */
static char *toplevel(const char *dir, git_run *run) {
  static const char *const args[] = {"rev-parse", "--show-toplevel", NULL};
  run_git(dir, args, run);
  return run->ok ? first_line(run) : NULL;
}

/* Files git does not track yet are new in their whole. */
static void add_untracked(bwsc__changes *changes, const char *top,
                          const char *out, size_t len) {
  for (size_t at = 0; at < len; at += strlen(out + at) + 1)
    if (out[at])
      bwsc__changes_add(changes, top, out + at, 1, UINT_MAX);
}

/* Checks the revision and finds the work tree in one call (rev-parse
 * prints the top before it looks at the revision), then starts the diff
 * and the list of untracked files. */
static int from_git(bwsc__changes *changes, const char *rev, const char *dir,
                    bwsc__errors *errors) {
  if (rev[0] == '-' || rev[0] == '\0') {
    char *message = bwsc__xasprintf("--diff: bad revision '%s'", rev);
    bwsc__errors_add(errors, NULL, 0, 0, message);
    free(message);
    return -1;
  }
  const char *const check[] = {"rev-parse", "--show-toplevel", rev, "--", NULL};
  git_run run;
  run_git(dir, check, &run);
  char *top = first_line(&run);
  char *what = bwsc__xasprintf("git diff %s", rev);
  if (!top)
    git_error(errors, "--diff needs a git repository", dir, &run);
  else if (!run.ok)
    git_error(errors, what, top, &run);
  int rc = top && run.ok ? 0 : -1;
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
  static const char *const others[] = {"ls-files", "-z", "--others",
                                       "--exclude-standard", NULL};
  char *message = NULL;
  if (rc == 0 && (git_start(top, diff, &changes->diff, &message) != 0 ||
                  git_start(top, others, &changes->untracked, &message) != 0)) {
    git_run failed = {NULL, message, 0, 0};
    git_error(errors, what, top, &failed);
    free(message);
    rc = -1;
  }
  free(what);
  if (rc == 0) {
    changes->top = top;
    changes->rev = rev;
  } else {
    free(top);
  }
  return rc;
}

int bwsc__changes_finish(bwsc__changes *changes, bwsc__errors *errors) {
  if (!changes->diff.pid)
    return 0;
  char *what = bwsc__xasprintf("git diff %s", changes->rev);
  git_run run;
  git_wait(&changes->diff, &run);
  int rc = -1;
  if (!run.ok) {
    git_error(errors, what, changes->top, &run);
  } else {
    FILE *in = run.len ? fmemopen(run.out, run.len, "r") : NULL;
    rc = in ? bwsc__changes_read(changes, in, what, changes->top, errors) : 0;
    if (in)
      fclose(in);
  }
  git_free(&run);
  git_wait(&changes->untracked, &run);
  if (rc == 0 && run.ok)
    add_untracked(changes, changes->top, run.out, run.len);
  git_free(&run);
  free(what);
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
