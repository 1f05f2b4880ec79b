// SPDX-License-Identifier: MIT
// Include placement for rewritten files; see IncludeInsertion.h.
#include "IncludeInsertion.h"

#include "clang/Tooling/Inclusions/HeaderIncludes.h"
#include "clang/Tooling/Inclusions/IncludeStyle.h"

using llvm::StringRef;

namespace tierwise {

// HeaderIncludes only inserts into an include block that nothing but
// comments and a header guard precede; a file that opens with feature-test
// macros (`#define _GNU_SOURCE`) before its includes would get the new line
// above them. So the leading comment and #define/#undef lines are set
// aside: their end, when any #define or #undef is among them, else 0.
static unsigned definePrologue(StringRef Code) {
  unsigned Offset = 0, End = 0;
  bool InComment = false;
  while (Offset < Code.size()) {
    size_t NL = Code.find('\n', Offset);
    unsigned Next = NL == StringRef::npos ? Code.size() : NL + 1;
    StringRef Line = Code.slice(Offset, Next).trim();
    Offset = Next;
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
    if (!Line.consume_front("#"))
      break;
    Line = Line.ltrim();
    if (!Line.starts_with("define") && !Line.starts_with("undef"))
      break;
    while (Line.ends_with("\\") && Offset < Code.size()) { // continuation
      NL = Code.find('\n', Offset);
      Next = NL == StringRef::npos ? Code.size() : NL + 1;
      Line = Code.slice(Offset, Next).trim();
      Offset = Next;
    }
    End = Offset;
  }
  return End;
}

std::optional<clang::tooling::Replacement>
tierwiseInclude(StringRef File, StringRef Code) {
  unsigned Skip = definePrologue(Code);
  // No include categories: one block, the new line in name order in it.
  clang::tooling::IncludeStyle Style;
  clang::tooling::HeaderIncludes Includes(File, Code.drop_front(Skip), Style);
  auto R = Includes.insert("tierwise.h", /*IsAngled=*/true,
                           clang::tooling::IncludeDirective::Include);
  if (!R)
    return std::nullopt;
  return clang::tooling::Replacement(File, R->getOffset() + Skip,
                                     R->getLength(), R->getReplacementText());
}

} // namespace tierwise
