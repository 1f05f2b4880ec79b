// SPDX-License-Identifier: MIT
// Where `#include <tierwise.h>` goes in a rewritten file: clang's
// HeaderIncludes (what clang-format and clangd use) puts it into the file's
// top include block in name order, after a header guard or leading comment,
// so a `#define _GNU_SOURCE` before the block keeps its effect.
#pragma once

#include "clang/Tooling/Core/Replacement.h"
#include "llvm/ADT/StringRef.h"

#include <optional>

namespace tierwise {

/// The insertion of the include line into \p Code (the text of \p File), or
/// std::nullopt when the file already includes tierwise.h.
std::optional<clang::tooling::Replacement>
tierwiseInclude(llvm::StringRef File, llvm::StringRef Code);

} // namespace tierwise
