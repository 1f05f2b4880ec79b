// SPDX-License-Identifier: MIT
// The AST visitor behind SourceIndex.h: finds allocation expressions in user
// files and records the token-range edits that would place them in a tier.
#include "SourceIndex.h"

#include "Placement.h"

#include "clang/AST/ASTConsumer.h"
#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/Frontend/CompilerInstance.h"
#include "clang/Frontend/FrontendAction.h"
#include "clang/Lex/Lexer.h"
#include "clang/Lex/MacroInfo.h"
#include "clang/Lex/Preprocessor.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <algorithm>

using namespace clang;

namespace tierwise {

std::string AllocExpr::where() const {
  return llvm::sys::path::filename(File).str() + ":" + std::to_string(Line) +
         ":" + std::to_string(Col);
}

void SourceIndex::addAlloc(AllocExpr A) {
  // Template instantiations and headers seen by several translation units
  // repeat the same expression; a problem found in any copy sticks.
  std::string Key = A.File + ":" + std::to_string(A.Line) + ":" +
                    std::to_string(A.Col) + "@" + A.EditFile + ":" +
                    std::to_string(A.EditOffset);
  auto [It, New] = AllocKeys.emplace(Key, Allocs.size());
  if (New) {
    Files.insert(A.File);
    Allocs.push_back(std::move(A));
  } else if (Allocs[It->second].Problem.empty()) {
    Allocs[It->second].Problem = A.Problem;
  }
}

void SourceIndex::addCall(CallFact C) {
  if (CallKeys.insert(C.File + ":" + std::to_string(C.Line) + ":" + C.Callee)
          .second)
    Calls.push_back(std::move(C));
}

void SourceIndex::addFunction(FunctionFact F) {
  Files.insert(F.File);
  if (FunctionKeys
          .insert(F.File + ":" + std::to_string(F.Begin) + "-" +
                  std::to_string(F.End) + ":" + F.Name)
          .second)
    Functions.push_back(std::move(F));
}

void SourceIndex::addWrapperDecl(const WrapperFact &W,
                                 const WrapperFact::Decl &D, bool Definition) {
  auto [It, New] = Wrappers.try_emplace(W.Key);
  WrapperFact &X = It->second;
  if (New || (Definition && X.File.empty())) {
    std::vector<WrapperFact::Decl> Decls = std::move(X.Decls);
    std::string Problem = X.Problem;
    X = W;
    X.Decls = std::move(Decls);
    if (X.Problem.empty())
      X.Problem = Problem;
    if (!Definition)
      X.File.clear();
  } else if (X.Problem.empty() && !W.Problem.empty()) {
    X.Problem = W.Problem;
  }
  for (const WrapperFact::Decl &E : X.Decls)
    if (E.File == D.File && E.ParamsBegin == D.ParamsBegin)
      return;
  X.Decls.push_back(D);
}

void SourceIndex::addCallSite(CallSiteFact C) {
  if (CallSiteKeys
          .insert(C.File + ":" + std::to_string(C.Line) + ":" +
                  std::to_string(C.Col) + "@" + C.CalleeKey)
          .second)
    CallSites.push_back(std::move(C));
}

void SourceIndex::addScopeCall(ScopeCallFact C) {
  if (ScopeCallKeys.insert(C.File + ":" + std::to_string(C.ArgBegin)).second)
    ScopeCalls.push_back(std::move(C));
}

void SourceIndex::merge(const SourceIndex &O) {
  for (const AllocExpr &A : O.Allocs)
    addAlloc(A);
  for (const CallFact &C : O.Calls)
    addCall(C);
  for (const FunctionFact &F : O.Functions)
    addFunction(F);
  for (const auto &[K, W] : O.Wrappers)
    for (const WrapperFact::Decl &D : W.Decls)
      addWrapperDecl(W, D, D.Definition);
  for (const CallSiteFact &C : O.CallSites)
    addCallSite(C);
  for (const ScopeCallFact &C : O.ScopeCalls)
    addScopeCall(C);
  Files.insert(O.Files.begin(), O.Files.end());
  Reached.insert(O.Reached.begin(), O.Reached.end());
}

const FunctionFact *SourceIndex::functionAt(const std::string &File,
                                            unsigned Line) const {
  const FunctionFact *Best = nullptr;
  for (const FunctionFact &F : Functions)
    if (F.File == File && F.Begin <= Line && Line <= F.End &&
        (!Best || F.End - F.Begin < Best->End - Best->Begin))
      Best = &F;
  return Best;
}

std::vector<std::string>
SourceIndex::resolveFile(const std::string &Name) const {
  std::vector<std::string> Out;
  llvm::SmallString<256> Real;
  if (llvm::sys::path::is_absolute(Name) &&
      !llvm::sys::fs::real_path(Name, Real) && Files.count(Real.str().str()))
    return {Real.str().str()};
  std::string Rel = Name;
  while (llvm::StringRef(Rel).starts_with("./"))
    Rel = Rel.substr(2);
  for (const std::string &F : Files)
    if (F == Rel || llvm::StringRef(F).ends_with("/" + Rel))
      Out.push_back(F);
  // A header reached through a symlink (apps/hdr -> ../include): the
  // binary's line table names it by the path the compiler took.
  for (const auto &[Real, Path] : Reached)
    if (Real != Path && Files.count(Real) &&
        (Path == Rel || llvm::StringRef(Path).ends_with("/" + Rel)) &&
        std::find(Out.begin(), Out.end(), Real) == Out.end())
      Out.push_back(Real);
  return Out;
}

static const char *const AllocFunctions[] = {"malloc",         "calloc",
                                             "realloc",        "aligned_alloc",
                                             "posix_memalign", "memalign"};

// Every allocation function of tierwise.h has a DRAM-head form
// (tw_malloc_head, ..., tw_posix_memalign_head, new (tw::head_tag{...})).

// The C library allocation function \p FD names, or "" if it is another.
static llvm::StringRef allocFunction(const FunctionDecl *FD) {
  if (!FD || !FD->getIdentifier())
    return "";
  if (!FD->isExternC() &&
      !FD->getDeclContext()->getRedeclContext()->isTranslationUnit())
    return "";
  llvm::StringRef Name = FD->getName();
  for (const char *A : AllocFunctions)
    if (Name == A)
      return Name;
  return "";
}

namespace {

class Collector : public RecursiveASTVisitor<Collector> {
public:
  Collector(ASTContext &Ctx, Preprocessor &PP, SourceIndex &Index)
      : Ctx(Ctx), SM(Ctx.getSourceManager()), LO(Ctx.getLangOpts()), PP(PP),
        Index(Index) {}

