// SPDX-License-Identifier: MIT
// Line diff by Myers' O(ND) greedy algorithm (E. Myers, "An O(ND)
// Difference Algorithm and Its Variations", Algorithmica 1986), printed as
// unified diff hunks.
#include "UnifiedDiff.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/Path.h"

#include <vector>

using llvm::StringRef;

namespace tierwise {
namespace {

std::vector<StringRef> splitLines(StringRef Text) {
  std::vector<StringRef> Lines;
  while (!Text.empty()) {
    size_t NL = Text.find('\n');
    Lines.push_back(Text.substr(0, NL == StringRef::npos ? NL : NL + 1));
    Text = NL == StringRef::npos ? StringRef() : Text.substr(NL + 1);
  }
  return Lines;
}

// One edit script entry: ' ' keep, '-' old line, '+' new line.
struct Op {
  char Kind;
  size_t Old, New; // line indices (0-based) in the old and new text
};

std::vector<Op> myers(const std::vector<StringRef> &A,
                      const std::vector<StringRef> &B) {
  const long N = A.size(), M = B.size(), Max = N + M, Off = Max + 1;
  std::vector<long> V(2 * Max + 3, 0);
  std::vector<std::vector<long>> Trace;
  long D = 0;
  for (; D <= Max; ++D) {
    Trace.push_back(V);
    bool Done = false;
    for (long K = -D; K <= D && !Done; K += 2) {
      long X = (K == -D || (K != D && V[Off + K - 1] < V[Off + K + 1]))
                   ? V[Off + K + 1]
                   : V[Off + K - 1] + 1;
      long Y = X - K;
      while (X < N && Y < M && A[X] == B[Y])
        ++X, ++Y;
      V[Off + K] = X;
      Done = X >= N && Y >= M;
    }
    if (Done)
      break;
  }
  // Walk the trace back from (N, M).
  std::vector<Op> Ops;
  long X = N, Y = M;
  for (; D > 0; --D) {
    const std::vector<long> &P = Trace[D];
    long K = X - Y;
    long PK = (K == -D || (K != D && P[Off + K - 1] < P[Off + K + 1])) ? K + 1
                                                                       : K - 1;
    long PX = P[Off + PK], PY = PX - PK;
    while (X > PX && Y > PY)
      --X, --Y, Ops.push_back({' ', size_t(X), size_t(Y)});
    if (X == PX)
      --Y, Ops.push_back({'+', size_t(X), size_t(Y)});
    else
      --X, Ops.push_back({'-', size_t(X), size_t(Y)});
  }
  while (X > 0 && Y > 0)
    --X, --Y, Ops.push_back({' ', size_t(X), size_t(Y)});
  return {Ops.rbegin(), Ops.rend()};
}

void putLine(std::string &Out, char Kind, StringRef Line) {
  Out += Kind;
  Out += Line.str();
  if (!Line.ends_with("\n"))
    Out += "\n\\ No newline at end of file\n";
}

} // namespace

std::string unifiedDiff(StringRef Label, StringRef Old, StringRef New) {
  if (Old == New)
    return "";
  std::vector<StringRef> A = splitLines(Old), B = splitLines(New);
  std::vector<Op> Ops = myers(A, B);
  const size_t Context = 3;
  bool Abs = llvm::sys::path::is_absolute(Label);
  std::string Out = (Abs ? "--- " : "--- a/") + Label.str() + "\n" +
                    (Abs ? "+++ " : "+++ b/") + Label.str() + "\n";
  size_t I = 0;
  while (I < Ops.size()) {
    if (Ops[I].Kind == ' ') {
      ++I;
      continue;
    }
    // A hunk: from Context lines before this change to Context lines after
    // the last change that is at most 2*Context lines further on.
    size_t Begin = I >= Context ? I - Context : 0, End = I;
    for (size_t J = I; J < Ops.size(); ++J) {
      if (Ops[J].Kind != ' ')
        End = J;
      else if (J - End > 2 * Context)
        break;
    }
    End = std::min(Ops.size(), End + 1 + Context);
    size_t OldCount = 0, NewCount = 0;
    std::string Body;
    for (size_t J = Begin; J < End; ++J) {
      const Op &O = Ops[J];
      if (O.Kind != '+')
        ++OldCount;
      if (O.Kind != '-')
        ++NewCount;
      putLine(Body, O.Kind, O.Kind == '+' ? B[O.New] : A[O.Old]);
    }
    size_t OldStart = Ops[Begin].Old + (OldCount ? 1 : 0);
    size_t NewStart = Ops[Begin].New + (NewCount ? 1 : 0);
    Out += "@@ -" + std::to_string(OldStart) + "," + std::to_string(OldCount) +
           " +" + std::to_string(NewStart) + "," + std::to_string(NewCount) +
           " @@\n" + Body;
    I = End;
  }
  return Out;
}

} // namespace tierwise
