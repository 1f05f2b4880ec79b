// SPDX-License-Identifier: MIT
// Site resolution; see Resolver.h.
#include "Resolver.h"

#include "llvm/Demangle/Demangle.h"
#include "llvm/Support/Path.h"

#include <map>
#include <set>

namespace tierwise {
namespace {

std::string base(const std::string &Path) {
  return llvm::sys::path::filename(Path).str();
}

// A site's position in the source: the frame used and the candidates.
struct Located {
  const Site *S = nullptr;
  size_t FrameIdx = 0;
  std::string File;
  unsigned Line = 0;
  std::vector<const AllocExpr *> Cands;
  std::string Problem;
};

bool placeable(const Site &S) { return S.Stack.empty() || S.Stack[0] != '['; }

// The DRAM head a site asks for (placement dram_bytes, which the runtime
// reads only with a tier other than dram), 0: none.
int64_t headOf(const Site &S) {
  return S.Tier != "dram" && S.DramBytes > 0 ? S.DramBytes : 0;
}

// What sites that share an expression must agree on: "pmem", or "pmem with
// dram_bytes N".
std::string placementOf(const Site &S) {
  int64_t Head = headOf(S);
  return S.Tier + (Head ? " with dram_bytes " + std::to_string(Head) : "");
}

std::string callsOnLine(const SourceIndex &Index, const std::string &File,
                        unsigned Line) {
  std::string Out;
  for (const CallFact &C : Index.Calls)
    if (C.File == File && C.Line == Line)
      Out += (Out.empty() ? "" : ", ") + C.Callee;
  return Out;
}

bool containsColumn(const AllocExpr &A, unsigned Col) {
  return (A.SpellCol && A.SpellCol <= Col && Col < A.SpellEndCol) ||
         (A.Line == A.EndLine && A.Col <= Col && Col < A.EndCol);
}

unsigned width(const AllocExpr &A) {
  return A.SpellCol ? A.SpellEndCol - A.SpellCol
                    : (A.Line == A.EndLine ? A.EndCol - A.Col : ~0u);
}

Located locate(const Site &S, const SourceIndex &Index) {
  Located L;
  L.S = &S;
  if (!placeable(S)) {
    L.Problem = "pseudo-site " + S.Stack + " is not an allocation";
    return L;
  }
  if (S.Frames.empty()) {
    L.Problem = "no 'location' or 'frames': symbolize the placement "
                "(`tierwise rewrite` does) or add them";
    return L;
  }
  for (size_t I = 0; I < S.Frames.size() && L.File.empty(); ++I) {
    const Frame &F = S.Frames[I];
    if (F.File.empty() || F.Line == 0)
      continue;
    std::vector<std::string> Files = Index.resolveFile(F.File);
    if (Files.size() > 1) {
      L.Problem = "frame file " + F.File + " matches several files (" +
                  Files[0] + ", " + Files[1] + ")";
      return L;
    }
    if (Files.size() == 1) {
      L.FrameIdx = I;
      L.File = Files[0];
      L.Line = F.Line;
    }
  }
  if (L.File.empty()) {
    L.Problem = "not in the given files (innermost frame " +
                S.Frames.front().str() + ")";
    return L;
  }
  const Frame &F = S.Frames[L.FrameIdx];
  std::string Where = base(L.File) + ":" + std::to_string(L.Line);
  std::string Want = baseFunctionName(llvm::demangle(F.Function));
  const FunctionFact *Fn = Index.functionAt(L.File, L.Line);
  if (Fn && !Want.empty() && Fn->Name != Want) {
    L.Problem = "stale placement: " + Where + " is in " + Fn->QualifiedName +
                ", the placement says " + F.Function +
                " (source changed since profiling?)";
    return L;
  }
  if (L.FrameIdx > 0) {
    // The call of the allocator is in the frames before this one: library
    // code (std::vector, libgomp) or a file that was not given.
    const Frame &F0 = S.Frames.front();
    std::string Inner =
        F0.File.empty() ? S.Stack.substr(0, S.Stack.find(';')) : F0.str();
    L.Problem = "the allocation is in " + Inner +
                ", outside the given files (reached from " + Where +
                "): give that file, or change the library's allocator";
    return L;
  }
  std::vector<const AllocExpr *> Covering;
  for (const AllocExpr &A : Index.Allocs)
    if (A.File == L.File && A.Line <= L.Line && L.Line <= A.EndLine)
      (A.Line == L.Line ? L.Cands : Covering).push_back(&A);
  if (L.Cands.empty())
    L.Cands = Covering;
  if (L.Cands.empty()) {
    std::string Calls = callsOnLine(Index, L.File, L.Line);
    if (Calls.empty())
      L.Problem = "stale placement: nothing allocates at " + Where +
                  " (source changed since profiling?)";
    else
      L.Problem = "no allocation call at " + Where +
                  "; it allocates inside a call made here (" + Calls +
                  "): the placement lacks the frames inside that call";
    return L;
  }
  if (L.Cands.size() > 1 && F.Column) {
    const AllocExpr *Best = nullptr;
    for (const AllocExpr *A : L.Cands)
      if (containsColumn(*A, F.Column) && (!Best || width(*A) < width(*Best)))
        Best = A;
    if (!Best)
      L.Problem = "stale placement: column " + std::to_string(F.Column) +
                  " of " + Where + " is on none of its " +
                  std::to_string(L.Cands.size()) + " allocations";
    else
      L.Cands = {Best};
  }
  return L;
}

// Several calls on one line and no column: fine when the sites on that line
// are as many distinct call instructions as there are calls, all one tier
// (and one DRAM head).
void disambiguate(std::vector<Located> &All, const std::string &Default) {
  std::map<std::pair<std::string, unsigned>, std::vector<Located *>> Lines;
  for (Located &L : All)
    if (L.Problem.empty() && L.Cands.size() > 1)
      Lines[{L.File, L.Line}].push_back(&L);
  for (auto &[Key, Ls] : Lines) {
    std::set<std::string> Calls, Tiers;
    for (Located *L : Ls) {
      Calls.insert(L->S->Stack.substr(0, L->S->Stack.find(';')));
      Tiers.insert(placementOf(*L->S));
    }
    size_t N = Ls.front()->Cands.size();
    if (Calls.size() == N && Tiers.size() == 1)
      continue;
    std::string List;
    for (const AllocExpr *A : Ls.front()->Cands)
      List += (List.empty() ? "" : ", ") + A->Callee + " at column " +
              std::to_string(A->Col);
    for (Located *L : Ls)
      L->Problem = "ambiguous: " + std::to_string(N) + " allocations on " +
                   base(Key.first) + ":" + std::to_string(Key.second) + " (" +
                   List + ") and the placement gives no column";
  }
  (void)Default;
}

// An edit's text for \p Tier and DRAM head \p Head (SourceIndex.h holes).
std::string fill(std::string Text, const std::string &Tier, int64_t Head) {
  auto Put = [&](const std::string &Hole, const std::string &Value) {
    for (size_t P; (P = Text.find(Hole)) != std::string::npos;)
      Text.replace(P, Hole.size(), Value);
  };
  Put("@ENUM@", *tierEnumName(Tier));
  Put("@TAG@", *tierTagName(Tier));
  Put("@HEAD@", Head ? "_head" : "");
  Put("@DRAM@", Head ? std::to_string(Head) + ", " : "");
  return Text;
}

std::string sharedBy(const AllocExpr &A, const Located &L,
                     const SourceIndex &Index) {
  if (!A.Macro.empty())
    return "site needs a macro change: " + A.Macro + " used at " +
           base(A.File) + ":" + std::to_string(A.Line);
  const Frame &F = L.S->Frames[L.FrameIdx];
  const FunctionFact *Fn = Index.functionAt(L.File, L.Line);
  std::string Wrapper = F.Function.empty() || F.Function == "??"
                            ? (Fn ? Fn->QualifiedName : "?")
                            : F.Function;
  std::string Caller =
      "callers the placement does not name (its sites disagree on the tier "
      "or dram_bytes)";
  if (L.FrameIdx + 1 < L.S->Frames.size()) {
    const Frame &C = L.S->Frames[L.FrameIdx + 1];
    Caller = base(C.File) + ":" + std::to_string(C.Line);
  }
  return "site needs a wrapper change: " + Wrapper + " called from " + Caller;
}

} // namespace

Outcome resolve(const Placement &P, const SourceIndex &Index) {
  Outcome Out;
  std::vector<Located> All;
  for (const Site &S : P.Sites)
    All.push_back(locate(S, Index));
  disambiguate(All, P.DefaultTier);

  // Group by where the edit goes: a wrapper's or macro's one expression is
  // shared by every site that allocates through it.
  std::map<std::pair<std::string, unsigned>,
           std::vector<std::pair<Located *, const AllocExpr *>>>
      Groups;
  std::map<const Site *, std::string> Failed;
  for (Located &L : All) {
    if (!L.Problem.empty()) {
      Failed[L.S] = L.Problem;
      continue;
    }
    for (const AllocExpr *A : L.Cands)
      Groups[{A->EditFile, A->EditOffset}].push_back({&L, A});
  }
  std::set<std::tuple<std::string, unsigned, unsigned, std::string>> Seen;
  for (auto &[Key, Members] : Groups) {
    std::set<std::string> Placements;
    std::set<const Site *> Sites, Sharing;
    for (auto &[L, A] : Members) {
      Placements.insert(placementOf(*L->S));
      Sites.insert(L->S);
      if (L->Cands.size() == 1)
        Sharing.insert(L->S);
    }
    const AllocExpr &A0 = *Members.front().second;
    if (Placements.size() > 1) {
      for (auto &[L, A] : Members)
        Failed.emplace(L->S, sharedBy(*A, *L, Index));
      continue;
    }
    const std::string &Tier = Members.front().first->S->Tier;
    int64_t Head = headOf(*Members.front().first->S);
    if (Tier == P.DefaultTier)
      continue;
    std::string Why;
    if (!A0.Problem.empty())
      Why = "cannot rewrite " + A0.Callee + " at " + A0.where() + ": " +
            A0.Problem;
    else if (!tierEnumName(Tier))
      Why = "tier '" + Tier + "' has no constant in tierwise.h";
    else if (Head && !A0.HeadProblem.empty())
      Why = "placed partly in DRAM (dram_bytes " + std::to_string(Head) +
            "): " + A0.HeadProblem + " (at " + A0.where() +
            "); apply this site with `tierwise run` (LD_PRELOAD)";
    if (!Why.empty()) {
      for (const Site *S : Sites)
        Failed.emplace(S, Why);
      continue;
    }
    if (Sharing.size() > 1)
      Out.Notes.push_back("rewriting " + A0.Callee + " at " +
                          base(A0.EditFile) + ":" +
                          std::to_string(A0.EditLine) +
                          (A0.Macro.empty() ? "" : " in macro " + A0.Macro) +
                          ": shared by " + std::to_string(Sharing.size()) +
                          " sites, all " + *Placements.begin());
    for (auto &[L, A] : Members)
      for (const EditTemplate &E : A->Edits) {
        std::string Text = fill(E.Text, Tier, Head);
        if (Seen.insert({E.File, E.Offset, E.Length, Text}).second)
          Out.Edits.emplace_back(E.File, E.Offset, E.Length, Text);
      }
  }
  if (P.DefaultTier != "dram")
    Out.Notes.push_back("default_tier is '" + P.DefaultTier +
                        "': allocations the placement does not list stay in "
                        "DRAM in the rewritten program");
  for (const Located &L : All) {
    if (L.S->Tier == P.DefaultTier)
      continue;
    ++Out.Placed;
    auto It = Failed.find(L.S);
    if (It == Failed.end())
      ++Out.Rewritten;
    else
      Out.Problems.push_back(L.S->name() + ": " + It->second);
  }
  return Out;
}

} // namespace tierwise