  bool shouldVisitTemplateInstantiations() const { return true; }

  // The enclosing function of each expression (null inside a lambda).
  bool TraverseDecl(Decl *D) {
    auto *FD = dyn_cast_or_null<FunctionDecl>(D);
    if (FD)
      Enclosing.push_back(FD);
    bool R = RecursiveASTVisitor::TraverseDecl(D);
    if (FD)
      Enclosing.pop_back();
    return R;
  }
  bool TraverseLambdaExpr(LambdaExpr *L) {
    Enclosing.push_back(nullptr);
    bool R = RecursiveASTVisitor::TraverseLambdaExpr(L);
    Enclosing.pop_back();
    return R;
  }

  bool VisitFunctionDecl(FunctionDecl *FD) {
    addWrapperDecl(FD);
    if (!FD->doesThisDeclarationHaveABody())
      return true;
    addFunction(FD->getSourceRange(), baseFunctionName(FD->getNameAsString()),
                FD->getQualifiedNameAsString());
    return true;
  }

  bool VisitLambdaExpr(LambdaExpr *L) {
    addFunction(L->getSourceRange(), "operator()", "lambda");
    return true;
  }

  bool VisitCXXConstructExpr(CXXConstructExpr *CE) {
    const CXXConstructorDecl *Ctor = CE->getConstructor();
    if (!Ctor)
      return true;
    addCall(CE->getBeginLoc(),
            Ctor->getParent()->getQualifiedNameAsString() + " constructor",
            false);
    SourceRange Parens = CE->getParenOrBraceRange();
    addCallSite(CE->getSourceRange(), Ctor, CE->arguments(), SourceLocation(),
                Parens.isValid() ? Lexer::getLocForEndOfToken(
                                       Parens.getBegin(), 0, SM, LO)
                                 : SourceLocation(),
                Parens.getEnd(),
                "it is constructed without parentheses to add an argument to");
    return true;
  }

