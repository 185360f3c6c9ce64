// bench-launch: runs one client and records its own CPU time and peak RSS.
//
//   bench-launch RESULT_FILE TIMEOUT_SECONDS -- EXECUTABLE [ARGS...]
//
// Why a launcher: on Linux, exec() folds the high-water RSS of the address
// space it replaces into the new program's ru_maxrss. A child spawned straight
// from the harness (posix_spawn shares the harness's memory until exec) would
// report at least the harness's own peak RSS. This small program fork()s from
// a tiny address space instead, so the client's ru_maxrss is its own, then
// reaps it with wait4 and writes the rusage as one JSON line to RESULT_FILE.
//
// The client is killed with SIGKILL after TIMEOUT_SECONDS, and also if the
// launcher dies (PR_SET_PDEATHSIG), so nothing outlives a harness run.
// stdin/stdout/stderr and the environment are passed through.
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double seconds(struct timeval tv) { return (double)tv.tv_sec + (double)tv.tv_usec / 1e6; }

int main(int argc, char **argv) {
    if (argc < 5 || strcmp(argv[3], "--") != 0) {
        fprintf(stderr, "usage: bench-launch RESULT_FILE TIMEOUT_SECONDS -- EXECUTABLE [ARGS...]\n");
        return 64;
    }
    const char *result_path = argv[1];
    double timeout = strtod(argv[2], NULL);
    if (timeout <= 0) timeout = 300;

    // SIGCHLD stays blocked here and is taken with sigtimedwait (the deadline).
    sigset_t chld, previous;
    sigemptyset(&chld);
    sigaddset(&chld, SIGCHLD);
    sigprocmask(SIG_BLOCK, &chld, &previous);

    pid_t parent = getpid();
    pid_t child = fork();
    if (child < 0) {
        perror("bench-launch: fork");
        return 70;
    }
    if (child == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent) _exit(70); // the launcher is already gone
        sigprocmask(SIG_SETMASK, &previous, NULL);
        execv(argv[4], &argv[4]);
        fprintf(stderr, "bench-launch: cannot run %s: %s\n", argv[4], strerror(errno));
        _exit(127);
    }

    struct timespec start, now;
    clock_gettime(CLOCK_MONOTONIC, &start);
    int timed_out = 0;
    // Bounded: each turn either ends the wait or consumes part of the deadline.
    for (int turn = 0; turn < 100000; turn++) {
        clock_gettime(CLOCK_MONOTONIC, &now);
        double left = timeout - ((double)(now.tv_sec - start.tv_sec) + (double)(now.tv_nsec - start.tv_nsec) / 1e9);
        if (left <= 0) {
            timed_out = 1;
            kill(child, SIGKILL);
            break;
        }
        struct timespec wait_for = {(time_t)left, (long)((left - (double)(time_t)left) * 1e9)};
        int got = sigtimedwait(&chld, NULL, &wait_for);
        if (got == SIGCHLD) break;
        if (got < 0 && errno == EAGAIN) continue; // deadline reached: checked above
    }

    int status = 0;
    struct rusage usage;
    memset(&usage, 0, sizeof usage);
    pid_t reaped = -1;
    for (int turn = 0; turn < 1000; turn++) { // retried on EINTR only
        reaped = wait4(child, &status, 0, &usage);
        if (reaped >= 0 || errno != EINTR) break;
    }
    if (reaped != child) {
        perror("bench-launch: wait4");
        return 70;
    }

    FILE *out = fopen(result_path, "w");
    if (!out) {
        perror("bench-launch: result file");
        return 70;
    }
    fprintf(out, "{\"pid\":%d,\"exited\":%s,\"exit_code\":%d,\"signal\":%d,\"timed_out\":%s,"
                 "\"user_s\":%.6f,\"sys_s\":%.6f,\"max_rss_kib\":%ld}\n",
            (int)child, WIFEXITED(status) ? "true" : "false", WIFEXITED(status) ? WEXITSTATUS(status) : -1,
            WIFSIGNALED(status) ? WTERMSIG(status) : 0, timed_out ? "true" : "false",
            seconds(usage.ru_utime), seconds(usage.ru_stime), usage.ru_maxrss);
    fclose(out);
    return 0;
}
