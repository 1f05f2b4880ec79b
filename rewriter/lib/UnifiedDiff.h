// SPDX-License-Identifier: MIT
// A unified diff (diff -u, 3 lines of context) of one file's old and new
// text, so the rewriter's output is a patch a reviewer can read and apply.
#pragma once

#include "llvm/ADT/StringRef.h"

#include <string>

namespace tierwise {

/// The diff of \p Old and \p New with headers "--- a/Label" and
/// "+++ b/Label" (or the absolute path without a/ b/ when Label is
/// absolute); empty when the texts are equal.
std::string unifiedDiff(llvm::StringRef Label, llvm::StringRef Old,
                        llvm::StringRef New);

} // namespace tierwise