  // An explicit `::operator new(n)` / `operator new[](n, std::align_val_t(a))`
  // call (a framework's pool): the same allocation with a tier tag argument
  // added, `::operator new(n, tw::pmem)`.
  bool explicitOperatorNew(CallExpr *CE, const FunctionDecl *FD) {
    if (!FD || !FD->isReplaceableGlobalAllocationFunction() ||
        isa<CXXOperatorCallExpr>(CE))
      return false;
    AllocExpr A;
    bool Array = FD->getOverloadedOperator() == OO_Array_New;
    if (!start(A, CE->getSourceRange(),
               Array ? "operator new[]" : "operator new"))
      return true;
    for (const ParmVarDecl *P : FD->parameters())
      if (P->getType().getAsString().find("nothrow_t") != std::string::npos) {
        finish(A, "operator new with std::nothrow: tierwise.h has no nothrow "
                  "tier form");
        return true;
      }
    const auto *Ref =
        dyn_cast<DeclRefExpr>(CE->getCallee()->IgnoreParenImpCasts());
    SourceLocation RParen = CE->getRParenLoc();
    if (!Ref || !RParen.isFileID() || !Ref->getLocation().isFileID() ||
        SM.isInSystemHeader(RParen)) {
      finish(A, "the call of operator new is written inside a macro");
      return true;
    }
    A.Edits.push_back({pathOf(SM.getFileID(RParen)), offset(RParen), 0,
                       ", @TAG@"});
    setEditKey(A, Ref->getLocation());
    finish(A, "");
    return true;
  }

  bool VisitCallExpr(CallExpr *CE) {
    const FunctionDecl *FD = CE->getDirectCallee();
    if (explicitOperatorNew(CE, FD))
      return true;
    llvm::StringRef Alloc = allocFunction(FD);
    if (Alloc.empty()) {
      addCall(CE->getBeginLoc(),
              FD ? FD->getQualifiedNameAsString() : "(indirect call)",
              isCLibrary(FD));
      if (FD && !isa<CXXOperatorCallExpr>(CE)) {
        // The callee's name (C calls of a wrapper are renamed) and its '(',
        // after explicit template arguments (`Components<int>(G)`).
        SourceLocation Name, LParen;
        const Expr *Callee = CE->getCallee()->IgnoreParenImpCasts();
        if (const auto *Ref = dyn_cast<DeclRefExpr>(Callee))
          Name = Ref->getLocation();
        else if (const auto *M = dyn_cast<MemberExpr>(Callee))
          Name = M->getMemberLoc();
        SourceLocation Last = Name;
        if (Name.isValid() && Callee->getEndLoc().isValid())
          Last = Callee->getEndLoc();
        if (Name.isValid())
          if (std::optional<Token> P = Lexer::findNextToken(
                  SM.getSpellingLoc(Last), SM, LO);
              P && P->is(tok::l_paren))
            LParen = P->getEndLoc();
        addCallSite(CE->getSourceRange(), FD, CE->arguments(), Name, LParen,
                    CE->getRParenLoc(), "");
      }
      return true;
    }
    AllocExpr A;
    if (!start(A, CE->getSourceRange(), Alloc.str()))
      return true;
    const auto *Ref =
        dyn_cast<DeclRefExpr>(CE->getCallee()->IgnoreParenImpCasts());
    if (!Ref) {
      finish(A, "the callee is not a plain name");
      return true;
    }
    // Replace the callee's tokens (with any std:: qualifier) and put the tier
    // first in the argument list, all where the tokens are spelled.
    SourceLocation Begin = spell(Ref->getBeginLoc(), A);
    SourceLocation End = SM.getSpellingLoc(Ref->getEndLoc());
    if (!editable(Begin, End)) {
      finish(A, "the callee's tokens are not spelled in one file");
      return true;
    }
    unsigned BeginOff = SM.getFileOffset(Begin);
    unsigned EndOff =
        SM.getFileOffset(Lexer::getLocForEndOfToken(End, 0, SM, LO));
    std::optional<Token> Paren = Lexer::findNextToken(End, SM, LO);
    if (!Paren || !Paren->is(tok::l_paren) ||
        SM.getSpellingLineNumber(Paren->getLocation()) !=
            SM.getSpellingLineNumber(End)) {
      finish(A, "cannot find the '(' of the call next to its name");
      return true;
    }
    std::string File = pathOf(SM.getFileID(Begin));
    A.Edits.push_back(
        {File, BeginOff, EndOff - BeginOff, "tw_" + A.Callee + "@HEAD@"});
    A.Edits.push_back(
        {File, SM.getFileOffset(Paren->getEndLoc()), 0, "@ENUM@, @DRAM@"});
    setEditKey(A, Begin);
    if (!A.Macro.empty())
      expandUse(Ref->getBeginLoc(), A);
    finish(A, "");
    return true;
  }

