// SPDX-License-Identifier: MIT
// Test program for coexistence with another allocator (foreign-alloc.test),
// C++ side: built once per allocator it is linked with (jemalloc, tcmalloc,
// mimalloc; inputs.cmake), whose operator new/delete it exports, so that the
// program's new, delete, sized and aligned delete, std::vector growth and
// std::string go to that allocator while its malloc may be the runtime's.
// One 1 MiB array from a helper (new[], a site a placement can name), plus
// a malloc'ed buffer. stdout depends only on the values; stderr names the
// array (`object big ADDR BYTES`, twcheck where).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

struct alignas(64) Line {
  unsigned char b[64];
};

struct Node {
  Node *next;
  long v;
};

__attribute__((noinline)) static unsigned char *make_big(size_t n) {
  unsigned char *p = new unsigned char[n];
  for (size_t i = 0; i < n; i++)
    p[i] = (unsigned char)(i * 7);
  return p;
}

int main() {
  unsigned long sum = 0;
  size_t big = 1u << 20;
  unsigned char *b = make_big(big);
  std::fprintf(stderr, "object big %p %zu\n", (void *)b, big);
  for (int round = 0; round < 100; round++) {
    std::vector<int> v; // growth: new/delete of ever larger buffers
    for (int i = 0; i < 5000 + round; i++)
      v.push_back(i ^ round);
    std::string s; // growth past the small-string buffer
    for (int i = 0; i < 50; i++)
      s += std::to_string(i * round) + ",";
    std::vector<std::string> words;
    for (int i = 0; i < 40; i++)
      words.emplace_back(s.substr(i, 30));
    Node *head = nullptr; // new/delete of single objects (sized delete)
    for (int i = 0; i < 100; i++)
      head = new Node{head, i};
    for (Node *n = head; n;) {
      Node *next = n->next;
      sum += (unsigned long)n->v;
      delete n;
      n = next;
    }
    Line *lines = new Line[8]; // aligned new[]
    if ((uintptr_t)lines & 63)
      return 2;
    std::memset(lines, round & 255, sizeof(Line) * 8);
    auto u = std::make_unique<Line>(); // aligned new
    if ((uintptr_t)u.get() & 63)
      return 3;
    char *m = static_cast<char *>(std::malloc(300 + round)); // C side
    std::memcpy(m, s.data(), s.size() < 300 ? s.size() : 300);
    sum += v[v.size() / 2] + s.size() + words[7].size() + lines[3].b[9] +
           (unsigned char)m[5] + b[round * 11];
    std::free(m);
    delete[] lines;
  }
  for (size_t i = 0; i < big; i += 4096)
    sum += b[i];
  delete[] b;
  std::printf("checksum: %lx\n", sum);
  return 0;
}
