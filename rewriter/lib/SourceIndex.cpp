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
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

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
  return Out;
}

static const char *const AllocFunctions[] = {"malloc",         "calloc",
                                             "realloc",        "aligned_alloc",
                                             "posix_memalign", "memalign"};

// The allocation functions tierwise.h has a DRAM-head form of
// (tw_malloc_head, tw_calloc_head), and why the others have none.
static bool hasHeadForm(llvm::StringRef Callee) {
  return Callee == "malloc" || Callee == "calloc";
}
static std::string noHeadForm(const std::string &Callee) {
  return "only malloc and calloc have a DRAM-head form in tierwise.h, not " +
         Callee;
}

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
  Collector(ASTContext &Ctx, SourceIndex &Index)
      : Ctx(Ctx), SM(Ctx.getSourceManager()), LO(Ctx.getLangOpts()),
        Index(Index) {}

  bool shouldVisitTemplateInstantiations() const { return true; }

  bool VisitFunctionDecl(FunctionDecl *FD) {
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
    if (CE->getConstructor())
      addCall(CE->getBeginLoc(),
              CE->getConstructor()->getParent()->getQualifiedNameAsString() +
                  " constructor");
    return true;
  }

  bool VisitCallExpr(CallExpr *CE) {
    const FunctionDecl *FD = CE->getDirectCallee();
    llvm::StringRef Alloc = allocFunction(FD);
    if (Alloc.empty()) {
      addCall(CE->getBeginLoc(),
              FD ? FD->getQualifiedNameAsString() : "(indirect call)");
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
    bool Head = hasHeadForm(A.Callee);
    if (!Head)
      A.HeadProblem = noHeadForm(A.Callee);
    A.Edits.push_back({File, BeginOff, EndOff - BeginOff,
                       "tw_" + A.Callee + (Head ? "@HEAD@" : "")});
    A.Edits.push_back({File, SM.getFileOffset(Paren->getEndLoc()), 0,
                       Head ? "@ENUM@, @DRAM@" : "@ENUM@, "});
    setEditKey(A, Begin);
    finish(A, "");
    return true;
  }

  bool VisitCXXNewExpr(CXXNewExpr *NE) {
    AllocExpr A;
    if (!start(A, NE->getSourceRange(), NE->isArray() ? "new[]" : "new"))
      return true;
    A.HeadProblem = noHeadForm(A.Callee);
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
    else if (NE->passAlignment())
      Problem = "the type is over-aligned and tierwise.h has no aligned "
                "operator new";
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
    finish(A, Problem);
    return true;
  }

private:
  ASTContext &Ctx;
  SourceManager &SM;
  const LangOptions &LO;
  SourceIndex &Index;
  std::map<FileID, std::string> Paths;

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
    }
    return Paths[FID] = P;
  }

  bool userLoc(SourceLocation Exp) {
    return Exp.isValid() && !SM.isInSystemHeader(Exp) &&
           SM.getFileEntryRefForID(SM.getFileID(Exp));
  }

  void addCall(SourceLocation Loc, std::string Callee) {
    SourceLocation Exp = SM.getExpansionLoc(Loc);
    if (userLoc(Exp))
      Index.addCall({pathOf(SM.getFileID(Exp)), SM.getExpansionLineNumber(Exp),
                     std::move(Callee)});
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
  explicit IndexConsumer(SourceIndex &Index) : Index(Index) {}
  void HandleTranslationUnit(ASTContext &Ctx) override {
    Collector(Ctx, Index).TraverseDecl(Ctx.getTranslationUnitDecl());
  }

private:
  SourceIndex &Index;
};

class IndexAction : public ASTFrontendAction {
public:
  explicit IndexAction(SourceIndex &Index) : Index(Index) {}
  std::unique_ptr<ASTConsumer> CreateASTConsumer(CompilerInstance &,
                                                 llvm::StringRef) override {
    return std::make_unique<IndexConsumer>(Index);
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