  bool VisitCXXNewExpr(CXXNewExpr *NE) {
    // A scope around the whole expression lasts through its operator new.
    SourceRange R = NE->getSourceRange();
    if (R.getBegin().isFileID() && R.getEnd().isFileID() &&
        userLoc(R.getBegin()) &&
        SM.getFileID(R.getBegin()) == SM.getFileID(R.getEnd())) {
      SourceLocation E = Lexer::getLocForEndOfToken(R.getEnd(), 0, SM, LO);
      unsigned Line = SM.getExpansionLineNumber(R.getBegin());
      Index.addScopeCall({pathOf(SM.getFileID(R.getBegin())), Line,
                          SM.getExpansionColumnNumber(R.getBegin()),
                          SM.getExpansionLineNumber(E) == Line
                              ? SM.getExpansionColumnNumber(E)
                              : ~0u,
                          offset(R.getBegin()), offset(E), enclosingKey(),
                          true});
    }
    AllocExpr A;
    if (!start(A, NE->getSourceRange(), NE->isArray() ? "new[]" : "new"))
      return true;
    std::string Problem;
    const FunctionDecl *Op = NE->getOperatorNew();
    if (NE->getNumPlacementArgs() == 1 &&
        NE->getPlacementArg(0)->getType().getAsString().find("nothrow_t") !=
            std::string::npos)
      Problem = "new (std::nothrow): tierwise.h has no nothrow tier form";
    else if (NE->getNumPlacementArgs() > 0)
      Problem = "it already passes placement arguments to operator new";
    else if (Op && !Op->isReplaceableGlobalAllocationFunction())
      Problem = "it calls a class-specific " + Op->getQualifiedNameAsString();
    else if (NE->passAlignment() && !LO.AlignedAllocation)
      Problem = "the type is over-aligned and tierwise.h's aligned tier "
                "operator new needs C++17 aligned new";
    // The `new` keyword, after an optional leading `::`.
    SourceLocation Loc = spell(NE->getBeginLoc(), A);
    Token Tok;
    if (Lexer::getRawToken(Loc, Tok, SM, LO, true) == false &&
        Tok.is(tok::coloncolon)) {
      std::optional<Token> Next = Lexer::findNextToken(Loc, SM, LO);
      if (Next)
        Tok = *Next;
    }
    if (!(Tok.is(tok::raw_identifier) && Tok.getRawIdentifier() == "new") &&
        !Tok.is(tok::kw_new)) {
      finish(A, Problem.empty() ? "cannot find the `new` keyword" : Problem);
      return true;
    }
    SourceLocation NewLoc = Tok.getLocation();
    A.Edits.push_back({pathOf(SM.getFileID(NewLoc)),
                       SM.getFileOffset(NewLoc) + Tok.getLength(), 0,
                       " (@TAG@)"});
    setEditKey(A, NewLoc);
    if (!A.Macro.empty() && Problem.empty())
      expandUse(NE->getBeginLoc(), A);
    finish(A, Problem);
    return true;
  }

private:
  ASTContext &Ctx;
  SourceManager &SM;
  const LangOptions &LO;
  Preprocessor &PP;
  SourceIndex &Index;
  std::map<FileID, std::string> Paths;
  std::vector<const FunctionDecl *> Enclosing;

  unsigned offset(SourceLocation L) { return SM.getFileOffset(L); }
  unsigned endOffset(SourceLocation L) {
    return SM.getFileOffset(Lexer::getLocForEndOfToken(L, 0, SM, LO));
  }

  // A function declared by the C library (or a compiler builtin): an
  // allocation inside it is libc's own, whose frames a site never has.
  bool isCLibrary(const FunctionDecl *FD) {
    if (!FD || !FD->getDeclContext()->getRedeclContext()->isTranslationUnit())
      return false;
    if (FD->getBuiltinID())
      return true;
    SourceLocation L = SM.getExpansionLoc(FD->getCanonicalDecl()->getLocation());
    return L.isValid() && SM.isInSystemHeader(L);
  }

  // The declaration that names a function across translation units and
  // template instantiations: the pattern's first declaration.
  const FunctionDecl *patternOf(const FunctionDecl *FD) {
    if (const FunctionDecl *P = FD->getTemplateInstantiationPattern())
      FD = P;
    return FD->getCanonicalDecl();
  }
  std::string functionKey(const FunctionDecl *FD) {
    SourceLocation L = SM.getExpansionLoc(patternOf(FD)->getLocation());
    if (!userLoc(L))
      return "";
    return pathOf(SM.getFileID(L)) + ":" + std::to_string(offset(L));
  }

