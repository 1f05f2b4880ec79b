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
  /// In a macro body: the use of the macro expanded with the allocation
  /// rewritten (one edit over the use; same holes), or why it cannot be.
  std::vector<EditTemplate> UseEdits;
  std::string UseProblem;
  /// WrapperFact::Key of the function whose body holds it ("" in a lambda
  /// or at file scope).
  std::string FunctionKey;
  /// In a lambda: the Key of the function the lambda is written in (a
  /// template's lambda is one spelling for all its instantiations).
  std::string OuterFunctionKey;
};

/// A user function definition that a placement may turn into a wrapper
/// with a tier parameter (Resolver.cpp, wrapper refactoring).
struct WrapperFact {
  std::string Key; ///< canonical declaration: "realpath:offset"
  std::string Name, QualifiedName;
  std::string File; ///< of the definition
  unsigned Line = 0;
  bool CPlusPlus = false, Constructor = false;
  std::string Problem; ///< why it cannot gain a tier parameter
  unsigned NumParams = 0;
  std::vector<std::string> ParamNames;
  bool VoidReturn = false;
  unsigned DefBegin = 0, DefEnd = 0; ///< the definition's text
  unsigned NameOffset = 0, NameLength = 0;
  unsigned BodyBegin = 0; ///< its '{'
  std::string DefText;    ///< [DefBegin, DefEnd) (C definitions)
  /// Every declaration in user files, the definition included: where its
  /// parameter list is (just after '(', and the ')').
  struct Decl {
    std::string File;
    unsigned Begin = 0, End = 0; ///< the declaration (before its ';')
    unsigned NameOffset = 0;
    unsigned ParamsBegin = 0, ParamsEnd = 0;
    bool First = false, Definition = false;
    bool VoidList = false; ///< the parameter list is `(void)`
    std::string Text;      ///< the declaration's text (C prototypes)
  };
  std::vector<Decl> Decls;
};

/// A call (or construction) of a user function, where a tier argument would
/// be added.
struct CallSiteFact {
  std::string File;
  unsigned Line = 0, Col = 0, EndCol = 0;
  std::string CalleeKey;       ///< WrapperFact::Key
  unsigned NameOffset = 0, NameLength = 0; ///< the callee's name (C calls)
  unsigned ArgsBegin = 0, ArgsEnd = 0; ///< after '(' / '{', and its closer
  unsigned WrittenArgs = 0;
  std::string Problem; ///< why no argument can be added here
  /// WrapperFact::Key of the function the call is in ("" in a lambda or
  /// at file scope): the next function up a placed call path.
  std::string FunctionKey;
};

/// Where a tier scope can be put for the length of a call (Resolver.cpp: a
/// pool reached through library code or a replaced operator new): around
/// the first written argument of a call or construction of any function, a
/// library's too, `v((tw::tier_scope(TW_TIER_PMEM), n))`, or around a whole
/// new-expression, `(tw::tier_scope(TW_TIER_PMEM), new T(a))`.
struct ScopeCallFact {
  std::string File;
  unsigned Line = 0, Col = 0, EndCol = 0;
  unsigned ArgBegin = 0, ArgEnd = 0; ///< the text the scope goes around
  std::string FunctionKey; ///< the function it is in (CallSiteFact's)
  bool CPlusPlus = false;  ///< tw::tier_scope is C++
};

/// A call or construction that is not an allocation (for messages).
struct CallFact {
  std::string File;
  unsigned Line = 0;
  std::string Callee;
  bool CLibrary = false; ///< a C library function (its allocations are libc's)
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
  std::map<std::string, WrapperFact> Wrappers; ///< by Key
  std::vector<CallSiteFact> CallSites;
  std::vector<ScopeCallFact> ScopeCalls;
  std::set<std::string> Files; ///< real paths of user files seen
  /// Real path -> the absolute path the compiler reached it by (through a
  /// symlink, say), first seen: what the patch names when the real path is
  /// outside the project root.
  std::map<std::string, std::string> Reached;
  /// Files that failed to parse: real path -> the first error.
  std::map<std::string, std::string> ParseErrors;

  void addAlloc(AllocExpr A);
  void addCall(CallFact C);
  void addFunction(FunctionFact F);
  void addWrapperDecl(const WrapperFact &W, const WrapperFact::Decl &D,
                      bool Definition);
  void addCallSite(CallSiteFact C);
  void addScopeCall(ScopeCallFact C);
  /// Adds every fact of \p Other (a translation unit indexed on its own).
  void merge(const SourceIndex &Other);

  /// The innermost function whose definition spans File:Line, or null.
  const FunctionFact *functionAt(const std::string &File, unsigned Line) const;
  /// Indexed files matching a frame's file: the same real path, or a path
  /// ending in "/" + Name for relative or bare names.
  std::vector<std::string> resolveFile(const std::string &Name) const;

private:
  std::map<std::string, size_t> AllocKeys;
  std::set<std::string> CallKeys, FunctionKeys, CallSiteKeys, ScopeCallKeys;
};

/// A FrontendActionFactory whose actions fill \p Index.
std::unique_ptr<clang::tooling::FrontendActionFactory>
makeIndexActionFactory(SourceIndex &Index);

} // namespace tierwise
