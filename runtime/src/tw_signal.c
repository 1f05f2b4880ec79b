/* SPDX-License-Identifier: MIT */
/*
 * Layer 4 (entry points): the runtime's handlers of the signals that end a
 * job - SIGTERM, SIGINT, SIGHUP (a scheduler, Ctrl-C, a supervisor, a
 * closed terminal) - and the interposed sigaction and signal that keep
 * them out of the program's sight.
 *
 * A program whose disposition is the default is killed by these without
 * its destructors: the handler writes the census or run report (the
 * lifecycle's finish, tw_signal_catch), then the default action happens
 * (re-raised with SIG_DFL). Installed where the disposition is the default
 * (not over SIG_IGN: nohup), and to the program it still is the default:
 * sigaction and signal say SIG_DFL, a program that sets SIG_DFL keeps it
 * (the report included), any other handler replaces it. Before, a program
 * that installs its handler only over the default saw a foreign one and
 * left it: Python did not install its SIGINT handler, so Ctrl-C ended a
 * Python program without KeyboardInterrupt and its cleanup. Writing takes
 * the runtime's locks, so a thread interrupted inside the runtime
 * (tw_in_core) cannot write: then the signal takes its default action with
 * no report. SIGKILL cannot be caught: no report.
 */
#define _GNU_SOURCE
#include "tw_mech.h"

#include <errno.h>
#include <signal.h>
#include <string.h>

#define TW_EXPORT __attribute__((visibility("default")))

extern int __sigaction(int, const struct sigaction *, struct sigaction *);
extern __sighandler_t bsd_signal(int, __sighandler_t); /* glibc's signal */

static void (*tw_sig_finish)(void);
static int tw_sig_own[NSIG]; /* 1: ours is installed, the program's is
                                SIG_DFL (atomic) */

static int tw_sig_ours(int sig) {
  return (sig == SIGTERM || sig == SIGINT || sig == SIGHUP) &&
         __atomic_load_n(&tw_sig_finish, __ATOMIC_ACQUIRE) != NULL;
}

static void tw_sig_handler(int sig) {
  if (!tw_in_core)
    tw_sig_finish();
  struct sigaction dfl = {.sa_handler = SIG_DFL};
  __atomic_store_n(&tw_sig_own[sig], 0, __ATOMIC_RELEASE);
  __sigaction(sig, &dfl, NULL);
  raise(sig); /* delivered when this handler returns */
}

static int tw_sig_install(int sig) {
  struct sigaction sa = {.sa_handler = tw_sig_handler};
  sigemptyset(&sa.sa_mask);
  if (__sigaction(sig, &sa, NULL))
    return -1;
  __atomic_store_n(&tw_sig_own[sig], 1, __ATOMIC_RELEASE);
  return 0;
}

void tw_signal_catch(void (*finish)(void)) {
  static const int sigs[] = {SIGTERM, SIGINT, SIGHUP};
  __atomic_store_n(&tw_sig_finish, finish, __ATOMIC_RELEASE);
  for (unsigned i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
    struct sigaction old;
    if (__sigaction(sigs[i], NULL, &old) == 0 &&
        !(old.sa_flags & SA_SIGINFO) && old.sa_handler == SIG_DFL)
      tw_sig_install(sigs[i]);
  }
}

static int tw_sig_is_default(const struct sigaction *act) {
  return !(act->sa_flags & SA_SIGINFO) && act->sa_handler == SIG_DFL;
}

TW_EXPORT int sigaction(int sig, const struct sigaction *act,
                        struct sigaction *old) {
  if (sig == SIGSEGV && tw_touch_owns_segv()) /* the sample profiler's */
    return tw_touch_sigaction(act, old);
  if (!tw_sig_ours(sig))
    return __sigaction(sig, act, old);
  int own = __atomic_load_n(&tw_sig_own[sig], __ATOMIC_ACQUIRE);
  struct sigaction was;
  if (act && tw_sig_is_default(act)) { /* the default: ours, with the report */
    if (!own && (__sigaction(sig, NULL, &was) || tw_sig_install(sig)))
      return -1;
  } else if (act) {
    __atomic_store_n(&tw_sig_own[sig], 0, __ATOMIC_RELEASE);
    if (__sigaction(sig, act, &was))
      return -1;
  } else if (!own && __sigaction(sig, NULL, &was))
    return -1;
  if (old) {
    if (own) {
      memset(old, 0, sizeof(*old));
      old->sa_handler = SIG_DFL;
    } else
      *old = was;
  }
  return 0;
}

TW_EXPORT __sighandler_t signal(int sig, __sighandler_t handler) {
  if (sig == SIGSEGV && tw_touch_owns_segv()) {
    struct sigaction a = {.sa_handler = handler, .sa_flags = SA_RESTART}, was;
    sigemptyset(&a.sa_mask);
    if (handler == SIG_ERR || tw_touch_sigaction(&a, &was))
      return SIG_ERR;
    return was.sa_handler;
  }
  if (!tw_sig_ours(sig))
    return bsd_signal(sig, handler);
  int own = __atomic_load_n(&tw_sig_own[sig], __ATOMIC_ACQUIRE);
  if (handler == SIG_DFL) {
    if (own)
      return SIG_DFL;
    struct sigaction was;
    if (__sigaction(sig, NULL, &was) || tw_sig_install(sig))
      return SIG_ERR;
    return was.sa_handler;
  }
  __atomic_store_n(&tw_sig_own[sig], 0, __ATOMIC_RELEASE);
  __sighandler_t prev = bsd_signal(sig, handler);
  return prev == SIG_ERR ? SIG_ERR : own ? SIG_DFL : prev;
}