  // The key of the function the visitor is in ("" in a lambda).
  std::string enclosingKey() {
    return Enclosing.empty() || !Enclosing.back() ? ""
                                                   : functionKey(Enclosing.back());
  }
  // The innermost named function around the expression, lambdas skipped.
  std::string outerKey() {
    for (auto It = Enclosing.rbegin(); It != Enclosing.rend(); ++It)
      if (*It)
        return functionKey(*It);
    return "";
  }

  // A user function's declaration: where a tier parameter would go; its
  // definition: what a `_tier` variant copies (C).
  void addWrapperDecl(FunctionDecl *FD) {
    if (FD->isTemplateInstantiation() || FD->isImplicit())
      return;
    std::string Key = functionKey(FD);
    if (Key.empty())
      return;
    bool Def = FD->doesThisDeclarationHaveABody();
    WrapperFact W;
    W.Key = Key;
    W.Name = FD->getNameAsString();
    W.Constructor = isa<CXXConstructorDecl>(FD);
    W.QualifiedName = FD->getQualifiedNameAsString();
    if (const auto *M = dyn_cast<CXXMethodDecl>(FD)) // not pvector::pvector<T>
      W.QualifiedName = M->getParent()->getQualifiedNameAsString() +
                        "::" + M->getParent()->getNameAsString();
    if (const auto *M = dyn_cast<CXXMethodDecl>(FD); M && !W.Constructor)
      W.QualifiedName = M->getParent()->getQualifiedNameAsString() +
                        "::" + FD->getNameAsString();
    W.CPlusPlus = LO.CPlusPlus;
    W.NumParams = FD->getNumParams();
    W.VoidReturn = FD->getReturnType()->isVoidType();
    for (const ParmVarDecl *P : FD->parameters()) {
      W.ParamNames.push_back(P->getNameAsString());
      if (P->isParameterPack())
        W.Problem = "it takes a parameter pack";
      else if (!LO.CPlusPlus && P->getName().empty())
        W.Problem = "a parameter has no name";
    }
    const auto *MD = dyn_cast<CXXMethodDecl>(FD);
    if (FD->isVariadic())
      W.Problem = "it is variadic";
    else if (MD && MD->isVirtual())
      W.Problem = "it is virtual (every override would need the parameter)";
    else if (FD->isMain())
      W.Problem = "it is main";
    else if (FD->isOverloadedOperator())
      W.Problem = "it is an operator";
    else if (!LO.CPlusPlus && !FD->hasWrittenPrototype())
      W.Problem = "it has no prototype";
    WrapperFact::Decl D;
    FunctionTypeLoc FTL = FD->getFunctionTypeLoc();
    SourceLocation Begin = FD->getBeginLoc(), Name = FD->getLocation();
    SourceLocation End = FD->getEndLoc();
    if (!FTL || !Begin.isFileID() || !Name.isFileID() || !End.isFileID() ||
        !FTL.getLParenLoc().isFileID() || !FTL.getRParenLoc().isFileID()) {
      if (W.Problem.empty())
        W.Problem = "its declaration is written by a macro";
    } else {
      D.File = pathOf(SM.getFileID(Name));
      D.Begin = offset(Begin);
      D.End = endOffset(End);
      D.NameOffset = offset(Name);
      D.ParamsBegin = offset(FTL.getLParenLoc()) + 1;
      D.ParamsEnd = offset(FTL.getRParenLoc());
      D.First = FD->isFirstDecl();
      D.Definition = Def;
      llvm::StringRef Buf = SM.getBufferData(SM.getFileID(Name));
      D.VoidList =
          FD->getNumParams() == 0 &&
          Buf.slice(D.ParamsBegin, D.ParamsEnd).trim() == "void";
      if (!LO.CPlusPlus)
        D.Text = Buf.slice(D.Begin, D.End).str();
      if (Def) {
        W.File = D.File;
        W.Line = SM.getSpellingLineNumber(Name);
        W.DefBegin = D.Begin;
        W.DefEnd = D.End;
        W.DefText = D.Text;
        W.NameOffset = D.NameOffset;
        W.NameLength = Lexer::MeasureTokenLength(Name, SM, LO);
        if (const Stmt *Body = FD->getBody())
          W.BodyBegin = offset(Body->getBeginLoc());
      }
    }
    Index.addWrapperDecl(W, D, Def);
  }

