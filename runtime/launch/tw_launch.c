/* SPDX-License-Identifier: MIT */
/*
 * tierwise-launch: what `tierwise run` is while the program runs. The CLI
 * (advisor/tierwise/commands/run.py) checks and prepares in Python, then
 * execs this launcher in its own place: the same pid, so the signals a
 * scheduler, a supervisor or a shell sends to `tierwise run`, and its wait
 * for it, still concern the program. The launcher starts the program with
 * the runtime's variables set, passes on the signals sent to it, waits,
 * then execs the finish step (tierwise.commands.run_finish: the summary
 * lines, removing the private directory, the program's exit status) with
 * how the program ended. While the program runs the Python interpreter is
 * gone from memory: ~150 KiB of anonymous memory on the DRAM node instead
 * of its ~6 MiB (issue 40).
 *
 *   tierwise-launch [-e NAME=VALUE]... [-u NAME]... -f N WORD... -- CMD ARG...
 *
 * -e, -u  set, remove a variable in the program's environment only: the
 *         launcher and the finish step keep the CLI's, so the runtime is
 *         never preloaded into them.
 * -f N    the finish command, the N words that follow; it is exec'ed when
 *         the program has ended, with two words appended: the program's
 *         pid and how it ended, "exit:STATUS", "signal:SIGNO", or
 *         "exec:ERRNO" (it could not be started).
 *
 * Signals: SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGUSR1, SIGUSR2, SIGALRM,
 * SIGWINCH, SIGCONT and SIGTSTP sent to the launcher are sent on to the
 * program, except the ones the program sent (to its parent) and the ones a
 * terminal sends to its whole foreground process group (Ctrl-C, Ctrl-\,
 * Ctrl-Z, a hangup, a resize: si_code SI_KERNEL), which the program, in
 * the same group, got already. A SIGTSTP then stops the launcher too,
 * with SIGSTOP (in an orphaned process group, where the kernel discards a
 * SIGTSTP whose action is the default, the program runs on; SIGCONT
 * continues the launcher). A signal ignored when the launcher starts
 * (nohup, a background job of a shell without job control) stays ignored,
 * in the program too. SIGKILL, which cannot be passed on, kills the
 * program too (PR_SET_PDEATHSIG; the private directory stays then). The
 * finish step starts with the passed signals blocked, so that one arriving
 * after the program ended cannot stop its clean-up; it exits with the
 * program's status.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

static const int tw_passed[] = {SIGHUP,  SIGINT,  SIGQUIT,  SIGTERM, SIGUSR1,
                                SIGUSR2, SIGALRM, SIGWINCH, SIGCONT, SIGTSTP};
#define TW_NPASSED (int)(sizeof(tw_passed) / sizeof(tw_passed[0]))

static volatile pid_t tw_child;

/* The signals a terminal sends its foreground process group. */
static int tw_from_terminal(int sig) {
  return sig == SIGINT || sig == SIGQUIT || sig == SIGTSTP || sig == SIGHUP ||
         sig == SIGWINCH || sig == SIGCONT;
}

static void tw_pass(int sig, siginfo_t *info, void *ctx) {
  (void)ctx;
  int saved = errno;
  int sent = info->si_code == SI_USER || info->si_code == SI_QUEUE ||
             info->si_code == SI_TKILL;
  int skip = sent ? info->si_pid == tw_child
                  : info->si_code == SI_KERNEL && tw_from_terminal(sig);
  if (!skip)
    kill(tw_child, sig);
  if (sig == SIGTSTP)
    kill(getpid(), SIGSTOP); /* delivered when this handler returns */
  errno = saved;
}

static void tw_block(sigset_t *old) {
  sigset_t set;
  sigemptyset(&set);
  for (int i = 0; i < TW_NPASSED; i++)
    sigaddset(&set, tw_passed[i]);
  sigprocmask(SIG_BLOCK, &set, old);
}

/* The handlers, over the signals not ignored at start. */
static void tw_catch(void) {
  for (int i = 0; i < TW_NPASSED; i++) {
    struct sigaction old, sa = {.sa_sigaction = tw_pass,
                                .sa_flags = SA_SIGINFO | SA_RESTART};
    sigfillset(&sa.sa_mask);
    if (sigaction(tw_passed[i], NULL, &old) == 0 && old.sa_handler != SIG_IGN)
      sigaction(tw_passed[i], &sa, NULL);
  }
}

static void tw_usage(void) {
  fputs("usage: tierwise-launch [-e NAME=VALUE]... [-u NAME]... -f N WORD... "
        "-- CMD ARG... (started by `tierwise run`)\n",
        stderr);
  exit(2);
}

