// SPDX-License-Identifier: MIT
// The whole rewrite: parse the files, resolve the placement's sites, add
// `#include <tierwise.h>`, and print a unified diff, write a patch file or
// edit the files in place. Exit statuses: 0 all placed sites rewritten,
// 1 some were not (listed on stderr), 2 bad arguments or input.
#pragma once

#include "clang/Tooling/CompilationDatabase.h"
#include "llvm/Support/raw_ostream.h"

#include <string>
#include <vector>

namespace tierwise {

struct RewriteOptions {
  std::string PlacementPath;
  std::string PatchPath;   ///< -o: write the diff here instead of stdout
  bool InPlace = false;    ///< -i: edit the files
  std::string ResourceDir; ///< clang's builtin headers
  /// --root: the directory the patch's paths are relative to; "" picks the
  /// git work tree holding the first file, else the compile database's
  /// directory when it holds every file, else the deepest directory holding
  /// them all; never the working directory.
  std::string Root;
  /// The compile database's directory (-p, or what `tierwise rewrite` was
  /// given when it passes the tool a narrowed copy); "" without one.
  std::string DatabaseDir;
};

class SourceIndex;

/// Parses \p File with each of its compile commands into \p Index; on an
/// error tries again in GNU mode (Rewrite.cpp), and failing that records
/// the first error in Index.ParseErrors and returns false.
bool indexFile(const clang::tooling::CompilationDatabase &DB,
               const std::string &File, const RewriteOptions &Opts,
               SourceIndex &Index, llvm::raw_ostream &Err);

int runRewrite(const RewriteOptions &Opts,
               const clang::tooling::CompilationDatabase &DB,
               const std::vector<std::string> &Files, llvm::raw_ostream &Out,
               llvm::raw_ostream &Err);

} // namespace tierwise