  // A call of a user function: where a tier argument would go.
  template <typename Args>
  void addCallSite(SourceRange R, const FunctionDecl *Callee, Args Arguments,
                   SourceLocation Name, SourceLocation ArgsBegin,
                   SourceLocation ArgsEnd, const char *NoParens) {
    std::string Key = functionKey(Callee);
    SourceLocation B = SM.getExpansionLoc(R.getBegin());
    if (!userLoc(B))
      return;
    CallSiteFact C;
    C.File = pathOf(SM.getFileID(B));
    C.Line = SM.getExpansionLineNumber(B);
    C.Col = SM.getExpansionColumnNumber(B);
    SourceLocation E = SM.getExpansionRange(R.getEnd()).getEnd();
    C.EndCol =
        SM.getExpansionLineNumber(E) == C.Line
            ? SM.getExpansionColumnNumber(E) +
                  Lexer::MeasureTokenLength(E, SM, LO)
            : ~0u;
    // Any callee's: where a tier scope can last for the call.
    for (const Expr *A : Arguments) {
      if (isa<CXXDefaultArgExpr>(A))
        break;
      SourceRange AR = A->getSourceRange();
      if (AR.getBegin().isFileID() && AR.getEnd().isFileID() &&
          SM.getFileID(AR.getBegin()) == SM.getFileID(B) &&
          SM.getFileID(AR.getEnd()) == SM.getFileID(B))
        Index.addScopeCall(
            {C.File, C.Line, C.Col, C.EndCol, offset(AR.getBegin()),
             offset(Lexer::getLocForEndOfToken(AR.getEnd(), 0, SM, LO)),
             enclosingKey(), (bool)LO.CPlusPlus});
      break;
    }
    if (Key.empty())
      return;
    C.CalleeKey = Key;
    C.FunctionKey = enclosingKey();
    for (const Expr *A : Arguments)
      if (!isa<CXXDefaultArgExpr>(A))
        ++C.WrittenArgs;
    if (ArgsEnd.isInvalid() || ArgsBegin.isInvalid())
      C.Problem = *NoParens ? NoParens : "cannot find its parentheses";
    else if (!ArgsEnd.isFileID() || !ArgsBegin.isFileID() ||
             (Name.isValid() && !Name.isFileID()))
      C.Problem = "the call is written inside a macro";
    else {
      C.ArgsBegin = offset(ArgsBegin);
      C.ArgsEnd = offset(ArgsEnd);
      if (Name.isValid()) {
        C.NameOffset = offset(Name);
        C.NameLength = Lexer::MeasureTokenLength(Name, SM, LO);
      }
    }
    Index.addCallSite(std::move(C));
  }

