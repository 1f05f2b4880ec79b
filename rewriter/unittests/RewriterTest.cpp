// SPDX-License-Identifier: MIT
// Unit tests of rewriter/lib (GoogleTest, Debian's libgtest-dev): the
// placement grammar helpers, include insertion, the unified diff, the AST
// facts SourceIndex gathers from code in memory, and the resolver's
// decisions (per-use macro expansion, wrapper refactoring) on them. Run by
// test/rewriter/unittests.test.
#include "IncludeInsertion.h"
#include "Placement.h"
#include "Resolver.h"
#include "SourceIndex.h"
#include "UnifiedDiff.h"

#include "clang/Tooling/Tooling.h"

#include <fstream>
#include <gtest/gtest.h>

using namespace tierwise;

namespace {

// Indexes Code (a file named Name) with Args; the file's path in the
// index is Name.
SourceIndex index(const std::string &Code, const std::string &Name,
                  std::vector<std::string> Args) {
  SourceIndex Index;
  auto Factory = makeIndexActionFactory(Index);
  Args.push_back("-fsyntax-only");
  EXPECT_TRUE(clang::tooling::runToolOnCodeWithArgs(Factory->create(), Code,
                                                    Args, Name));
  return Index;
}

Site site(unsigned I, const std::string &Tier,
          std::vector<std::pair<std::string, unsigned>> Frames) {
  Site S;
  S.Index = I;
  S.Stack = "m+0x" + std::to_string(I + 1);
  S.Tier = Tier;
  S.FromStack = true;
  for (auto &[File, Line] : Frames) {
    Frame F;
    F.File = File;
    F.Line = Line;
    S.Frames.push_back(F);
  }
  return S;
}

std::string applyEdits(const std::string &Code, const Outcome &R) {
  clang::tooling::Replacements Reps;
  for (const auto &E : R.Edits)
    EXPECT_FALSE(static_cast<bool>(Reps.add(E)));
  auto New = clang::tooling::applyAllReplacements(Code, Reps);
  EXPECT_TRUE(static_cast<bool>(New));
  return New ? *New : "";
}

} // namespace

TEST(Placement, ParsesLocations) {
  auto F = parseLocation("ns::f(int) /src/a.c:12:7");
  ASSERT_TRUE(F);
  EXPECT_EQ(F->File, "/src/a.c");
  EXPECT_EQ(F->Line, 12u);
  EXPECT_EQ(F->Column, 7u);
  EXPECT_FALSE(parseLocation("no-line-here"));
  auto Via = parseLocationFrames(
      "Compute<V>(Graph<V>&, Options) /src/pagerank.cc:45 (via array.h:18)");
  ASSERT_EQ(Via.size(), 2u);
  EXPECT_EQ(Via[0].File, "array.h");
  EXPECT_EQ(Via[0].Line, 18u);
  EXPECT_EQ(Via[0].Function, "");
  EXPECT_EQ(Via[1].File, "/src/pagerank.cc");
  EXPECT_EQ(Via[1].Line, 45u);
  EXPECT_EQ(parseLocationFrames("main a.c:3").size(), 1u);
  // the outer frame that tells alike sites apart is not one of its frames
  auto Outer = parseLocationFrames(
      "kernel(unsigned long) /src/k.cc:38 (via c.h:15) <- k.cc:24:35");
  ASSERT_EQ(Outer.size(), 2u);
  EXPECT_EQ(Outer[0].File, "c.h");
  EXPECT_EQ(Outer[1].File, "/src/k.cc");
  EXPECT_EQ(Outer[1].Line, 38u);
  EXPECT_EQ(parseLocationFrames("main /src/k.cc:49 <- k.cc:51 #2").size(), 1u);
}

TEST(Placement, BaseFunctionNames) {
  EXPECT_EQ(baseFunctionName("ns::Graph<int>::build(int) const"), "build");
  EXPECT_EQ(baseFunctionName("main._omp_fn.0"), "main");
  EXPECT_EQ(baseFunctionName("??"), "");
  EXPECT_EQ(*tierEnumName("pmem"), "TW_TIER_PMEM");
  EXPECT_EQ(*tierTagName("hbw"), "tw::hbw");
  EXPECT_EQ(*tierEnumName("numa:1"), "TW_TIER_NUMA(1)");
  EXPECT_EQ(*tierTagName("numa:2"), "tw::tier_tag{TW_TIER_NUMA(2)}");
  EXPECT_FALSE(tierEnumName("numa:16"));
  EXPECT_FALSE(tierEnumName("numa:x"));
}

// The shared tier-name vectors (test/runtime/Inputs/tier-vectors.txt): the
// rewriter takes exactly the names the runtime and the advisor take.
TEST(Placement, TierNamesMatchSharedVectors) {
  std::ifstream In(TW_TIER_VECTORS);
  ASSERT_TRUE(In) << TW_TIER_VECTORS;
  std::string Line;
  int N = 0;
  while (std::getline(In, Line)) {
    size_t Tab = Line.rfind('\t');
    if (Line.empty() || Line[0] == '#' || Tab == std::string::npos)
      continue;
    std::string Name = Line.substr(0, Tab), Want = Line.substr(Tab + 1);
    EXPECT_EQ(tierEnumName(Name) ? "ok" : "error", Want) << '"' << Name << '"';
    N++;
  }
  EXPECT_GT(N, 20);
}

