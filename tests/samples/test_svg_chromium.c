/* test_svg_chromium.c - renders bw-trace2svg's picture of the fixture trace
 * in headless Chromium and checks that the screenshot shows a timeline: not
 * blank, several colours, and pixels in the blocked-span and queue-wait
 * colours. The PNG is decoded with libpng.
 *
 * Exits 77 (ctest SKIP_RETURN_CODE) with a message when no Chromium is
 * installed (Debian package `chromium`; BW_CHROMIUM names another binary).
 * Invariants: Chromium runs in its own process group with a fresh profile
 * directory and is killed (that group only) if it outlives CHROMIUM_TIMEOUT;
 * everything is written under one mkdtemp() directory, removed at the end.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <png.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "scratch.h"

#define SKIP_CODE 77
#define CHROMIUM_TIMEOUT_S 90

static char chromium[512];

/* Finds `name` on PATH; 0 and the full path in out, or -1. */
static int find_on_path(const char *name, char *out, size_t size) {
  const char *path = getenv("PATH");
  if (path == NULL)
    path = "/usr/bin:/bin";
  while (*path) {
    size_t len = strcspn(path, ":");
    snprintf(out, size, "%.*s/%s", (int)len, path, name);
    if (access(out, X_OK) == 0)
      return 0;
    path += len + (path[len] == ':');
  }
  return -1;
}

static int find_chromium(void) {
  const char *env = getenv("BW_CHROMIUM");
  if (env != NULL && *env) {
    snprintf(chromium, sizeof chromium, "%s", env);
    return access(chromium, X_OK);
  }
  return find_on_path("chromium", chromium, sizeof chromium) == 0 ||
                 find_on_path("chromium-browser", chromium, sizeof chromium) ==
                     0
             ? 0
             : -1;
}

/* Runs argv with a deadline; returns the exit status or -1. */
static int run_bounded(char *const argv[], int timeout_s) {
  pid_t pid = fork();
  if (pid < 0)
    return -1;
  if (pid == 0) {
    setpgid(0, 0); /* so a timeout kills Chromium's helpers too */
    int devnull = open("/dev/null", O_WRONLY);
    if (devnull >= 0) {
      dup2(devnull, 1);
      dup2(devnull, 2);
    }
    execv(argv[0], argv);
    _exit(127);
  }
  setpgid(pid, pid);
  time_t deadline = time(NULL) + timeout_s;
  int status;
  for (;;) {
    pid_t r = waitpid(pid, &status, WNOHANG);
    if (r == pid)
      return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    if (r < 0 && errno != EINTR)
      return -1;
    if (time(NULL) > deadline) {
      kill(-pid, SIGKILL);
      waitpid(pid, &status, 0);
      return -1;
    }
    usleep(100 * 1000);
  }
}

typedef struct picture {
  size_t pixels;
  size_t non_white;
  size_t distinct;
  size_t blocked_like; /* near #d9534f */
  size_t wait_like;    /* near #f0ad4e */
} picture;

static int near(const uint8_t *px, int r, int g, int b) {
  return abs(px[0] - r) <= 24 && abs(px[1] - g) <= 24 && abs(px[2] - b) <= 24;
}

static int cmp_u32(const void *a, const void *b) {
  uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
  return (x > y) - (x < y);
}

static void analyse_png(const char *path, picture *p) {
  png_image img;
  memset(&img, 0, sizeof img);
  img.version = PNG_IMAGE_VERSION;
  if (!png_image_begin_read_from_file(&img, path))
    fail_msg("cannot read %s: %s", path, img.message);
  img.format = PNG_FORMAT_RGBA;
  uint8_t *buf = malloc(PNG_IMAGE_SIZE(img));
  uint32_t *colours = malloc(sizeof(uint32_t) * img.width * img.height);
  assert_non_null(buf);
  assert_non_null(colours);
  if (!png_image_finish_read(&img, NULL, buf, 0, NULL))
    fail_msg("cannot decode %s: %s", path, img.message);
  memset(p, 0, sizeof *p);
  p->pixels = (size_t)img.width * img.height;
  for (size_t i = 0; i < p->pixels; i++) {
    const uint8_t *px = buf + 4 * i;
    colours[i] = (uint32_t)px[0] << 16 | (uint32_t)px[1] << 8 | px[2];
    if (px[0] < 250 || px[1] < 250 || px[2] < 250)
      p->non_white++;
    if (near(px, 0xd9, 0x53, 0x4f))
      p->blocked_like++;
    if (near(px, 0xf0, 0xad, 0x4e))
      p->wait_like++;
  }
  qsort(colours, p->pixels, sizeof *colours, cmp_u32);
  for (size_t i = 0; i < p->pixels; i++) {
    if (i == 0 || colours[i] != colours[i - 1])
      p->distinct++;
  }
  free(colours);
  free(buf);
  png_image_free(&img);
}

static void test_fixture_timeline_renders_in_chromium(void **state) {
  (void)state;
  char svg[128], png[128], profile[128], url[160], shot[160];
  snprintf(svg, sizeof svg, "%s/timeline.svg", scratch_dir);
  snprintf(png, sizeof png, "%s/shot.png", scratch_dir);
  snprintf(profile, sizeof profile, "%s/profile", scratch_dir);
  snprintf(url, sizeof url, "file://%s", svg);
  snprintf(shot, sizeof shot, "--screenshot=%s", png);
  mkdir(profile, 0700);

  char *tool[] = {T2S_BIN, "-o", svg, T2S_FIXTURE, NULL};
  assert_int_equal(run_bounded(tool, 30), 0);

  char user_data[160];
  snprintf(user_data, sizeof user_data, "--user-data-dir=%s", profile);
  char *browser[] = {chromium,
                     "--headless",
                     "--no-sandbox",
                     "--disable-gpu",
                     "--disable-quic",
                     "--no-first-run",
                     "--disable-background-networking",
                     "--disable-component-update",
                     "--disable-sync",
                     user_data,
                     shot,
                     "--window-size=1200,600",
                     url,
                     NULL};
  int rc = run_bounded(browser, CHROMIUM_TIMEOUT_S);
  assert_int_equal(rc, 0);

  picture p;
  analyse_png(png, &p);
  print_message("screenshot: %zu pixels, %zu not white, %zu colours, "
                "%zu blocked-red, %zu wait-orange\n",
                p.pixels, p.non_white, p.distinct, p.blocked_like, p.wait_like);
  assert_true(p.pixels >= 1200u * 500u);
  assert_true(p.non_white * 50 > p.pixels); /* over 2% drawn */
  assert_true(p.distinct >= 8);
  /* 8 nanosleep spans of ~247 px x 20 px each, and a ~989 px wait. */
  assert_true(p.blocked_like > 8 * 200 * 15);
  assert_true(p.wait_like > 900 * 15);
}

int main(void) {
  if (find_chromium() != 0) {
    const char *env = getenv("BW_CHROMIUM");
    printf("SKIP: %s%s is not an executable chromium (apt-get install "
           "chromium, or point BW_CHROMIUM at one)\n",
           env && *env ? "BW_CHROMIUM=" : "", env && *env ? env : "PATH");
    return SKIP_CODE;
  }
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_fixture_timeline_renders_in_chromium),
  };
  return cmocka_run_group_tests(tests, scratch_create, scratch_remove);
}
