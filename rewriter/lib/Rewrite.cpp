// SPDX-License-Identifier: MIT
// The rewrite driver; see Rewrite.h.
#include "Rewrite.h"

#include "IncludeInsertion.h"
#include "Placement.h"
#include "Resolver.h"
#include "SourceIndex.h"
#include "UnifiedDiff.h"

#include "clang/Tooling/ArgumentsAdjusters.h"
#include "clang/Tooling/Tooling.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <map>

using namespace clang;

namespace tierwise {
namespace {

// Paths in the diff: relative to the working directory when under it.
std::string label(const std::string &Path) {
  llvm::SmallString<256> Cwd;
  if (!llvm::sys::fs::current_path(Cwd)) {
    llvm::SmallString<256> Real;
    if (!llvm::sys::fs::real_path(Cwd, Real))
      Cwd = Real;
    llvm::StringRef P(Path);
    if (P.consume_front(Cwd) && P.consume_front("/"))
      return P.str();
  }
  return Path;
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
  if (auto At = tierwiseIncludeOffset(Code)) {
    bool NeedsNewline = *At == Code.size() && !Code.ends_with("\n") && *At;
    if (llvm::Error E = Reps.add(tooling::Replacement(
            File, *At, 0,
            std::string(NeedsNewline ? "\n" : "") + "#include <tierwise.h>\n")))
      return E;
  }
  return tooling::applyAllReplacements(Code, Reps);
}

} // namespace

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
  tooling::ClangTool Tool(DB, Files);
  // Builtin headers from the installed clang, not next to this binary; a
  // compile command written for GCC may carry flags clang does not know.
  std::vector<std::string> Extra = {"-resource-dir=" + Opts.ResourceDir,
                                    "-Wno-unknown-warning-option",
                                    "-Wno-ignored-optimization-argument",
                                    "-Wno-unused-command-line-argument"};
  Tool.appendArgumentsAdjuster(tooling::getInsertArgumentAdjuster(
      Extra, tooling::ArgumentInsertPosition::END));
  int Parse = Tool.run(makeIndexActionFactory(Index).get());
  if (Parse != 0)
    Err << "tierwise-rewrite: warning: some files failed to parse (errors "
           "above); their sites may be reported as not found\n";

  Outcome R = resolve(*P, Index);

  std::map<std::string, std::vector<tooling::Replacement>> ByFile;
  for (const tooling::Replacement &E : R.Edits)
    ByFile[E.getFilePath().str()].push_back(E);
  std::string Patch;
  for (auto &[File, Edits] : ByFile) {
    auto New = rewriteFile(File, Edits);
    if (!New) {
      Err << "tierwise-rewrite: error: " << llvm::toString(New.takeError())
          << "\n";
      return 2;
    }
    auto Old = llvm::MemoryBuffer::getFile(File);
    Patch += unifiedDiff(label(File), (*Old)->getBuffer(), *New);
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

  for (const std::string &N : R.Notes)
    Err << "tierwise-rewrite: note: " << N << "\n";
  for (const std::string &Pr : R.Problems)
    Err << "tierwise-rewrite: not rewritten: " << Pr << "\n";
  Err << "tierwise-rewrite: " << R.Rewritten << " of " << R.Placed
      << " placed sites rewritten in " << ByFile.size() << " files\n";
  return (R.Rewritten == R.Placed && Parse == 0) ? 0 : 1;
}

} // namespace tierwise
