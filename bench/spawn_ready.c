/*===- bench/spawn_ready.c - Process start to model ready ------------------===*
 *
 * Usage: spawn_ready PROGRAM [ARGS...]
 *        spawn_ready --ready
 *
 * Reads CLOCK_MONOTONIC, starts PROGRAM (posix_spawn, its stdout into a pipe),
 * copies PROGRAM's output to stdout, and then prints
 *   spawn_ready_ms: <from the spawn to the ready_ns: line PROGRAM printed>
 *   spawn_exit_ms: <from the spawn to PROGRAM's exit>
 * and exits with PROGRAM's status. `kiln-run MODEL --inspect` prints ready_ns
 * right after kiln_model_open, so this is process start to model ready.
 *
 * Why a C program: timed from the benchmark's Python process, the same spawn
 * takes 0.5 ms longer once that process has created onnxruntime sessions
 * (a trivial C program: 0.54 -> 1.13 ms); from this small process the figure
 * is the child's own start-up. `--ready` only prints its own ready_ns, so
 * `spawn_ready spawn_ready --ready` is the floor: a minimal C program's start.
 *===----------------------------------------------------------------------===*/
#include <errno.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static long long monotonic_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int main(int argc, char **argv) {
  if (argc == 2 && strcmp(argv[1], "--ready") == 0) {
    printf("ready_ns: %lld\n", monotonic_ns());
    return 0;
  }
  if (argc < 2) {
    fprintf(stderr, "usage: spawn_ready PROGRAM [ARGS...] | spawn_ready --ready\n");
    return 2;
  }
  int out[2];
  if (pipe(out) != 0) {
    perror("spawn_ready: pipe");
    return 2;
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, out[1], 1);
  posix_spawn_file_actions_addclose(&actions, out[0]);
  posix_spawn_file_actions_addclose(&actions, out[1]);

  long long spawned = monotonic_ns();
  pid_t pid;
  int err = posix_spawn(&pid, argv[1], &actions, NULL, argv + 1, environ);
  posix_spawn_file_actions_destroy(&actions);
  close(out[1]);
  if (err != 0) {
    fprintf(stderr, "spawn_ready: cannot start %s: %s\n", argv[1], strerror(err));
    return 2;
  }

  /* The child's whole output (a descriptor print: a few hundred bytes). */
  size_t cap = 1 << 16, len = 0;
  char *text = malloc(cap + 1);
  if (!text)
    return 2;
  for (;;) {
    if (len == cap) {
      char *grown = realloc(text, 2 * cap + 1);
      if (!grown)
        return 2;
      text = grown;
      cap *= 2;
    }
    ssize_t n = read(out[0], text + len, cap - len);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      break;
    len += (size_t)n;
  }
  close(out[0]);
  text[len] = '\0';
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  long long exited = monotonic_ns();

  fwrite(text, 1, len, stdout);
  const char *ready = strstr(text, "ready_ns: ");
  if (ready)
    printf("spawn_ready_ms: %.4f\n", (atoll(ready + 10) - spawned) / 1e6);
  printf("spawn_exit_ms: %.4f\n", (exited - spawned) / 1e6);
  free(text);
  if (WIFEXITED(status))
    return WEXITSTATUS(status);
  return 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}