  // An allocation spelled in a macro body: the use of the macro, expanded
  // with the allocation rewritten, as one edit over the use (the other uses
  // keep the macro). The body's tokens come from the macro's definition,
  // its parameters replaced by the use's argument text.
  void expandUse(SourceLocation Loc, AllocExpr &A) {
    auto Fail = [&](std::string Why) { A.UseProblem = std::move(Why); };
    SourceLocation L = Loc;
    while (L.isMacroID() && SM.isMacroArgExpansion(L))
      L = SM.getImmediateSpellingLoc(L);
    if (!L.isMacroID())
      return;
    CharSourceRange Use = SM.getImmediateExpansionRange(L);
    SourceLocation UB = Use.getBegin(), UE = Use.getEnd();
    if (UB.isMacroID() && SM.isMacroArgExpansion(UB))
      UB = SM.getSpellingLoc(UB);
    if (UE.isMacroID() && SM.isMacroArgExpansion(UE))
      UE = SM.getSpellingLoc(UE);
    if (!UB.isFileID() || !UE.isFileID() || SM.getFileID(UB) != SM.getFileID(UE))
      return Fail("its use is inside another macro's body");
    IdentifierInfo *II = PP.getIdentifierInfo(A.Macro);
    const MacroInfo *MI = PP.getMacroDefinitionAtLoc(II, UB).getMacroInfo();
    if (!MI)
      return Fail("cannot find the definition of " + A.Macro);
    // The use's arguments, split at top-level commas.
    std::vector<std::string> Args;
    unsigned UseBegin = offset(UB), UseEnd = endOffset(UE);
    llvm::StringRef Buf = SM.getBufferData(SM.getFileID(UB));
    if (MI->isFunctionLike()) {
      Lexer Lex(SM.getLocForStartOfFile(SM.getFileID(UB)), LO, Buf.begin(),
                Buf.begin() + UseBegin, Buf.end());
      Token T;
      Lex.LexFromRawLexer(T); // the macro name
      Lex.LexFromRawLexer(T);
      if (!T.is(tok::l_paren))
        return Fail("cannot find the arguments of " + A.Macro);
      int Depth = 0;
      unsigned ArgBegin = ~0u, ArgEnd = 0;
      for (;;) {
        Lex.LexFromRawLexer(T);
        if (T.is(tok::eof) || offset(T.getLocation()) >= UseEnd)
          return Fail("cannot find the arguments of " + A.Macro);
        bool Close = T.is(tok::r_paren) && Depth == 0;
        if ((T.is(tok::comma) && Depth == 0 &&
             !(MI->isVariadic() && Args.size() + 1 >= MI->getNumParams())) ||
            Close) {
          Args.push_back(ArgBegin == ~0u ? ""
                                         : Buf.slice(ArgBegin, ArgEnd).str());
          ArgBegin = ~0u;
          if (Close)
            break;
          continue;
        }
        if (T.isOneOf(tok::l_paren, tok::l_square, tok::l_brace))
          ++Depth;
        else if (T.isOneOf(tok::r_paren, tok::r_square, tok::r_brace))
          --Depth;
        unsigned O = offset(T.getLocation());
        if (ArgBegin == ~0u)
          ArgBegin = O;
        ArgEnd = O + T.getLength();
      }
      if (Args.size() == 1 && Args[0].empty() && MI->getNumParams() == 0)
        Args.clear();
      if (Args.size() != MI->getNumParams())
        return Fail("cannot match the arguments of " + A.Macro);
    }
    // The body with the allocation's edits and the arguments.
    std::string Text;
    size_t Applied = 0;
    unsigned SkipUntil = 0; // the rest of an edit over several tokens
    for (const Token &T : MI->tokens()) {
      if (T.isOneOf(tok::hash, tok::hashhash))
        return Fail(A.Macro + " uses # or ##");
      if (offset(T.getLocation()) < SkipUntil)
        continue;
      if (!Text.empty() && (T.hasLeadingSpace() || T.isAtStartOfLine()))
        Text += ' ';
      if (const IdentifierInfo *TI = T.getIdentifierInfo()) {
        int P = MI->getParameterNum(TI);
        if (P >= 0) {
          Text += Args[P];
          continue;
        }
      }
      unsigned O = offset(T.getLocation()), N = T.getLength();
      std::string Spelled = Lexer::getSpelling(T, SM, LO);
      std::string After;
      for (const EditTemplate &E : A.Edits) {
        if (E.Offset == O && E.Length >= N) // std::malloc: 3 tokens
          Spelled = E.Text, ++Applied, SkipUntil = O + E.Length;
        else if (E.Offset == O + N && E.Length == 0)
          After += E.Text, ++Applied;
      }
      Text += Spelled + After;
    }
    if (Applied != A.Edits.size())
      return Fail("its edit spans several tokens of " + A.Macro + "'s body");
    A.UseEdits.push_back({pathOf(SM.getFileID(UB)), UseBegin,
                          UseEnd - UseBegin, "/* " + A.Macro + " */ " + Text});
  }

  std::string pathOf(FileID FID) {
    auto It = Paths.find(FID);
    if (It != Paths.end())
      return It->second;
    std::string P;
    if (OptionalFileEntryRef FE = SM.getFileEntryRefForID(FID)) {
      P = FE->getFileEntry().tryGetRealPathName().str();
      llvm::SmallString<256> Real;
      if (P.empty() && !llvm::sys::fs::real_path(FE->getName(), Real))
        P = Real.str().str();
      if (P.empty())
        P = FE->getName().str();
      llvm::SmallString<256> Abs(FE->getName());
      SM.getFileManager().makeAbsolutePath(Abs);
      llvm::sys::path::remove_dots(Abs, /*remove_dot_dot=*/true);
      Index.Reached.emplace(P, Abs.str().str());
    }
    return Paths[FID] = P;
  }

  bool userLoc(SourceLocation Exp) {
    return Exp.isValid() && !SM.isInSystemHeader(Exp) &&
           SM.getFileEntryRefForID(SM.getFileID(Exp));
  }

  void addCall(SourceLocation Loc, std::string Callee, bool CLibrary) {
    SourceLocation Exp = SM.getExpansionLoc(Loc);
    if (userLoc(Exp))
      Index.addCall({pathOf(SM.getFileID(Exp)), SM.getExpansionLineNumber(Exp),
                     std::move(Callee), CLibrary});
  }

  void addFunction(SourceRange R, std::string Name, std::string Qualified) {
    SourceLocation B = SM.getExpansionLoc(R.getBegin());
    SourceLocation E = SM.getExpansionRange(R.getEnd()).getEnd();
    if (!userLoc(B))
      return;
    Index.addFunction({pathOf(SM.getFileID(B)), SM.getExpansionLineNumber(B),
                       SM.getExpansionLineNumber(E), std::move(Name),
                       std::move(Qualified)});
  }

