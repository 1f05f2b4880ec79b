// SPDX-License-Identifier: MIT
// The rewrite driver; see Rewrite.h.
#include "Rewrite.h"

#include "IncludeInsertion.h"
#include "Placement.h"
#include "Resolver.h"
#include "SourceIndex.h"
#include "UnifiedDiff.h"

#include "clang/Basic/Diagnostic.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Tooling/ArgumentsAdjusters.h"
#include "clang/Tooling/Tooling.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <cstdlib>
#include <map>
#include <set>

using namespace clang;

namespace tierwise {
namespace {

std::string realOr(const std::string &Path) {
  llvm::SmallString<256> Real;
  return llvm::sys::fs::real_path(Path, Real) ? Path : Real.str().str();
}

// The directory the patch's paths are relative to, and why: --root, else
// the git work tree (a directory with .git) holding the first file, else
// the compile database's directory when it holds every file (a database at
// the project's top), else the deepest directory holding it and every file
// (a build directory inside the project), else the deepest holding every
// file (Files, and Patched, the headers the patch edits, unless that is /).
// Never the working directory: the patch must apply from the project
// whatever directory the rewrite ran in. A real path: files are named by
// theirs.
std::string projectRoot(const RewriteOptions &Opts,
                        const std::vector<std::string> &Files,
                        const std::vector<std::string> &Patched,
                        std::string &Why) {
  if (!Opts.Root.empty()) {
    Why = "--root";
    return realOr(Opts.Root);
  }
  auto DirOf = [](const std::string &F) {
    llvm::SmallString<256> Dir(realOr(F));
    llvm::sys::path::remove_filename(Dir);
    return Dir.str().str();
  };
  std::vector<std::string> Dirs;
  for (const std::string &F : Files)
    Dirs.push_back(DirOf(F));
  if (Dirs.empty())
    return "";
  // As git looks for a repository: not up into GIT_CEILING_DIRECTORIES.
  std::set<std::string> Ceilings;
  if (const char *C = std::getenv("GIT_CEILING_DIRECTORIES")) {
    llvm::SmallVector<llvm::StringRef, 4> Parts;
    llvm::StringRef(C).split(Parts, ':', -1, false);
    for (llvm::StringRef Part : Parts)
      Ceilings.insert(realOr(Part.str()));
  }
  for (llvm::StringRef D = Dirs.front(); !D.empty();) {
    llvm::SmallString<256> Git(D);
    llvm::sys::path::append(Git, ".git");
    if (llvm::sys::fs::exists(Git)) {
      Why = "the git work tree holding " +
            llvm::sys::path::filename(Files.front()).str();
      return D.str();
    }
    if (Ceilings.count(D.str()))
      break; // the start may be one: it is searched, nothing above it
    D = llvm::sys::path::parent_path(D);
    if (Ceilings.count(D.str()))
      break;
  }
  // The deepest directory holding Top and every directory of Ds.
  auto Common = [](std::string Top, const std::vector<std::string> &Ds) {
    auto Holds = [&](llvm::StringRef T) {
      for (const std::string &D : Ds)
        if (D != T && !llvm::StringRef(D).starts_with(
                          T.str() + (T.ends_with("/") ? "" : "/")))
          return false;
      return true;
    };
    llvm::StringRef C = Top;
    while (!Holds(C) && !llvm::sys::path::parent_path(C).empty())
      C = llvm::sys::path::parent_path(C);
    return C.str();
  };
  std::vector<std::string> All = Dirs;
  for (const std::string &F : Patched)
    All.push_back(DirOf(F));
  if (!Opts.DatabaseDir.empty()) {
    std::string Db = realOr(Opts.DatabaseDir);
    std::string C = Common(Db, All);
    if (C == Db) {
      Why = "the compile database's directory";
      return C;
    }
    if (C != "/") {
      Why = "the deepest directory holding the compile database and the "
            "files";
      return C;
    }
  }
  std::string C = Common(All.front(), All);
  if (C == "/")
    C = Common(Dirs.front(), Dirs);
  Why = "the deepest directory holding the files (no git work tree or "
        "compile database above them)";
  return C;
}

// Path under Root, relative to it, or "".
std::string under(const std::string &Root, llvm::StringRef P) {
  if (!Root.empty() && P.consume_front(Root) &&
      (Root.back() == '/' ? true : P.consume_front("/")))
    return P.str();
  return "";
}

// A file's name in the patch (File is its real path): relative to the root
// as git tracks it (the real path: git apply and patch refuse to write
// through a symlink, and a header reached through a linked directory is
// the link target's file in the tree); a file whose real path is outside
// the root by the path the project reached it by (Reached), if that is
// under the root; else its absolute path.
std::string label(const std::string &File, const std::string &Root,
                  const SourceIndex &Index, std::vector<std::string> &Notes) {
  if (std::string R = under(Root, File); !R.empty())
    return R;
  auto It = Index.Reached.find(File);
  if (It != Index.Reached.end())
    if (std::string R = under(Root, It->second); !R.empty()) {
      Notes.push_back(R + " reaches " + File +
                      " through a symlink, outside the project root " + Root +
                      ": the patch names it by that path, which git apply "
                      "and patch do not write through; give --root a "
                      "directory above both");
      return R;
    }
  Notes.push_back(File + " is outside the project root " + Root +
                  ": the patch names it by its absolute path (apply with "
                  "`patch -p0` from /, or give --root)");
  return File;
}

// The file's text after the edits and the tierwise.h include.
llvm::Expected<std::string>
rewriteFile(const std::string &File,
            const std::vector<tooling::Replacement> &Edits) {
  auto Buf = llvm::MemoryBuffer::getFile(File);
  if (!Buf)
    return llvm::createStringError(Buf.getError(), "%s: cannot read: %s",
                                   File.c_str(),
                                   Buf.getError().message().c_str());
  llvm::StringRef Code = (*Buf)->getBuffer();
  tooling::Replacements Reps;
  for (const tooling::Replacement &R : Edits)
    if (llvm::Error E = Reps.add(R))
      return E;
  if (auto Include = tierwiseInclude(File, Code))
    if (llvm::Error E = Reps.add(*Include))
      return E;
  return tooling::applyAllReplacements(Code, Reps);
}

// Keeps the first error of a parse, as one line "file:line:col: message".
// Counts the errors, and those on atomic operations.
class FirstError : public DiagnosticConsumer {
public:
  std::string First;
  unsigned Errors = 0, Atomic = 0;
  void HandleDiagnostic(DiagnosticsEngine::Level Level,
                        const Diagnostic &Info) override {
    DiagnosticConsumer::HandleDiagnostic(Level, Info);
    if (Level < DiagnosticsEngine::Error)
      return;
    llvm::SmallString<256> Msg;
    Info.FormatDiagnostic(Msg);
    ++Errors;
    Atomic += Level == DiagnosticsEngine::Error &&
              llvm::StringRef(Msg).contains("atomic operation");
    if (!First.empty())
      return;
    if (Info.hasSourceManager() && Info.getLocation().isValid()) {
      const SourceManager &SM = Info.getSourceManager();
      PresumedLoc PL = SM.getPresumedLoc(SM.getExpansionLoc(Info.getLocation()));
      if (PL.isValid())
        First = llvm::sys::path::filename(PL.getFilename()).str() + ":" +
                std::to_string(PL.getLine()) + ":" +
                std::to_string(PL.getColumn()) + ": ";
    }
    First += Msg.str().str();
  }
};

// GNU mode: what GCC accepts and Clang's own headers refuse, chiefly C11
// atomics on plain (non-_Atomic) objects, which GCC's <stdatomic.h> maps to
// the __atomic builtins: -std=gnu*, and GCC's header directory first.
std::vector<std::string> gnuMode(const std::vector<std::string> &Args) {
  std::vector<std::string> Out;
  for (std::string A : Args) {
    llvm::StringRef R(A);
    if (R.consume_front("-std=c++"))
      A = "-std=gnu++" + R.str();
    else if (R.consume_front("-std=c"))
      A = "-std=gnu" + R.str();
    Out.push_back(A);
  }
  // After the compiler name: before the command's own -I would change what
  // a project header shadows, so right before the file instead.
  Out.insert(Out.end() - 1, {"-isystem", TW_GCC_INCLUDE_DIR});
  return Out;
}

// One compile command of a file, as a database of its own.
class OneCommand : public tooling::CompilationDatabase {
public:
  explicit OneCommand(tooling::CompileCommand C) : C(std::move(C)) {}
  std::vector<tooling::CompileCommand>
  getCompileCommands(llvm::StringRef) const override {
    return {C};
  }

private:
  tooling::CompileCommand C;
};

// Parses File with DB's commands into Index, then once more in GNU mode;
// false (and the first error in First) if neither parses. A file whose only
// errors, in either mode, are on atomic operations (GCC-style atomics on
// plain objects, which Clang's <stdatomic.h> refuses, beside `_Atomic`
// pointers, which GCC's refuses to Clang) is indexed as the first parse
// left it: Clang recovers from such an error inside its expression, so the
// allocations around it are intact.
bool parseWithRetry(const tooling::CompilationDatabase &DB,
                    const std::string &File, const RewriteOptions &Opts,
                    SourceIndex &Index, std::string &First,
                    llvm::raw_ostream &Err) {
  // Builtin headers from the installed clang, not next to this binary; a
  // compile command written for GCC may carry flags clang does not know,
  // and warnings the project makes errors are not errors here.
  std::vector<std::string> Extra = {"-resource-dir=" + Opts.ResourceDir,
                                    "-Wno-unknown-warning-option",
                                    "-Wno-ignored-optimization-argument",
                                    "-Wno-unused-command-line-argument",
                                    "-Wno-error", "-fno-caret-diagnostics",
                                    // A framework's many GCC-style atomics
                                    // must not stop the parse at 20 errors
                                    // ("too many errors emitted"), which
                                    // is fatal and leaves the AST short.
                                    "-ferror-limit=0"};
  SourceIndex Tolerated;
  std::string TolNote;
  for (int Attempt = 0; Attempt < 2; ++Attempt) {
    SourceIndex One;
    FirstError Diags;
    tooling::ClangTool Tool(DB, {File});
    Tool.setDiagnosticConsumer(&Diags); // one line per file, below
    Tool.setPrintErrorMessage(false);
    Tool.appendArgumentsAdjuster(tooling::getInsertArgumentAdjuster(
        Extra, tooling::ArgumentInsertPosition::END));
    if (Attempt == 1)
      Tool.appendArgumentsAdjuster(
          [](const tooling::CommandLineArguments &Args, llvm::StringRef) {
            return gnuMode(Args);
          });
    if (Tool.run(makeIndexActionFactory(One).get()) == 0) {
      Index.merge(One);
      if (Attempt == 1)
        Err << "tierwise-rewrite: note: " << File
            << " parsed in GNU mode (-std=gnu*, GCC's headers) after: "
            << First << "\n";
      return true;
    }
    if (First.empty())
      First = Diags.First.empty() ? "the parser failed" : Diags.First;
    if (TolNote.empty() && Diags.Errors && Diags.Errors == Diags.Atomic &&
        !One.Files.empty()) {
      Tolerated = std::move(One);
      TolNote = std::to_string(Diags.Errors) + " error" +
                (Diags.Errors > 1 ? "s" : "") + " on atomic operations (" +
                Diags.First + ") tolerated" +
                (Attempt ? " in GNU mode" : "");
    }
  }
  if (TolNote.empty())
    return false;
  Index.merge(Tolerated);
  Err << "tierwise-rewrite: note: " << File << " parsed with " << TolNote
      << ": GCC accepts them, Clang's and GCC's <stdatomic.h> each refuse "
         "one kind; the allocations are outside those expressions\n";
  return true;
}

// The -D/-U flags of a command that not every other command has.
std::string ownDefines(const tooling::CompileCommand &C,
                       const std::vector<tooling::CompileCommand> &All) {
  auto Defines = [](const tooling::CompileCommand &X) {
    std::set<std::string> Out;
    for (size_t I = 0; I < X.CommandLine.size(); ++I) {
      llvm::StringRef A = X.CommandLine[I];
      if ((A == "-D" || A == "-U") && I + 1 < X.CommandLine.size())
        Out.insert(A.str() + X.CommandLine[++I]);
      else if (A.starts_with("-D") || A.starts_with("-U"))
        Out.insert(A.str());
    }
    return Out;
  };
  std::set<std::string> Mine = Defines(C), Common = Mine;
  for (const tooling::CompileCommand &O : All) {
    std::set<std::string> D = Defines(O), Keep;
    for (const std::string &X : Common)
      if (D.count(X))
        Keep.insert(X);
    Common = Keep;
  }
  std::string Out;
  for (const std::string &X : Mine)
    if (!Common.count(X))
      Out += (Out.empty() ? "" : " ") + X;
  return Out.empty() ? "no -D of its own" : Out;
}

} // namespace

bool indexFile(const tooling::CompilationDatabase &DB, const std::string &File,
               const RewriteOptions &Opts, SourceIndex &Index,
               llvm::raw_ostream &Err) {
  std::string First;
  // Looked up as ClangTool does: by absolute path.
  std::string Abs = File;
  if (auto A = tooling::getAbsolutePath(*llvm::vfs::getRealFileSystem(), File))
    Abs = *A;
  std::vector<tooling::CompileCommand> Cmds = DB.getCompileCommands(Abs);
  bool OK = true;
  if (Cmds.size() < 2) {
    OK = parseWithRetry(DB, File, Opts, Index, First, Err);
  } else {
    // Several configurations: each parsed on its own, whatever their
    // order, the allocations each sees compared, all of them kept. One
    // that does not parse is named; the file is rewritten from the others.
    std::vector<std::set<std::string>> Seen;
    std::vector<tooling::CompileCommand> Parsed;
    std::vector<std::pair<std::string, std::string>> Broken;
    for (const tooling::CompileCommand &C : Cmds) {
      SourceIndex One;
      std::string Why;
      if (!parseWithRetry(OneCommand(C), File, Opts, One, Why, Err)) {
        Broken.push_back({ownDefines(C, Cmds), Why});
        if (First.empty())
          First = Why;
        continue;
      }
      std::set<std::string> Keys;
      for (const AllocExpr &A : One.Allocs)
        Keys.insert(llvm::sys::path::filename(A.File).str() + ":" +
                    std::to_string(A.Line) + " (" + A.Callee + ")");
      Seen.push_back(std::move(Keys));
      Parsed.push_back(C);
      Index.merge(One);
    }
    OK = !Parsed.empty();
    if (OK)
      for (auto &[Which, Why] : Broken)
        Err << "tierwise-rewrite: note: " << File
            << ": its configuration with " << Which
            << " does not parse, also in GNU mode (" << Why
            << "); rewritten from the other " << Parsed.size() << "\n";
    Cmds = Parsed;
    for (size_t I = 0; OK && Cmds.size() > 1 && I < Cmds.size(); ++I) {
      std::string Only;
      unsigned N = 0;
      for (const std::string &K : Seen[I]) {
        bool Everywhere = true;
        for (const auto &S : Seen)
          Everywhere = Everywhere && S.count(K);
        if (!Everywhere && N++ < 4)
          Only += (Only.empty() ? "" : ", ") + K;
      }
      if (N)
        Err << "tierwise-rewrite: note: " << File << ": its " << Cmds.size()
            << " compile commands disagree: the one with "
            << ownDefines(Cmds[I], Cmds) << " alone has the allocations at "
            << Only << (N > 4 ? " and more" : "")
            << " (a site there is rewritten for every configuration)\n";
    }
  }
  if (OK)
    return true;
  llvm::SmallString<256> Real;
  std::string Key =
      llvm::sys::fs::real_path(File, Real) ? File : Real.str().str();
  Index.ParseErrors[Key] = First;
  Err << "tierwise-rewrite: error: " << File
      << " does not parse, also in GNU mode: " << First
      << " (its sites are listed as not rewritten)\n";
  return false;
}

int runRewrite(const RewriteOptions &Opts,
               const tooling::CompilationDatabase &DB,
               const std::vector<std::string> &Files, llvm::raw_ostream &Out,
               llvm::raw_ostream &Err) {
  auto P = readPlacement(Opts.PlacementPath);
  if (!P) {
    Err << "tierwise-rewrite: error: " << llvm::toString(P.takeError()) << "\n";
    return 2;
  }
  for (const std::string &F : Files)
    if (!llvm::sys::fs::exists(F)) {
      Err << "tierwise-rewrite: error: " << F
          << ": no such file (FILES are the sources to rewrite)\n";
      return 2;
    }

  SourceIndex Index;
  unsigned Failures = 0;
  for (const std::string &File : Files)
    if (!indexFile(DB, File, Opts, Index, Err))
      ++Failures;

  Outcome R = resolve(*P, Index);

  std::map<std::string, std::vector<tooling::Replacement>> ByFile;
  for (const tooling::Replacement &E : R.Edits)
    ByFile[E.getFilePath().str()].push_back(E);
  std::string Patch;
  std::vector<std::string> Patched;
  for (auto &[File, Edits] : ByFile)
    Patched.push_back(File);
  std::string RootWhy;
  std::string Root = projectRoot(Opts, Files, Patched, RootWhy);
  std::vector<std::string> PathNotes;
  for (auto &[File, Edits] : ByFile) {
    auto New = rewriteFile(File, Edits);
    if (!New) {
      Err << "tierwise-rewrite: error: " << llvm::toString(New.takeError())
          << "\n";
      return 2;
    }
    auto Old = llvm::MemoryBuffer::getFile(File);
    Patch += unifiedDiff(label(File, Root, Index, PathNotes),
                         (*Old)->getBuffer(), *New);
    if (Opts.InPlace) {
      std::error_code EC;
      llvm::raw_fd_ostream OS(File, EC);
      if (EC) {
        Err << "tierwise-rewrite: error: " << File
            << ": cannot write: " << EC.message() << "\n";
        return 2;
      }
      OS << *New;
    }
  }
  if (!Opts.PatchPath.empty()) {
    std::error_code EC;
    llvm::raw_fd_ostream OS(Opts.PatchPath, EC);
    if (EC) {
      Err << "tierwise-rewrite: error: -o " << Opts.PatchPath
          << ": cannot write: " << EC.message() << "\n";
      return 2;
    }
    OS << Patch;
  } else if (!Opts.InPlace) {
    Out << Patch;
  }

  if (!ByFile.empty() && !Opts.InPlace)
    Err << "tierwise-rewrite: note: the patch's paths are relative to "
        << Root << " (" << RootWhy
        << "; apply there with `git apply` or `patch -p1`)\n";
  for (const std::string &N : PathNotes)
    Err << "tierwise-rewrite: note: " << N << "\n";
  for (const std::string &N : R.Notes)
    Err << "tierwise-rewrite: note: " << N << "\n";
  for (const std::string &Pr : R.Problems)
    Err << "tierwise-rewrite: not rewritten: " << Pr << "\n";
  Err << "tierwise-rewrite: " << R.Rewritten << " of " << R.Placed
      << " placed sites rewritten in " << ByFile.size() << " files\n";
  return (R.Rewritten == R.Placed && Failures == 0) ? 0 : 1;
}

} // namespace tierwise
