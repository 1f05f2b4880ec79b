// SPDX-License-Identifier: MIT
// Layer 2 (policy): placement.json's JSON, read with simdjson's On-Demand
// API (stage 1 vectorised in libsimdjson, runtime-dispatched to the CPU)
// behind the C interface tw_pjson_read (tw_policy.h); tw_placement.c checks
// the values and keeps the sites. Nothing is copied: a string is handed on
// as its span in the caller's buffer, and only a string with escapes is
// rewritten, unescaped, in place (never longer than its JSON text). Numbers
// are parsed only in the fields the runtime reads; other fields are skipped.
// No exceptions (-fno-exceptions), no allocation but the parser's buffers
// (new[], freed before return: this file's own operator new[]/delete[],
// hidden, below).
#include "tw_pjson.h"

#include <simdjson.h>

#include <new>
#include <stddef.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

// The parser's buffers (simdjson's inline code: its string buffer,
// new (std::nothrow) uint8_t[] and delete[]) come from the runtime itself,
// never from the program's operator new[]/delete[]: a program linked with
// jemalloc got its string buffer from jemalloc's exported _Znam and freed
// it through jemalloc's delete[], which calls free() - the runtime's - and
// glibc's free aborted at start ("free(): invalid pointer", issue 40).
// Local to the runtime's libraries (TW_OWN_NEW, defined for them alone,
// and runtime/tw_local.map, their version script: a visibility attribute is
// ignored on these): calls from them bind here, the program's own
// operators are untouched (elsewhere - the fuzz targets - these would
// replace the program's operators: not defined there) (`nm -D --undefined-only` lists no
// _Zn/_Zd, and `nm -D --defined-only` no plain new[]/delete[]:
// test/runtime/foreign-alloc.test). Anonymous memory by raw system call (no
// interposed mmap), its length 16 bytes below the block; once per start.
// (libsimdjson.so's own allocations - the parser implementation and its
// structural index - use the process's operator new/delete, one pair
// always: the program's allocator's in a process where it serves
// (tw_config.c stands the runtime down then), else libstdc++'s, which
// calls the runtime's malloc and free.)
#ifdef TW_OWN_NEW
static void *tw_pj_map(std::size_t n) {
  std::size_t len = (n + 16 + 4095) & ~(std::size_t)4095;
  if (len < n)
    return nullptr;
  long m = syscall(SYS_mmap, nullptr, len, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (m < 0 && m > -4096)
    return nullptr;
  *(std::size_t *)m = len;
  return (char *)m + 16;
}

void *operator new[](std::size_t n, const std::nothrow_t &) noexcept {
  return tw_pj_map(n);
}

void operator delete[](void *p) noexcept {
  if (p) {
    char *m = (char *)p - 16;
    syscall(SYS_munmap, m, *(std::size_t *)m);
  }
}

void operator delete[](void *p, std::size_t) noexcept { operator delete[](p); }
#endif

using namespace simdjson;

static_assert(TW_PJSON_PADDING >= SIMDJSON_PADDING, "simdjson's padding");

namespace {

struct reader {
  char *buf;
  bool refused = false; // by the sink: a bad site, said by it

  // A string value: its span (kind 1), or kind 2 for another type.
  error_code str(ondemand::value v, tw_pjstr *out) {
    if (out->kind)
      return SUCCESS; // a repeated key: the first one counts
    ondemand::json_type t;
    SIMDJSON_TRY(v.type().get(t));
    if (t != ondemand::json_type::string) {
      out->kind = 2;
      return SUCCESS;
    }
    std::string_view raw = v.raw_json_token(); // "..." and blanks after it
    size_t n = raw.size();
    while (n && raw[n - 1] != '"')
      n--;
    if (n < 2)
      return STRING_ERROR;
    char *p = buf + (raw.data() - buf) + 1;
    n -= 2;
    if (memchr(p, '\\', n)) {
      std::string_view s;
      SIMDJSON_TRY(v.get_string().get(s));
      memmove(p, s.data(), s.size());
      n = strnlen(p, s.size()); // a \u0000 ends the string
    }
    out->p = p;
    out->n = (uint32_t)n;
    out->kind = 1;
    return SUCCESS;
  }

  error_code num(ondemand::value v, tw_pjnum *out) {
    if (out->kind)
      return SUCCESS;
    ondemand::json_type t;
    SIMDJSON_TRY(v.type().get(t));
    if (t != ondemand::json_type::number) {
      out->kind = 2;
      return SUCCESS;
    }
    SIMDJSON_TRY(v.get_double().get(out->v));
    out->kind = 1;
    return SUCCESS;
  }

  // A list of unsigned integers (tw_pjlist); kind 2 for another type, an
  // element that is not such an integer, or more than TW_PJSON_LIST_MAX.
  error_code ints(ondemand::value v, tw_pjlist *out) {
    if (out->kind)
      return SUCCESS;
    ondemand::json_type t;
    SIMDJSON_TRY(v.type().get(t));
    out->kind = 2;
    if (t != ondemand::json_type::array)
      return SUCCESS;
    ondemand::array a;
    SIMDJSON_TRY(v.get_array().get(a));
    int n = 0;
    bool ok = true;
    for (auto e : a) {
      ondemand::value ev;
      SIMDJSON_TRY(std::move(e).get(ev));
      SIMDJSON_TRY(ev.type().get(t));
      uint64_t x;
      if (ok && (t != ondemand::json_type::number ||
                 ev.get_uint64().get(x) || n == TW_PJSON_LIST_MAX))
        ok = false; // the rest is skipped, checked for structure only
      else if (ok)
        out->v[n++] = x;
    }
    if (ok && n) {
      out->kind = 1;
      out->n = n;
    }
    return SUCCESS;
  }

  // The fields of an object named in \p spec (others skipped) into \p out;
  // a "sites" or "modules" list through \p sink. Not an object: none.
  struct spec {
    const char *key;
    char kind; // 's' string, 'n' number, 'l' a list of integers, 'S' sites,
               // 'M' modules
    size_t at; // offset in out
  };
  error_code fields(ondemand::value v, const spec *sp, int nsp, void *out,
                    const tw_pjsink *sink) {
    ondemand::json_type t;
    SIMDJSON_TRY(v.type().get(t));
    if (t != ondemand::json_type::object)
      return SUCCESS;
    ondemand::object o;
    SIMDJSON_TRY(v.get_object().get(o));
    for (auto f : o) {
      ondemand::field fld;
      SIMDJSON_TRY(std::move(f).get(fld));
      ondemand::raw_json_string k = fld.key();
      const char *kr = k.raw(); // the key's text after its '"'
      for (int i = 0; i < nsp; i++) {
        if (kr[0] != sp[i].key[0] || !k.unsafe_is_equal(sp[i].key))
          continue;
        char *at = (char *)out + sp[i].at;
        error_code e =
            sp[i].kind == 's'   ? str(fld.value(), (tw_pjstr *)at)
            : sp[i].kind == 'n' ? num(fld.value(), (tw_pjnum *)at)
            : sp[i].kind == 'l' ? ints(fld.value(), (tw_pjlist *)at)
                                : list(fld.value(), sink, sp[i].kind == 'S',
                                       (int8_t *)at);
        if (e)
          return e;
        break;
      }
    }
    return SUCCESS;
  }

  error_code site(ondemand::value v, const tw_pjsink *sink) {
    static const spec sp[] = {
        {"stack", 's', offsetof(tw_pjsite, stack)},
        {"location", 's', offsetof(tw_pjsite, location)},
        {"tier", 's', offsetof(tw_pjsite, tier)},
        {"bytes", 'n', offsetof(tw_pjsite, bytes)},
        {"dram_bytes", 'n', offsetof(tw_pjsite, dram_bytes)},
        {"dram_fraction", 'n', offsetof(tw_pjsite, dram_fraction)},
        {"rank", 'n', offsetof(tw_pjsite, rank)},
        {"planned_bytes", 'n', offsetof(tw_pjsite, planned_bytes)},
        {"planned_live", 'l', offsetof(tw_pjsite, planned_live)}};
    tw_pjsite s;
    memset(&s, 0, offsetof(tw_pjsite, planned_live.v)); // v: 512 bytes
    SIMDJSON_TRY(fields(v, sp, sizeof(sp) / sizeof(*sp), &s, sink));
    if (sink->site(sink->ctx, &s))
      return SUCCESS;
    refused = true;
    return INDEX_OUT_OF_BOUNDS;
  }

  struct pmodule {
    tw_pjstr module, build_id;
  };
  error_code module(ondemand::value v, const tw_pjsink *sink) {
    static const spec sp[] = {{"module", 's', offsetof(pmodule, module)},
                              {"build_id", 's', offsetof(pmodule, build_id)}};
    pmodule m;
    memset(&m, 0, sizeof(m));
    SIMDJSON_TRY(fields(v, sp, 2, &m, sink));
    if (m.module.kind == 1 && m.build_id.kind == 1)
      sink->module(sink->ctx, &m.module, &m.build_id);
    return SUCCESS;
  }

  // A list: each element through site() or module(); *kind as in tw_pjstr
  // (the first list of a name counts).
  error_code list(ondemand::value v, const tw_pjsink *sink, bool sites,
                  int8_t *kind) {
    if (*kind)
      return SUCCESS;
    ondemand::json_type t;
    SIMDJSON_TRY(v.type().get(t));
    if (t != ondemand::json_type::array) {
      *kind = 2;
      return SUCCESS;
    }
    *kind = 1;
    ondemand::array a;
    SIMDJSON_TRY(v.get_array().get(a));
    for (auto e : a) {
      ondemand::value ev;
      SIMDJSON_TRY(std::move(e).get(ev));
      SIMDJSON_TRY(sites ? site(ev, sink) : module(ev, sink));
    }
    return SUCCESS;
  }

  error_code root(ondemand::document &doc, tw_pjroot *r,
                  const tw_pjsink *sink) {
    static const spec sp[] = {
        {"format", 's', offsetof(tw_pjroot, format)},
        {"version", 'n', offsetof(tw_pjroot, version)},
        {"default_tier", 's', offsetof(tw_pjroot, default_tier)},
        {"depth", 'n', offsetof(tw_pjroot, depth)},
        {"sites", 'S', offsetof(tw_pjroot, sites)},
        {"modules", 'M', offsetof(tw_pjroot, modules)}};
    ondemand::json_type t;
    SIMDJSON_TRY(doc.type().get(t));
    if (t != ondemand::json_type::object)
      return SUCCESS; // no "format": said by the caller
    ondemand::value v;
    SIMDJSON_TRY(doc.get_value().get(v));
    SIMDJSON_TRY(fields(v, sp, 6, r, sink));
    const char *more;
    if (!doc.current_location().get(more)) // not at the end
      return TRAILING_CONTENT;
    return SUCCESS;
  }
};

} // namespace

extern "C" int tw_pjson_read(char *buf, size_t len, tw_pjroot *root,
                             const tw_pjsink *sink, const char **err_at) {
  memset(root, 0, sizeof(*root));
  *err_at = nullptr;
  reader rd{buf};
  ondemand::parser parser;
  ondemand::document doc;
  error_code e = parser.iterate(buf, len, len + TW_PJSON_PADDING).get(doc);
  if (e) { // stage 1 (quotes, UTF-8): no position; the text's end is the
           // likeliest place (a truncated file)
    *err_at = len > 32 ? buf + len - 32 : buf;
    return 0;
  }
  e = rd.root(doc, root, sink);
  if (rd.refused)
    return -1;
  if (e) {
    const char *at = nullptr;
    if (doc.current_location().get(at) || !at || at <= buf || at > buf + len)
      at = len > 32 ? buf + len - 32 : buf; // no position (the root's)
    *err_at = at;
    return 0;
  }
  return 1;
}
