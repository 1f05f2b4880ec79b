// SPDX-License-Identifier: MIT
// Include placement for rewritten files; see IncludeInsertion.h.
#include "IncludeInsertion.h"

#include "llvm/Support/Regex.h"

using llvm::StringRef;

namespace tierwise {

std::optional<unsigned> tierwiseIncludeOffset(StringRef Code) {
  static const llvm::Regex Already(
      "^[ \t]*#[ \t]*include[ \t]*[<\"]tierwise\\.h[>\"]");
  unsigned Offset = 0, After = 0; // After: end of the line to insert after
  bool SeenInclude = false, InComment = false, Guard = false;
  int Depth = 0, BaseDepth = 0, Directives = 0;
  while (Offset < Code.size()) {
    size_t NL = Code.find('\n', Offset);
    unsigned End = NL == StringRef::npos ? Code.size() : NL + 1;
    StringRef Line = Code.slice(Offset, End).trim();
    unsigned LineStart = Offset;
    Offset = End;
    if (Already.match(Line))
      return std::nullopt;
    if (InComment) {
      InComment = !Line.contains("*/");
      continue;
    }
    if (Line.empty() || Line.starts_with("//"))
      continue;
    if (Line.starts_with("/*")) {
      InComment = !Line.contains("*/");
      continue;
    }
    if (!Line.starts_with("#")) {
      if (!SeenInclude && !After)
        After = LineStart; // no includes before the code: insert above it
      break;
    }
    StringRef D = Line.drop_front().ltrim();
    ++Directives;
    if (D.starts_with("if")) {
      // `#ifndef X` + `#define X` first in the file is a header guard.
      if (Directives == 1 && D.starts_with("ifndef"))
        Guard = true;
      ++Depth;
    } else if (D.starts_with("endif")) {
      --Depth;
    } else if (D.starts_with("define") && Guard && Directives == 2) {
      BaseDepth = 1;
      After = End;
    } else if (D.starts_with("pragma once")) {
      After = End;
    } else if (D.starts_with("include") && Depth == BaseDepth) {
      SeenInclude = true;
      After = End;
    }
  }
  return After;
}

} // namespace tierwise