TEST(IncludeInsertion, AfterFeatureMacrosInNameOrder) {
  std::string Code = "// c\n#define _GNU_SOURCE\n#include <stdio.h>\n"
                     "#include <unistd.h>\nint x;\n";
  auto R = tierwiseInclude("a.c", Code);
  ASSERT_TRUE(R);
  EXPECT_EQ(Code.substr(0, R->getOffset()),
            "// c\n#define _GNU_SOURCE\n#include <stdio.h>\n");
  EXPECT_EQ(R->getReplacementText(), "#include <tierwise.h>\n");
}

TEST(IncludeInsertion, HeaderGuardAndAlreadyIncluded) {
  std::string Guarded = "#ifndef A_H\n#define A_H\nint f(void);\n#endif\n";
  auto R = tierwiseInclude("a.h", Guarded);
  ASSERT_TRUE(R);
  EXPECT_EQ(R->getOffset(), std::string("#ifndef A_H\n#define A_H\n").size());
  EXPECT_FALSE(tierwiseInclude("b.c", "#include <tierwise.h>\nint x;\n"));
}

TEST(UnifiedDiff, Hunk) {
  std::string D = unifiedDiff("x.c", "a\nb\nc\n", "a\nB\nc\n");
  EXPECT_NE(D.find("--- a/x.c\n+++ b/x.c\n"), std::string::npos);
  EXPECT_NE(D.find("@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n"), std::string::npos);
  EXPECT_EQ(unifiedDiff("x.c", "same\n", "same\n"), "");
}

TEST(SourceIndex, MacroUseExpansionAndWrappers) {
  std::string Code = "#include <stdlib.h>\n"
                     "#define NEW_ARRAY(T, n) (T *)malloc((n) * sizeof(T))\n"
                     "static void *wrap(size_t n) { return calloc(1, n); }\n"
                     "int main(void) {\n"
                     "  double *a = NEW_ARRAY(double, 8);\n"
                     "  void *b = wrap(3);\n"
                     "  free(a), free(b);\n"
                     "  return 0;\n"
                     "}\n";
  SourceIndex I = index(Code, "/u/m.c", {"-std=c11"});
  const AllocExpr *Use = nullptr, *InWrap = nullptr;
  for (const AllocExpr &A : I.Allocs)
    (A.Line == 5 ? Use : InWrap) = &A;
  ASSERT_TRUE(Use && InWrap);
  EXPECT_EQ(Use->Macro, "NEW_ARRAY");
  ASSERT_EQ(Use->UseEdits.size(), 1u);
  EXPECT_EQ(Use->UseEdits[0].Text,
            "/* NEW_ARRAY */ (double *)tw_malloc@HEAD@(@ENUM@, @DRAM@(8) * "
            "sizeof(double))");
  ASSERT_EQ(I.Wrappers.count(InWrap->FunctionKey), 1u);
  const WrapperFact &W = I.Wrappers.at(InWrap->FunctionKey);
  EXPECT_EQ(W.Name, "wrap");
  EXPECT_EQ(W.Line, 3u);
  EXPECT_EQ(W.ParamNames, std::vector<std::string>{"n"});
  EXPECT_TRUE(W.Problem.empty());
  unsigned Calls = 0;
  for (const CallSiteFact &C : I.CallSites)
    Calls += C.CalleeKey == W.Key && C.Line == 6 && C.WrittenArgs == 1;
  EXPECT_EQ(Calls, 1u);
}

TEST(Resolver, PerUseMacroAndCxxWrapper) {
  std::string Code =
      "#include <cstdlib>\n"
      "#define NEW_ARRAY(T, n) (T *)std::malloc((n) * sizeof(T))\n"
      "template <class T> struct Array {\n"
      "  explicit Array(unsigned long n) : p(new T[n]) {}\n"
      "  T *p;\n"
      "};\n"
      "int main() {\n"
      "  int *a = NEW_ARRAY(int, 4);\n"  // 8: pmem
      "  int *b = NEW_ARRAY(int, 4);\n"  // 9: dram
      "  Array<int> x(4);\n"             // 10: pmem
      "  Array<long> y(4);\n"            // 11: dram
      "  return a != b && x.p && y.p;\n"
      "}\n";
  SourceIndex I = index(Code, "/u/r.cpp", {"-std=c++11"});
  Placement P;
  P.Sites = {site(0, "pmem", {{"r.cpp", 8}}), site(1, "dram", {{"r.cpp", 9}}),
             site(2, "pmem", {{"r.cpp", 4}, {"r.cpp", 10}}),
             site(3, "dram", {{"r.cpp", 4}, {"r.cpp", 11}})};
  Outcome R = resolve(P, I);
  EXPECT_EQ(R.Placed, 2u);
  EXPECT_EQ(R.Rewritten, 2u) << (R.Problems.empty() ? "" : R.Problems[0]);
  std::string New = applyEdits(Code, R);
  EXPECT_NE(New.find("int *a = /* NEW_ARRAY */ (int *)tw_malloc(TW_TIER_PMEM, (4) * sizeof(int))"),
            std::string::npos)
      << New;
  EXPECT_NE(New.find("int *b = NEW_ARRAY(int, 4);"), std::string::npos);
  EXPECT_NE(New.find("explicit Array(unsigned long n, tw_tier tier = "
                     "TW_TIER_DRAM) : p(new (tw::tier_tag{tier}) T[n])"),
            std::string::npos)
      << New;
  EXPECT_NE(New.find("Array<int> x(4, TW_TIER_PMEM);"), std::string::npos);
  EXPECT_NE(New.find("Array<long> y(4);"), std::string::npos);
}
