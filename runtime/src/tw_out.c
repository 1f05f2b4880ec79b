/* SPDX-License-Identifier: MIT */
/*
 * Layer 0 (base). Buffered output with write(2) for the census and the run report: no stdio
 * (which may allocate) and files are written to a temporary name with
 * O_NOFOLLOW|O_EXCL, mode 0600, then renamed into place; and mkdir -p for
 * the pmem directory. (The size
 * parser of the TIERWISE_* variables is common/tw_size.c.)
 */
#define _GNU_SOURCE
#include "tw_base.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

size_t tw_fmt_u64(char *buf, uint64_t v) {
  char tmp[24];
  size_t n = 0, i = 0;
  do {
    tmp[n++] = (char)('0' + v % 10);
    v /= 10;
  } while (v);
  while (n)
    buf[i++] = tmp[--n];
  buf[i] = 0;
  return i;
}

int tw_mkdirs(const char *path) {
  char buf[4096];
  size_t n = strlen(path);
  if (!n || n >= sizeof(buf))
    return -1;
  memcpy(buf, path, n + 1);
  for (size_t i = 1; i < n; i++) { /* parents: as mkdir -p, umask applies */
    if (buf[i] != '/' || buf[i - 1] == '/')
      continue;
    buf[i] = 0;
    if (mkdir(buf, 0777) && errno != EEXIST)
      return -1;
    buf[i] = '/';
  }
  return mkdir(buf, 0700) && errno != EEXIST ? -1 : 0;
}

int tw_out_open(tw_out *o, const char *path, char *tmp, size_t cap) {
  char pid[24];
  tw_fmt_u64(pid, (uint64_t)getpid());
  size_t n = strlen(path);
  if (n + 32 > cap)
    return -1;
  memcpy(tmp, path, n);
  memcpy(tmp + n, ".tmp.", 5);
  strcpy(tmp + n + 5, pid);
  o->len = 0;
  o->failed = 0;
  o->fd = tw_fd_keep(
      open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
  return o->fd < 0 ? -1 : 0;
}

void tw_out_flush(tw_out *o) {
  size_t at = 0;
  while (at < o->len) {
    ssize_t w = write(o->fd, o->buf + at, o->len - at);
    if (w <= 0) {
      o->failed = 1;
      break;
    }
    at += (size_t)w;
  }
  o->len = 0;
}

int tw_out_close(tw_out *o, const char *tmp, const char *path) {
  tw_out_flush(o);
  tw_fd_forget(o->fd);
  if (tw_fd_close(o->fd) || o->failed) {
    unlink(tmp);
    return -1;
  }
  return rename(tmp, path);
}

static void tw_out_mem(tw_out *o, const char *s, size_t n) {
  if (o->len + n > sizeof(o->buf))
    tw_out_flush(o);
  if (n > sizeof(o->buf)) {
    for (; n; s++, n--)
      tw_out_mem(o, s, 1);
    return;
  }
  memcpy(o->buf + o->len, s, n);
  o->len += n;
}

void tw_out_str(tw_out *o, const char *s) { tw_out_mem(o, s, strlen(s)); }

void tw_out_u64(tw_out *o, uint64_t v) {
  char b[24];
  tw_out_mem(o, b, tw_fmt_u64(b, v));
}

void tw_out_json(tw_out *o, const char *s) {
  tw_out_mem(o, "\"", 1);
  for (; s && *s; s++) {
    unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\') {
      char e[2] = {'\\', (char)c};
      tw_out_mem(o, e, 2);
    } else if (c < 0x20) {
      char e[7];
      snprintf(e, sizeof(e), "\\u%04x", c);
      tw_out_mem(o, e, 6);
    } else
      tw_out_mem(o, (const char *)&c, 1);
  }
  tw_out_mem(o, "\"", 1);
}