/* The program's environment: the -e and -u options in argv[1..end). */
static void tw_apply_env(char **argv, int end) {
  for (int i = 1; i < end; i++) {
    if (!strcmp(argv[i], "-e"))
      putenv(argv[++i]);
    else if (!strcmp(argv[i], "-u"))
      unsetenv(argv[++i]);
    else if (!strcmp(argv[i], "-f"))
      i += 1 + atoi(argv[i + 1]);
  }
}

/* Ends this process as the program ended, when the finish step cannot:
 * its exit status, or the same signal (without a core file). */
static void tw_end_as(int status) {
  if (!WIFSIGNALED(status))
    exit(WIFEXITED(status) ? WEXITSTATUS(status) : 1);
  int sig = WTERMSIG(status);
  struct rlimit none = {0, 0};
  setrlimit(RLIMIT_CORE, &none);
  signal(sig, SIG_DFL);
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, sig);
  sigprocmask(SIG_UNBLOCK, &set, NULL);
  raise(sig);
  exit(128 + sig);
}

int main(int argc, char **argv) {
  char **finish = NULL;
  int nfinish = 0, cmd = 0;
  for (int i = 1; i < argc && !cmd; i++) {
    if ((!strcmp(argv[i], "-e") || !strcmp(argv[i], "-u")) && i + 1 < argc)
      i++;
    else if (!strcmp(argv[i], "-f") && i + 1 < argc) {
      nfinish = atoi(argv[i + 1]);
      if (nfinish < 1 || nfinish > argc - i - 2)
        tw_usage();
      finish = argv + i + 2;
      i += 1 + nfinish;
    } else if (!strcmp(argv[i], "--"))
      cmd = i + 1;
    else
      tw_usage();
  }
  if (!finish || !cmd || cmd >= argc)
    tw_usage();

  /* The signals stay blocked from before the fork until the child's pid is
   * known and the handlers are in place: none is lost or sent to pid 0. */
  sigset_t old;
  tw_block(&old);
  int pipefd[2], err = 0;
  if (pipe2(pipefd, O_CLOEXEC) < 0) {
    err = errno;
    pipefd[0] = pipefd[1] = -1;
  }
  pid_t launcher = getpid();
  pid_t pid = err ? -1 : fork();
  if (pid == 0) {
    /* SIGKILL cannot be passed on: the program gets one when the launcher
     * dies of it (or of anything), as if it were the process killed. */
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) == 0 && getppid() != launcher)
      _exit(128 + SIGKILL);
    tw_apply_env(argv, cmd - 1);
    sigprocmask(SIG_SETMASK, &old, NULL);
    execvp(argv[cmd], argv + cmd);
    err = errno;
    if (write(pipefd[1], &err, sizeof(err)) < 0)
      _exit(127);
    _exit(127);
  }
  if (pid < 0 && !err)
    err = errno;
  int status = 0;
  if (pid > 0) {
    tw_child = pid;
    tw_catch();
    sigprocmask(SIG_SETMASK, &old, NULL);
    close(pipefd[1]);
    ssize_t n;
    while ((n = read(pipefd[0], &err, sizeof(err))) < 0 && errno == EINTR)
      ;
    if (n != (ssize_t)sizeof(err))
      err = 0;
    /* Waited for without reaping, so that no signal is passed on to a pid
     * already reaped (and perhaps another process's), then blocked. */
    siginfo_t si;
    while (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOWAIT) < 0 &&
           errno == EINTR)
      ;
    tw_block(NULL);
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
      ;
  }

  char pidword[24], how[32];
  snprintf(pidword, sizeof(pidword), "%d", pid > 0 ? (int)pid : 0);
  if (err)
    snprintf(how, sizeof(how), "exec:%d", err);
  else if (WIFSIGNALED(status))
    snprintf(how, sizeof(how), "signal:%d", WTERMSIG(status));
  else
    snprintf(how, sizeof(how), "exit:%d", WEXITSTATUS(status));
  char **fargv = calloc((size_t)nfinish + 3, sizeof(char *));
  if (fargv) {
    memcpy(fargv, finish, (size_t)nfinish * sizeof(char *));
    fargv[nfinish] = pidword;
    fargv[nfinish + 1] = how;
    execv(fargv[0], fargv);
  }
  fprintf(stderr, "tierwise run: error: cannot start %s: %s (no summary)\n",
          finish[0], strerror(errno));
  if (err)
    exit(2);
  tw_end_as(status);
  return 1;
}
