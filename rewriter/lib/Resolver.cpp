// SPDX-License-Identifier: MIT
// Site resolution; see Resolver.h.
#include "Resolver.h"

#include "llvm/Demangle/Demangle.h"
#include "llvm/Support/Path.h"

#include <algorithm>
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
  bool Configurations = false; ///< Cands: one expression, several builds
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

std::string cLibraryCallsOnLine(const SourceIndex &Index,
                                const std::string &File, unsigned Line) {
  std::string Out;
  for (const CallFact &C : Index.Calls)
    if (C.File == File && C.Line == Line && C.CLibrary)
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
  if (L.File.empty())
    for (const Frame &F : S.Frames)
      for (const auto &[File, Error] : Index.ParseErrors)
        if (!F.File.empty() &&
            (File == F.File ||
             llvm::StringRef(File).ends_with("/" + F.File))) {
          L.Problem = base(File) + " did not parse (" + Error + ")";
          return L;
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
  // Any function spanning the line may be the frame's: a lambda in a
  // constructor is both (its frame may name either, inlined or not).
  bool Named = !Fn || Want.empty();
  for (const FunctionFact &G : Index.Functions)
    Named = Named || (G.File == L.File && G.Begin <= L.Line &&
                      L.Line <= G.End && G.Name == Want);
  if (!Named) {
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
    else if (Calls == "mmap" || Calls == "mmap64")
      L.Problem = "the allocation is the anonymous " + Calls + " at " + Where +
                  ": tierwise.h has no mmap form; apply this site with "
                  "`tierwise run` (LD_PRELOAD)";
    else if (std::string Lib = cLibraryCallsOnLine(Index, L.File, L.Line);
             !Lib.empty())
      L.Problem = "libc's own allocation, inside " + Lib + " at " + Where +
                  ": a site never has the C library's frames (by design), "
                  "and there is nothing to rewrite";
    else if (S.FromStack)
      // The whole stack, inline frames included, and its innermost frame
      // calls no allocator: the frames inside the call are of a module a
      // site never has (libc's; a tail call into libc leaves no frame of
      // the function that made it).
      L.Problem = "libc's own allocation, reached through a call made at " +
                  Where + " (" + Calls +
                  "): a site never has the C library's frames (by design), "
                  "and there is nothing to rewrite";
    else
      L.Problem = "no allocation call at " + Where +
                  "; it allocates inside a call made here (" + Calls +
                  "): the placement lacks the frames inside that call";
    return L;
  }
  // One expression that compiles to different allocations in different
  // configurations of the file (a macro defined per -D): all of them.
  auto SameRange = [](const AllocExpr *A, const AllocExpr *B) {
    return A->Line == B->Line && A->Col == B->Col &&
           A->EndLine == B->EndLine && A->EndCol == B->EndCol;
  };
  bool OneRange = L.Cands.size() > 1;
  for (const AllocExpr *A : L.Cands)
    OneRange = OneRange && SameRange(A, L.Cands.front());
  if (OneRange) {
    std::set<std::pair<std::string, unsigned>> Edits;
    for (const AllocExpr *A : L.Cands)
      Edits.insert({A->EditFile, A->EditOffset});
    L.Configurations = Edits.size() == L.Cands.size();
  }
  if (L.Configurations)
    return L;
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
    if (L.Problem.empty() && L.Cands.size() > 1 && !L.Configurations)
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

// The tier spelled for an edit inside a wrapper that takes it as a
// parameter (Var), or as a constant; Head: the DRAM head's expression (a
// constant, or a tw_place parameter's dram_bytes), empty: none.
struct TierSpelling {
  std::string Enum, Tag, Head;
};
TierSpelling constantTier(const std::string &Tier, int64_t Head) {
  return {*tierEnumName(Tier), *tierTagName(Tier),
          Head ? std::to_string(Head) : ""};
}

std::string fillWith(std::string Text, const TierSpelling &T) {
  auto Put = [&](const std::string &Hole, const std::string &Value) {
    for (size_t P; (P = Text.find(Hole)) != std::string::npos;)
      Text.replace(P, Hole.size(), Value);
  };
  bool Head = !T.Head.empty();
  Put("@ENUM@", T.Enum);
  Put("@TAG@", Head ? "tw::head_tag{" + T.Enum + ", " + T.Head + "}" : T.Tag);
  Put("@HEAD@", Head ? "_head" : "");
  Put("@DRAM@", Head ? T.Head + ", " : "");
  return Text;
}

using Member = std::pair<Located *, const AllocExpr *>;

// The edits that place one allocation: in its macro's use when the macro's
// uses disagree (PerUse), else where it is spelled.
const std::vector<EditTemplate> &editsOf(const AllocExpr &A, bool PerUse) {
  return PerUse && !A.Macro.empty() ? A.UseEdits : A.Edits;
}

// Why a group's allocation cannot be placed in Tier with Head as it is.
std::string cannotPlace(const AllocExpr &A, const std::string &Tier,
                        int64_t Head) {
  if (!A.Problem.empty())
    return "cannot rewrite " + A.Callee + " at " + A.where() + ": " +
           A.Problem;
  if (!tierEnumName(Tier))
    return "tier '" + Tier + "' has no constant in tierwise.h";
  if (Head && !A.HeadProblem.empty())
    return "placed partly in DRAM (dram_bytes " + std::to_string(Head) +
           "): " + A.HeadProblem + " (at " + A.where() +
           "); apply this site with `tierwise run` (LD_PRELOAD)";
  return "";
}

class Emitter {
public:
  Emitter(Outcome &Out) : Out(Out) {}
  void add(const std::string &File, unsigned Offset, unsigned Length,
           const std::string &Text) {
    if (!Seen.insert({File, Offset, Length, Text}).second)
      return;
    // Two different edits of one range: the first is kept, and both are
    // named (nothing here knows why they differ: a site's expression that
    // is another allocation in another configuration, say).
    for (const clang::tooling::Replacement &R : Out.Edits)
      if (R.getFilePath() == File &&
          (R.getOffset() == Offset ||
           (R.getOffset() < Offset + Length &&
            Offset < R.getOffset() + R.getLength()))) {
        Out.Notes.push_back("two different edits of " + base(File) +
                            " at offset " + std::to_string(Offset) +
                            ": kept \"" + R.getReplacementText().str() +
                            "\", dropped \"" + Text + "\"");
        return;
      }
    Out.Edits.emplace_back(File, Offset, Length, Text);
  }

private:
  Outcome &Out;
  std::set<std::tuple<std::string, unsigned, unsigned, std::string>> Seen;
};

// Applies edits given as absolute offsets to Text, which starts at Base.
std::string applyAt(std::string Text, unsigned Base,
                    std::vector<std::pair<unsigned, std::pair<unsigned,
                                                              std::string>>>
                        Edits) {
  std::sort(Edits.begin(), Edits.end(),
            [](const auto &A, const auto &B) { return A.first > B.first; });
  for (const auto &[Off, E] : Edits)
    Text.replace(Off - Base, E.first, E.second);
  return Text;
}

// A placed call path through a function being refactored: the site and the
// index of that function's frame in its frames.
using PathMember = std::pair<const Located *, size_t>;

// The site's call of W: its frame Idx + 1; null and Why when there is none
// that can pass a tier.
const CallSiteFact *callAt(const Site &S, size_t Idx, const WrapperFact &W,
                           const SourceIndex &Index, std::string &Why) {
  if (Idx + 1 >= S.Frames.size()) {
    Why = "the placement does not name its caller";
    return nullptr;
  }
  const Frame &F = S.Frames[Idx + 1];
  std::vector<std::string> Files = Index.resolveFile(F.File);
  std::vector<const CallSiteFact *> Calls;
  if (Files.size() == 1)
    for (const CallSiteFact &C : Index.CallSites)
      if (C.File == Files[0] && C.Line == F.Line && C.CalleeKey == W.Key)
        Calls.push_back(&C);
  if (Calls.size() > 1 && F.Column) {
    std::vector<const CallSiteFact *> At;
    for (const CallSiteFact *C : Calls)
      if (C->Col <= F.Column && F.Column < C->EndCol)
        At.push_back(C);
    Calls = At;
  }
  std::string Where = base(F.File) + ":" + std::to_string(F.Line);
  if (Files.size() != 1)
    Why = "it is called from " + F.str() + ", not in the given files";
  else if (Calls.empty())
    Why = "no call of it at " + Where +
          " (is it called through a macro or a pointer?)";
  else if (Calls.size() > 1)
    Why = std::to_string(Calls.size()) + " calls of it on " + Where +
          " and the placement gives no column";
  else if (!Calls[0]->Problem.empty())
    Why = "its call at " + Where + ": " + Calls[0]->Problem;
  else if (W.CPlusPlus && Calls[0]->WrittenArgs < W.NumParams)
    Why = "its call at " + Where + " leaves default arguments out";
  else
    return Calls[0];
  return nullptr;
}

// The edits that make call C of W pass Arg as its tier (C: W_tier(Arg, ...)).
std::vector<EditTemplate> passTier(const WrapperFact &W, const CallSiteFact &C,
                                   const std::string &Arg) {
  if (W.CPlusPlus)
    return {{C.File, C.ArgsEnd, 0, (C.WrittenArgs ? ", " : "") + Arg}};
  return {{C.File, C.NameOffset + C.NameLength, 0, "_tier"},
          {C.File, C.ArgsBegin, 0, Arg + (C.WrittenArgs ? ", " : "")}};
}

// Uses of a macro's allocation (the edit at Key) that no member reaches.
bool unreachedUses(const SourceIndex &Index,
                   const std::pair<std::string, unsigned> &Key,
                   const std::vector<Member> &Members) {
  std::set<std::tuple<std::string, unsigned, unsigned>> Uses, Reached;
  for (const AllocExpr &A : Index.Allocs)
    if (A.EditFile == Key.first && A.EditOffset == Key.second)
      Uses.insert({A.File, A.Line, A.Col});
  for (auto &[L, A] : Members)
    Reached.insert({A->File, A->Line, A->Col});
  return Uses.size() > Reached.size();
}

// The call of function Key at a site's frame Idx + 1, or null (no frame,
// no such call, or several and no column).
const CallSiteFact *callAtKey(const Site &S, size_t Idx, const std::string &Key,
                              const SourceIndex &Index) {
  if (Idx + 1 >= S.Frames.size())
    return nullptr;
  const Frame &F = S.Frames[Idx + 1];
  std::vector<std::string> Files = Index.resolveFile(F.File);
  if (Files.size() != 1)
    return nullptr;
  const CallSiteFact *Found = nullptr;
  for (const CallSiteFact &C : Index.CallSites)
    if (C.File == Files[0] && C.Line == F.Line && C.CalleeKey == Key &&
        (!F.Column || (C.Col <= F.Column && F.Column < C.EndCol))) {
      if (Found)
        return nullptr;
      Found = &C;
    }
  return Found;
}

// Whether a call path into function Key that no member takes exists: a call
// of it no member reaches, or one in a function with such a call, up the
// members' frames (Idx: Key's frame in each). Where a member's frames stop
// or its call is not found, that branch counts as reached (as before).
bool unreachedPaths(const SourceIndex &Index, const std::string &Key,
                    const std::vector<PathMember> &Ms, unsigned Depth) {
  std::map<const CallSiteFact *, std::vector<PathMember>> By;
  for (auto &[L, I] : Ms) {
    const CallSiteFact *C = callAtKey(*L->S, I, Key, Index);
    if (!C)
      return false;
    By[C].push_back({L, I + 1});
  }
  size_t Calls = 0;
  for (const CallSiteFact &C : Index.CallSites)
    Calls += C.CalleeKey == Key;
  if (Calls > By.size())
    return true;
  if (Depth >= 8)
    return false;
  for (auto &[C, CMs] : By)
    if (!C->FunctionKey.empty() && C->FunctionKey != Key &&
        unreachedPaths(Index, C->FunctionKey, CMs, Depth + 1))
      return true;
  return false;
}

// Calls of the function holding an allocation that no member reaches,
// directly or through its callers (a function whose only call is in a
// function a verifier also calls).
bool unreachedCalls(const SourceIndex &Index, const std::string &Key,
                    const std::vector<Member> &Members) {
  std::vector<PathMember> Ms;
  for (auto &[L, A] : Members)
    Ms.push_back({L, L->FrameIdx});
  return unreachedPaths(Index, Key, Ms, 0);
}

// An allocation in a lambda: calls of the function the lambda is written in
// that no member reaches (a function template's other instantiations share
// the lambda's one spelling), from each member's frame of that function: the
// first after the lambda's, past any library code that calls the lambda.
// A member without that frame counts as reached, as in unreachedPaths.
bool unreachedAround(const SourceIndex &Index, const AllocExpr &A,
                     const std::vector<Member> &Members) {
  auto W = Index.Wrappers.find(A.OuterFunctionKey);
  if (!A.FunctionKey.empty() || W == Index.Wrappers.end())
    return false;
  std::vector<PathMember> Ms;
  for (auto &[L, A2] : Members) {
    const std::vector<Frame> &Fs = L->S->Frames;
    size_t J = L->FrameIdx + 1;
    for (; J < Fs.size(); ++J) {
      std::vector<std::string> Files = Index.resolveFile(Fs[J].File);
      if (Files.size() == 1 && Files[0] == W->second.File &&
          baseFunctionName(llvm::demangle(Fs[J].Function)) == W->second.Name)
        break;
    }
    if (J == Fs.size())
      return false;
    Ms.push_back({L, J});
  }
  return unreachedPaths(Index, A.OuterFunctionKey, Ms, 0);
}

// Why a lambda's allocation cannot take one tier for all its uses.
std::string lambdaShared(const SourceIndex &Index, const AllocExpr &A) {
  const WrapperFact &W = Index.Wrappers.at(A.OuterFunctionKey);
  return "site needs a wrapper change: " + W.QualifiedName + " (" +
         base(W.File) + ":" + std::to_string(W.Line) +
         "): the allocation at " + A.where() +
         " is in a lambda there, shared by calls of it the placement does "
         "not name (other instantiations), and a lambda takes no tier "
         "parameter";
}


// Wrapper refactoring. A function whose allocation serves sites of
// different tiers (or callers no placed site reaches) gains a parameter
// (C++: trailing, defaulted to the placement's default tier on its first
// declaration; C: a NAME_tier variant taking it first, which the original
// calls with the default), and each placed call of it passes the tier of
// the sites through that call; unless the function that call is in has
// callers the sites do not reach (or reach with different tiers): then that
// function gains the parameter too and passes it on, up the sites' frames,
// so a call path the placement does not name keeps the default (a
// delegating constructor called by both a placed and an unplaced path).
//
// Everything is planned before anything is emitted, one level (function)
// at a time, callees before callers, so a function that both allocates for
// some sites and passes a tier on to callees for others (a builder that
// allocates a headed array and calls helpers) gets ONE parameter: a
// tw_place when an allocation on its paths takes its DRAM head from it
// (its own, or a callee's it passes the parameter on to), else a tw_tier;
// a callee taking a tw_tier is passed the tw_place's `.tier`. A call
// serving several sites passes one value: they must agree on the tier, and
// on the head where an allocation takes it from the parameter.
class Refactoring {
public:
  Refactoring(const Placement &P, const SourceIndex &Index, Emitter &Emit,
              Outcome &Out, std::map<const Site *, std::string> &Failed)
      : P(P), Index(Index), Emit(Emit), Out(Out), Failed(Failed) {}

  // W's allocations serve Members (PerUse: the allocation is a macro use
  // inside it).
  void addWrapper(const WrapperFact &W, const std::vector<Member> &Members,
                  bool PerUse) {
    auto FailAll = [&](const std::string &Why) {
      for (auto &[L, A] : Members)
        Failed.emplace(L->S, "site needs a wrapper change: " + who(W) + ": " +
                                 Why);
    };
    // Sites with DRAM heads: the allocation takes its head form with the
    // parameter's dram_bytes (0 on the other paths).
    int64_t MaxHead = 0;
    for (auto &[L, A] : Members)
      MaxHead = std::max(MaxHead, headOf(*L->S));
    std::set<const AllocExpr *> Allocs;
    for (auto &[L, A] : Members) {
      Allocs.insert(A);
      if (std::string Why = cannotPlace(*A, L->S->Tier, MaxHead);
          !Why.empty()) {
        if (L->S->Tier != P.DefaultTier)
          return FailAll(Why);
      } else if (PerUse && !A->Macro.empty() && !A->UseProblem.empty()) {
        return FailAll("macro " + A->Macro + ": " + A->UseProblem);
      }
    }
    Level &V = Levels[W.Key];
    V.W = &W;
    V.OwnHead = MaxHead > 0;
    for (const AllocExpr *A : Allocs)
      for (const EditTemplate &E : editsOf(*A, PerUse))
        V.Alloc.push_back(E);
    for (auto &[L, A] : Members)
      V.Ms.push_back({L, L->FrameIdx, V.OwnHead});
  }

  void run() {
    // Callees before callers: the functions up each site's frames.
    std::map<std::string, std::set<std::string>> Callers;
    std::map<std::string, unsigned> Pending;
    for (auto &[K, V] : Levels)
      for (const Path &M : V.Ms) {
        std::string Key = K;
        for (size_t I = M.I; I < M.I + 8; ++I) {
          const CallSiteFact *C = callAtKey(*M.L->S, I, Key, Index);
          if (!C || C->FunctionKey.empty() || C->FunctionKey == Key ||
              !Index.Wrappers.count(C->FunctionKey))
            break;
          if (Callers[Key].insert(C->FunctionKey).second)
            ++Pending[C->FunctionKey];
          Key = C->FunctionKey;
        }
      }
    std::vector<std::string> Order;
    std::vector<std::string> Ready;
    for (auto &[K, V] : Levels)
      if (!Pending[K])
        Ready.push_back(K);
    std::set<std::string> Seen;
    while (!Ready.empty()) {
      std::string K = Ready.back();
      Ready.pop_back();
      if (!Seen.insert(K).second)
        continue;
      Order.push_back(K);
      for (const std::string &G : Callers[K])
        if (--Pending[G] == 0)
          Ready.push_back(G);
    }
    // Decide in that order; a level the order missed (recursion, a frame
    // the chain could not follow) after it.
    for (bool Again = true; Again;) {
      Again = false;
      for (const std::string &K : Order)
        if (Levels.count(K) && !Levels[K].Decided)
          decide(K), Again = true;
      for (auto &[K, V] : Levels)
        if (!V.Decided) {
          decide(K);
          Again = true;
          break;
        }
    }
    // A level gets its parameter when a call passes it a constant, or its
    // caller's parameter that the caller gets.
    for (bool Changed = true; Changed;) {
      Changed = false;
      for (auto &[K, V] : Levels) {
        bool Active = !V.Failed && !V.Constant.empty();
        for (auto &[C, G] : V.Passing)
          Active = Active || (!V.Failed && Levels[G].Active);
        if (Active != V.Active)
          V.Active = Active, Changed = true;
      }
    }
    // Callers first, as the notes read best.
    for (auto It = Decided.rbegin(); It != Decided.rend(); ++It)
      if (Levels[*It].Active)
        emit(Levels[*It]);
  }

private:
  // A placed call path through a level: the site, the level's frame in its
  // frames, and whether its allocation takes its DRAM head from the
  // parameter.
  struct Path {
    const Located *L;
    size_t I;
    bool Cares;
  };
  struct Level {
    const WrapperFact *W = nullptr;
    std::vector<Path> Ms;
    std::vector<EditTemplate> Alloc; ///< its own allocations' edits (holes)
    bool OwnHead = false; ///< they take their DRAM head from the parameter
    /// Calls in its body of these functions, which pass its parameter on.
    std::vector<std::pair<const CallSiteFact *, std::string>> PassOn;
    unsigned Depth = 0;
    bool Decided = false, Failed = false, Active = false;
    bool Place = false; ///< the parameter is a tw_place
    std::string Type, Var;
    /// Calls of it passing a constant (the argument, and for the note).
    std::vector<std::tuple<const CallSiteFact *, std::string, std::string>>
        Constant;
    /// Calls of it in function G passing G's parameter.
    std::vector<std::pair<const CallSiteFact *, std::string>> Passing;
    /// Calls beyond library code that set the tier scope (scopeThrough).
    std::vector<std::pair<const ScopeCallFact *, std::string>> Scopes;
  };

  const Placement &P;
  const SourceIndex &Index;
  Emitter &Emit;
  Outcome &Out;
  std::map<const Site *, std::string> &Failed;
  std::map<std::string, Level> Levels;
  std::vector<std::string> Decided; ///< the order decide() ran in

  static std::string who(const WrapperFact &W) {
    return W.QualifiedName + " (" + base(W.File) + ":" +
           std::to_string(W.Line) + ")";
  }

  void failPlaced(Level &V, const std::vector<Path> &Xs,
                  const std::string &Why) {
    for (const Path &M : Xs)
      if (M.L->S->Tier != P.DefaultTier)
        Failed.emplace(M.L->S,
                       "site needs a wrapper change: " + who(*V.W) + ": " + Why);
  }

  void decide(const std::string &K) {
    Level &V = Levels[K];
    V.Decided = true;
    Decided.push_back(K);
    const WrapperFact &W = *V.W;
    if (W.File.empty() || !W.Problem.empty()) {
      V.Failed = true;
      return failPlaced(V, V.Ms,
                        W.File.empty()
                            ? "its definition is not in the given files"
                            : "it cannot take a tier parameter: " + W.Problem);
    }
    V.Place = V.OwnHead;
    for (auto &[C, H] : V.PassOn)
      V.Place = V.Place || Levels[H].Place;
    V.Type = V.Place ? "tw_place" : "tw_tier";
    V.Var = V.Place ? "place" : "tier";
    for (const std::string &N : W.ParamNames)
      if (N == V.Var)
        V.Var = V.Type + "_arg";

    std::map<const CallSiteFact *, std::vector<Path>> ByCall;
    for (const Path &M : V.Ms) {
      std::string Why;
      if (const CallSiteFact *C = callAt(*M.L->S, M.I, W, Index, Why))
        ByCall[C].push_back(M);
      else
        failPlaced(V, {M}, Why);
    }
    for (auto &[C, CMs] : ByCall) {
      // One value passes here: the sites' tier, and the head of those whose
      // allocation takes it from the parameter.
      std::set<std::string> Tiers;
      std::set<int64_t> Heads;
      for (const Path &M : CMs) {
        Tiers.insert(M.L->S->Tier);
        if (M.Cares)
          Heads.insert(headOf(*M.L->S));
      }
      int64_t Head = Heads.empty() ? 0 : *Heads.rbegin();
      if (Tiers.size() == 1 && *Tiers.begin() == P.DefaultTier && !Head)
        continue;
      bool Conflict = Tiers.size() > 1 || Heads.size() > 1;
      std::string Where = base(C->File) + ":" + std::to_string(C->Line);
      const std::string &G = C->FunctionKey;
      auto GW = Index.Wrappers.find(G);
      bool Propagate = false;
      if (!G.empty() && G != K && V.Depth < 8 && GW != Index.Wrappers.end() &&
          !(Levels.count(G) && Levels[G].Decided)) {
        std::set<const CallSiteFact *> Reached;
        bool Known = true;
        for (const Path &M : CMs) {
          std::string Ignored;
          const CallSiteFact *GC =
              callAt(*M.L->S, M.I + 1, GW->second, Index, Ignored);
          Known = Known && GC;
          Reached.insert(GC);
        }
        size_t Calls = 0;
        for (const CallSiteFact &X : Index.CallSites)
          Calls += X.CalleeKey == G;
        Propagate = Known && (Conflict || Calls > Reached.size());
      }
      if (Propagate) {
        Level &U = Levels[G];
        U.W = &GW->second;
        U.Depth = std::max(U.Depth, V.Depth + 1);
        for (const Path &M : CMs)
          U.Ms.push_back({M.L, M.I + 1, M.Cares});
        U.PassOn.push_back({C, K});
        V.Passing.push_back({C, G});
        continue;
      }
      std::string NoScope;
      if (Conflict && scopeThrough(V, C, CMs, Where, NoScope))
        continue;
      if (Conflict) {
        failPlaced(V, CMs,
                   "it is called at " + Where + " by sites of different " +
                       (Tiers.size() > 1 ? "tiers" : "DRAM heads") +
                       " (change the function that call is in as well)" +
                       (NoScope.empty() ? "" : "; no tier scope: " + NoScope));
        continue;
      }
      const std::string &Tier = *Tiers.begin();
      std::string E = *tierEnumName(Tier);
      V.Constant.emplace_back(
          C, V.Place ? "TW_PLACE(" + E + ", " + std::to_string(Head) + ")" : E,
          Where + " (" + Tier +
              (Head ? " with dram_bytes " + std::to_string(Head) : "") + ")");
    }
  }

  // The sites through call C of V (in function G) cannot pass their tiers
  // to G by parameter: they reach G through library code (frames in no
  // given file: a std::vector's allocator_traits calling a pool's
  // allocator), or G cannot take one (a replaced operator new, called by
  // new-expressions). Then C passes the
  // thread's tier scope, tw::scope_tier(<default>), and each placed site's
  // first call in a given file beyond the library frames (the vector's
  // construction, or the new-expression) makes a tw::tier_scope temporary
  // in its first argument, or around the new-expression, which lasts for
  // that call: `cold((tw::tier_scope(TW_TIER_PMEM), n))`.
  // A call that sites of different tiers share, or that is in a function
  // with callers no site there takes (a helper that builds every array),
  // would scope them all: those sites' scopes go one call further out.
  // False, and why, where that cannot be done.
  bool scopeThrough(Level &V, const CallSiteFact *C,
                    const std::vector<Path> &CMs, const std::string &Where,
                    std::string &Why) {
    if (!V.W->CPlusPlus)
      return Why = "tierwise.h's tier scope is C++", false;
    if (V.Place)
      return Why = "a DRAM head does not pass through a tier scope", false;
    // Per site: its frames in given files beyond the library ones, outward,
    // and which of them its scope is at (K).
    struct Walk {
      const Located *L;
      std::vector<size_t> Js;
      size_t K = 0;
      const ScopeCallFact *X = nullptr;
    };
    std::vector<Walk> Ws;
    for (const Path &M : CMs) {
      const Site &S = *M.L->S;
      auto InGiven = [&](size_t K) {
        return Index.resolveFile(S.Frames[K].File).size() == 1;
      };
      size_t J = M.I + 2; // the frame above the function C is in
      Walk W{M.L, {}};
      for (; J < S.Frames.size(); ++J)
        if (InGiven(J))
          W.Js.push_back(J);
      if (W.Js.empty())
        return Why = "the call paths of " + S.name() +
                     " do not come back to the given files",
               false;
      Ws.push_back(std::move(W));
    }
    auto ScopeAt = [&](const Walk &W) -> const ScopeCallFact * {
      const Frame &F = W.L->S->Frames[W.Js[W.K]];
      std::string File = Index.resolveFile(F.File)[0];
      std::string At = base(File) + ":" + std::to_string(F.Line);
      std::vector<const ScopeCallFact *> Cands;
      for (const ScopeCallFact &X : Index.ScopeCalls)
        if (X.File == File && X.Line == F.Line)
          Cands.push_back(&X);
      const ScopeCallFact *Best = Cands.size() == 1 ? Cands[0] : nullptr;
      if (F.Column)
        for (const ScopeCallFact *X : Cands)
          if (X->Col <= F.Column && F.Column < X->EndCol &&
              (!Best || X->EndCol - X->Col < Best->EndCol - Best->Col))
            Best = X;
      if (Best && !Best->CPlusPlus)
        return Why = At + " is C, and tierwise.h's tier scope is C++",
               nullptr;
      if (!Best)
        Why = (Cands.empty() ? "no call with an argument at " + At
                             : std::to_string(Cands.size()) + " calls at " +
                                   At + " and no column to pick one") +
              " to give the scope of " + W.L->S->name();
      return Best;
    };
    for (unsigned Round = 0; Round < 8; ++Round) {
      std::map<const ScopeCallFact *, std::vector<Walk *>> At;
      for (Walk &W : Ws) {
        if (!(W.X = ScopeAt(W)))
          return false;
        At[W.X].push_back(&W);
      }
      bool Moved = false;
      for (auto &[X, Group] : At) {
        std::set<std::string> Ts;
        std::vector<PathMember> Ms;
        for (Walk *W : Group) {
          Ts.insert(W->L->S->Tier);
          Ms.push_back({W->L, W->Js[W->K]});
        }
        if (Ts.size() == 1 && *Ts.begin() == P.DefaultTier)
          continue;
        if (Ts.size() == 1 && (X->FunctionKey.empty() ||
                               !unreachedPaths(Index, X->FunctionKey, Ms, 0)))
          continue;
        for (Walk *W : Group) {
          if (W->K + 1 >= W->Js.size())
            return Why = "the call at " + base(X->File) + ":" +
                         std::to_string(X->Line) + " is shared by " +
                         (Ts.size() > 1 ? "sites of different tiers"
                                        : "call paths no placed site takes") +
                         ", and no call further out sets a scope for " +
                         W->L->S->name() + " alone",
                   false;
          ++W->K;
        }
        Moved = true;
      }
      if (!Moved)
        break;
      if (Round == 7)
        return Why = "no call separates the sites' scopes", false;
    }
    std::string Default = *tierEnumName(P.DefaultTier);
    V.Constant.emplace_back(C, "tw::scope_tier(" + Default + ")",
                            Where + " (the tier scope of its callers)");
    for (const Walk &W : Ws)
      if (W.L->S->Tier != P.DefaultTier &&
          std::find(V.Scopes.begin(), V.Scopes.end(),
                    std::make_pair(W.X, W.L->S->Tier)) == V.Scopes.end())
        V.Scopes.push_back({W.X, W.L->S->Tier});
    return true;
  }

  // The argument level V passes on to callee H: its parameter, or the
  // tw_place's tier for a callee that takes a tw_tier.
  static std::string passedOn(const Level &V, const Level &H) {
    return V.Place && !H.Place ? V.Var + ".tier" : V.Var;
  }

  void emit(Level &V) {
    const WrapperFact &W = *V.W;
    std::string Default = *tierEnumName(P.DefaultTier);
    if (V.Place)
      Default = "TW_PLACE(" + Default + ", 0)";
    // Its own allocations: the head form when they take the head from it.
    TierSpelling Own =
        V.OwnHead  ? TierSpelling{V.Var + ".tier", "", V.Var + ".dram_bytes"}
        : V.Place ? TierSpelling{V.Var + ".tier",
                                 "tw::tier_tag{" + V.Var + ".tier}", ""}
                  : TierSpelling{V.Var, "tw::tier_tag{" + V.Var + "}", ""};
    std::vector<EditTemplate> Inner;
    for (EditTemplate E : V.Alloc) {
      E.Text = fillWith(E.Text, Own);
      Inner.push_back(E);
    }
    for (auto &[C, H] : V.PassOn)
      if (Levels[H].Active)
        for (const EditTemplate &E :
             passTier(*Levels[H].W, *C, passedOn(V, Levels[H])))
          Inner.push_back(E);

    if (W.CPlusPlus) {
      for (const WrapperFact::Decl &D : W.Decls) {
        std::string Text = std::string(W.NumParams ? ", " : "") + V.Type +
                           " " + V.Var + (D.First ? " = " + Default : "");
        if (D.VoidList)
          Emit.add(D.File, D.ParamsBegin, D.ParamsEnd - D.ParamsBegin, Text);
        else
          Emit.add(D.File, D.ParamsEnd, 0, Text);
      }
      for (const EditTemplate &E : Inner)
        Emit.add(E.File, E.Offset, E.Length, E.Text);
    } else {
      // NAME_tier: a copy of the definition taking the parameter first, with
      // the edits in its body; the original forwards with the default.
      using Edit = std::pair<unsigned, std::pair<unsigned, std::string>>;
      auto Signature = [&](const WrapperFact::Decl &D,
                           std::vector<Edit> &Edits) {
        Edits.push_back({D.NameOffset + (unsigned)W.Name.size(), {0, "_tier"}});
        if (D.VoidList || !W.NumParams)
          Edits.push_back({D.ParamsBegin,
                           {D.ParamsEnd - D.ParamsBegin, V.Type + " " + V.Var}});
        else
          Edits.push_back({D.ParamsBegin, {0, V.Type + " " + V.Var + ", "}});
      };
      std::vector<Edit> Edits;
      const WrapperFact::Decl *Def = nullptr;
      for (const WrapperFact::Decl &D : W.Decls)
        if (D.Definition && D.File == W.File)
          Def = &D;
      if (!Def || W.DefText.empty() || !W.BodyBegin)
        return failPlaced(V, V.Ms, "cannot find its definition's text");
      Signature(*Def, Edits);
      for (const EditTemplate &E : Inner) {
        if (E.File != W.File || E.Offset < W.DefBegin || E.Offset > W.DefEnd)
          return failPlaced(V, V.Ms, "its allocation is spelled outside it");
        Edits.push_back({E.Offset, {E.Length, E.Text}});
      }
      std::string Variant = applyAt(W.DefText, W.DefBegin, Edits);
      std::string Args = Default;
      for (const std::string &N : W.ParamNames)
        Args += ", " + N;
      // A static original whose only callers now call its _tier variant
      // would be an unused function (-Werror=unused-function).
      std::string Head = W.DefText.substr(0, W.BodyBegin - W.DefBegin);
      bool Static = llvm::StringRef(Head)
                        .take_front(W.NameOffset - W.DefBegin)
                        .contains("static");
      std::string Forward = (Static ? "__attribute__((unused)) " : "") + Head +
                            "{\n  " + (W.VoidReturn ? "" : "return ") + W.Name +
                            "_tier(" + Args + ");\n}";
      Emit.add(W.File, W.DefBegin, W.DefEnd - W.DefBegin,
               Variant + "\n\n" + Forward);
      for (const WrapperFact::Decl &D : W.Decls)
        if (!D.Definition && !D.Text.empty()) {
          std::vector<Edit> DE;
          Signature(D, DE);
          Emit.add(D.File, D.Begin, 0, applyAt(D.Text, D.Begin, DE) + ";\n");
        }
    }
    std::string List;
    for (auto &[C, Arg, Note] : V.Constant) {
      for (const EditTemplate &E : passTier(W, *C, Arg))
        Emit.add(E.File, E.Offset, E.Length, E.Text);
      List += (List.empty() ? "" : ", ") + Note;
    }
    for (auto &[X, Tier] : V.Scopes) {
      std::string E = *tierEnumName(Tier);
      Emit.add(X->File, X->ArgBegin, 0, "(tw::tier_scope(" + E + "), ");
      Emit.add(X->File, X->ArgEnd, 0, ")");
      List += (List.empty() ? "" : ", ") + base(X->File) + ":" +
              std::to_string(X->Line) + " (" + Tier +
              ", a tw::tier_scope for the call)";
    }
    for (auto &[C, G] : V.Passing)
      if (Levels[G].Active)
        List += (List.empty() ? "" : ", ") + base(C->File) + ":" +
                std::to_string(C->Line) + " (its caller's " +
                (Levels[G].Place ? "tw_place" : "tier") + " parameter)";
    std::string Uses = !V.Alloc.empty() && !V.PassOn.empty()
                           ? "that its allocation uses and it passes on"
                       : V.Alloc.empty() ? "that it passes on"
                                         : "that its allocation uses";
    Out.Notes.push_back(
        "wrapper " + who(W) +
        (W.CPlusPlus ? " gains a parameter `" + V.Type + " " + V.Var + " = " +
                           Default + "`"
                     : " forwards to a new " + W.Name + "_tier(" + V.Type +
                           " " + V.Var + ", ...) with " + Default) +
        " " + Uses + "; callers passing a tier: " + List);
  }
};

// GCC's debug info may give a function inlined into itself (an outlined
// part of it inlined back: `allocate` at its allocation, inlined into
// `allocate` at its opening line): one frame of that function, not a call.
// Collapsed where the outer frame's line calls nothing of that name.
Placement collapseSelfInlined(const Placement &P, const SourceIndex &Index) {
  Placement Q = P;
  for (Site &S : Q.Sites)
    for (size_t I = 0; I + 1 < S.Frames.size();) {
      const Frame &In = S.Frames[I], &Out = S.Frames[I + 1];
      bool Same = In.Inlined && In.Function == Out.Function &&
                  In.File == Out.File && In.Function != "??";
      std::vector<std::string> Files =
          Same ? Index.resolveFile(Out.File) : std::vector<std::string>{};
      std::string Name = baseFunctionName(llvm::demangle(Out.Function));
      for (const CallFact &C : Index.Calls)
        Same = Same && !(Files.size() == 1 && C.File == Files[0] &&
                         C.Line == Out.Line &&
                         baseFunctionName(C.Callee) == Name);
      if (Same)
        S.Frames.erase(S.Frames.begin() + I + 1);
      else
        ++I;
    }
  return Q;
}

} // namespace

Outcome resolve(const Placement &Original, const SourceIndex &Index) {
  Placement P = collapseSelfInlined(Original, Index);
  Outcome Out;
  Emitter Emit(Out);
  std::vector<Located> All;
  for (const Site &S : P.Sites)
    All.push_back(locate(S, Index));
  disambiguate(All, P.DefaultTier);

  // Group by where the edit goes: a wrapper's or macro's one expression is
  // shared by every site that allocates through it.
  std::map<std::pair<std::string, unsigned>, std::vector<Member>> Groups;
  std::map<const Site *, std::string> Failed;
  for (Located &L : All) {
    if (!L.Problem.empty()) {
      Failed[L.S] = L.Problem;
      continue;
    }
    for (const AllocExpr *A : L.Cands)
      Groups[{A->EditFile, A->EditOffset}].push_back({&L, A});
  }
  // Wrappers to refactor: function key -> the sites through its allocations
  // (PerUse: the allocation is a macro use inside it).
  std::map<std::string, std::pair<std::vector<Member>, bool>> Wrappers;
  auto Placed = [&](const std::vector<Member> &Ms, const std::string &Tier,
                    int64_t Head, bool PerUse) {
    for (auto &[L, A] : Ms)
      for (const EditTemplate &E : editsOf(*A, PerUse))
        Emit.add(E.File, E.Offset, E.Length,
                 fillWith(E.Text, constantTier(Tier, Head)));
  };
  auto Mixed = [&](std::vector<Member> &Ms, bool PerUse) {
    const AllocExpr &A = *Ms.front().second;
    if (A.FunctionKey.empty()) {
      for (auto &[L, A2] : Ms)
        Failed.emplace(L->S, sharedBy(*A2, *L, Index));
      return;
    }
    auto &Wr = Wrappers[A.FunctionKey];
    Wr.first.insert(Wr.first.end(), Ms.begin(), Ms.end());
    Wr.second = Wr.second || PerUse;
  };
  // One use of a macro, its sites agreeing on the tier and head of S: the
  // use is one spelling whatever number of template instantiations or
  // inlined copies share it, so it gets one edit. Expanded with S's tier
  // where it is written, unless the function it is in has calls that no
  // site of it reaches (a template body whose other instantiations the
  // placement leaves in the default tier): a constant there would move them
  // too, so the function takes the tier as a parameter that only the placed
  // calls pass (Refactoring; a use that cannot be expanded is reported
  // there). True when expanded with the constant.
  auto PlaceUse = [&](const AllocExpr &A, std::vector<Member> &Ms,
                      const Site &S, const std::string &Context) {
    if (!A.FunctionKey.empty() && unreachedCalls(Index, A.FunctionKey, Ms)) {
      Mixed(Ms, true);
      return false;
    }
    std::string Why = unreachedAround(Index, A, Ms) ? lambdaShared(Index, A)
                                                    : cannotPlace(A, S.Tier,
                                                                  headOf(S));
    if (Why.empty() && !A.UseProblem.empty())
      Why = "site needs a macro change: " + A.Macro + " used at " +
            base(A.File) + ":" + std::to_string(A.Line) + " (" + Context +
            ", and this use cannot be expanded: " + A.UseProblem + ")";
    if (!Why.empty()) {
      for (auto &[L, A2] : Ms)
        Failed.emplace(L->S, Why);
      return false;
    }
    Placed(Ms, S.Tier, headOf(S), true);
    return true;
  };
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
    std::map<const AllocExpr *, std::vector<Member>> Uses;
    for (Member &M : Members)
      Uses[M.second].push_back(M);
    if (Placements.size() > 1 && !A0.Macro.empty()) {
      // Per-use macro rewriting: each use whose sites agree is expanded.
      for (auto &[A, Ms] : Uses) {
        std::set<std::string> UsePl;
        for (auto &[L, A2] : Ms)
          UsePl.insert(placementOf(*L->S));
        if (UsePl.size() > 1) {
          Mixed(Ms, true);
          continue;
        }
        const Site &S = *Ms.front().first->S;
        if (S.Tier != P.DefaultTier &&
            PlaceUse(*A, Ms, S, "its uses need different tiers"))
          Out.Notes.push_back("expanded " + A->Macro + " at " + base(A->File) +
                              ":" + std::to_string(A->Line) +
                              " (its uses need different tiers): " +
                              placementOf(S));
      }
      continue;
    }
    if (Placements.size() > 1) {
      Mixed(Members, false);
      continue;
    }
    const Site &S0 = *Members.front().first->S;
    const std::string &Tier = S0.Tier;
    int64_t Head = headOf(S0);
    if (Tier == P.DefaultTier)
      continue;
    // One tier for every site, but uses of the macro, or calls of the
    // function a use is in, that no site reaches would follow them into it
    // (the #define rewritten), where `tierwise run` leaves them in the
    // default tier: each use placed on its own instead (PlaceUse).
    bool Unreached = false, Lambda = false;
    for (auto &[A, Ms] : Uses) {
      Unreached = Unreached || (!A->FunctionKey.empty() &&
                                unreachedCalls(Index, A->FunctionKey, Ms));
      Lambda = Lambda || unreachedAround(Index, *A, Ms);
    }
    if (!A0.Macro.empty() &&
        (Unreached || Lambda || unreachedUses(Index, Key, Members))) {
      std::string Context = "the macro's other uses stay in " + P.DefaultTier;
      bool Expanded = false;
      for (auto &[A, Ms] : Uses)
        Expanded = PlaceUse(*A, Ms, S0, Context) || Expanded;
      if (Expanded)
        Out.Notes.push_back("expanded the placed uses of " + A0.Macro +
                            " (the macro's other uses stay in " +
                            P.DefaultTier + "): " + *Placements.begin());
      continue;
    } else if (A0.Macro.empty() && !A0.FunctionKey.empty() &&
               unreachedCalls(Index, A0.FunctionKey, Members)) {
      Mixed(Members, false);
      continue;
    } else if (A0.Macro.empty() && Lambda) {
      for (const Site *S : Sites)
        Failed.emplace(S, lambdaShared(Index, A0));
      continue;
    }
    if (std::string Why = cannotPlace(A0, Tier, Head); !Why.empty()) {
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
    Placed(Members, Tier, Head, false);
  }
  Refactoring Refactor(P, Index, Emit, Out, Failed);
  for (auto &[Key, Wr] : Wrappers) {
    auto It = Index.Wrappers.find(Key);
    if (It == Index.Wrappers.end()) {
      for (auto &[L, A] : Wr.first)
        Failed.emplace(L->S, sharedBy(*A, *L, Index));
      continue;
    }
    Refactor.addWrapper(It->second, Wr.first, Wr.second);
  }
  Refactor.run();
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
