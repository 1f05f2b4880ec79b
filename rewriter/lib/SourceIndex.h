// SPDX-License-Identifier: MIT
// Facts the rewriter gathers from the ASTs of the given files: every
// allocation expression (with the edits that would place it), every other
// call, and every function's line range, in user (non-system) files.
// Gathering is separate from deciding (Resolver.h) so that sites can be
// resolved after all translation units are parsed.
#pragma once

#include "clang/Tooling/Tooling.h"

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

namespace tierwise {

/// One textual edit; Text may hold the placeholders @ENUM@ (TW_TIER_PMEM)
/// and @TAG@ (tw::pmem), filled in once the tier is known, and in the forms
/// that have a DRAM-head variant @HEAD@ ("_head" or nothing) and @DRAM@
/// ("N, ", the site's dram_bytes, or nothing).
struct EditTemplate {
  std::string File;
  unsigned Offset = 0, Length = 0;
  std::string Text;
};

/// An allocation expression as written in a user file.
struct AllocExpr {
  std::string File;           ///< real path of the file it expands in
  unsigned Line = 0, Col = 0; ///< expansion start (1-based)
  unsigned EndLine = 0, EndCol = 0;
  unsigned SpellCol = 0, SpellEndCol = 0; ///< same line, when not in a macro
  std::string Callee;      ///< malloc, calloc, ..., "new", "new[]"
  std::string Macro;       ///< macro whose body spells it, else ""
  std::string EditFile;    ///< where the edit goes (grouping key
  unsigned EditOffset = 0; ///<  with EditOffset)
  unsigned EditLine = 0;
  std::vector<EditTemplate> Edits;
  std::string Problem;       ///< non-empty: why it cannot be rewritten
  std::string HeadProblem;   ///< non-empty: why it has no DRAM-head form
  std::string where() const; ///< "file:line:col" (basename)
};

/// A call or construction that is not an allocation (for messages).
struct CallFact {
  std::string File;
  unsigned Line = 0;
  std::string Callee;
};

/// A function (or lambda) definition's line range.
struct FunctionFact {
  std::string File;
  unsigned Begin = 0, End = 0;
  std::string Name;          ///< unqualified, as FunctionDecl names it
  std::string QualifiedName; ///< for messages
};

class SourceIndex {
public:
  std::vector<AllocExpr> Allocs;
  std::vector<CallFact> Calls;
  std::vector<FunctionFact> Functions;
  std::set<std::string> Files; ///< real paths of user files seen

  void addAlloc(AllocExpr A);
  void addCall(CallFact C);
  void addFunction(FunctionFact F);

  /// The innermost function whose definition spans File:Line, or null.
  const FunctionFact *functionAt(const std::string &File, unsigned Line) const;
  /// Indexed files matching a frame's file: the same real path, or a path
  /// ending in "/" + Name for relative or bare names.
  std::vector<std::string> resolveFile(const std::string &Name) const;

private:
  std::map<std::string, size_t> AllocKeys;
  std::set<std::string> CallKeys, FunctionKeys;
};

/// A FrontendActionFactory whose actions fill \p Index.
std::unique_ptr<clang::tooling::FrontendActionFactory>
makeIndexActionFactory(SourceIndex &Index);

} // namespace tierwise