  // Fills the expansion position of an allocation; false if not user code.
  bool start(AllocExpr &A, SourceRange R, std::string Callee) {
    SourceLocation B = SM.getExpansionLoc(R.getBegin());
    if (!userLoc(B))
      return false;
    SourceLocation E = SM.getExpansionRange(R.getEnd()).getEnd();
    A.File = pathOf(SM.getFileID(B));
    A.Line = SM.getExpansionLineNumber(B);
    A.Col = SM.getExpansionColumnNumber(B);
    A.EndLine = SM.getExpansionLineNumber(E);
    A.EndCol =
        SM.getExpansionColumnNumber(E) + Lexer::MeasureTokenLength(E, SM, LO);
    A.Callee = std::move(Callee);
    A.FunctionKey = enclosingKey();
    if (A.FunctionKey.empty())
      A.OuterFunctionKey = outerKey();
    if (R.getBegin().isFileID() || SM.isMacroArgExpansion(R.getBegin())) {
      SourceLocation SB = SM.getSpellingLoc(R.getBegin());
      SourceLocation SE = SM.getSpellingLoc(R.getEnd());
      if (SM.getSpellingLineNumber(SB) == A.Line &&
          SM.getSpellingLineNumber(SE) == A.Line) {
        A.SpellCol = SM.getSpellingColumnNumber(SB);
        A.SpellEndCol = SM.getSpellingColumnNumber(SE) +
                        Lexer::MeasureTokenLength(SE, SM, LO);
      }
    }
    return true;
  }

  // Where the token at \p Loc is spelled; notes the macro whose body
  // spells it (a token from a macro argument is spelled at the use site).
  SourceLocation spell(SourceLocation Loc, AllocExpr &A) {
    SourceLocation L = Loc;
    while (L.isMacroID()) {
      if (SM.isMacroArgExpansion(L)) {
        L = SM.getImmediateSpellingLoc(L);
        continue;
      }
      A.Macro = Lexer::getImmediateMacroName(L, SM, LO).str();
      return SM.getSpellingLoc(L);
    }
    return L;
  }

  bool editable(SourceLocation B, SourceLocation E) {
    return B.isFileID() && E.isFileID() && SM.getFileID(B) == SM.getFileID(E) &&
           SM.getFileOffset(B) <= SM.getFileOffset(E) &&
           !SM.isInSystemHeader(B);
  }

  void setEditKey(AllocExpr &A, SourceLocation Loc) {
    A.EditFile = pathOf(SM.getFileID(Loc));
    A.EditOffset = SM.getFileOffset(Loc);
    A.EditLine = SM.getSpellingLineNumber(Loc);
  }

  void finish(AllocExpr &A, const std::string &Problem) {
    if (A.EditFile.empty()) {
      A.EditFile = A.File;
      A.EditOffset = 0;
    }
    A.Problem = Problem;
    if (!Problem.empty())
      A.Edits.clear();
    Index.addAlloc(std::move(A));
  }
};

class IndexConsumer : public ASTConsumer {
public:
  IndexConsumer(Preprocessor &PP, SourceIndex &Index) : PP(PP), Index(Index) {}
  void HandleTranslationUnit(ASTContext &Ctx) override {
    Collector(Ctx, PP, Index).TraverseDecl(Ctx.getTranslationUnitDecl());
  }

private:
  Preprocessor &PP;
  SourceIndex &Index;
};

class IndexAction : public ASTFrontendAction {
public:
  explicit IndexAction(SourceIndex &Index) : Index(Index) {}
  std::unique_ptr<ASTConsumer> CreateASTConsumer(CompilerInstance &CI,
                                                 llvm::StringRef) override {
    return std::make_unique<IndexConsumer>(CI.getPreprocessor(), Index);
  }

private:
  SourceIndex &Index;
};

class IndexActionFactory : public tooling::FrontendActionFactory {
public:
  explicit IndexActionFactory(SourceIndex &Index) : Index(Index) {}
  std::unique_ptr<FrontendAction> create() override {
    return std::make_unique<IndexAction>(Index);
  }

private:
  SourceIndex &Index;
};

} // namespace

std::unique_ptr<tooling::FrontendActionFactory>
makeIndexActionFactory(SourceIndex &Index) {
  return std::make_unique<IndexActionFactory>(Index);
}

} // namespace tierwise
