// SPDX-License-Identifier: MIT
// Where `#include <tierwise.h>` goes in a rewritten file: after the last
// #include of the top include block (outside any #if but a header guard),
// so a `#define _GNU_SOURCE` before the block keeps its effect.
#pragma once

#include "llvm/ADT/StringRef.h"

#include <optional>

namespace tierwise {

/// Offset at which to insert the include line, or std::nullopt when the
/// file already includes tierwise.h.
std::optional<unsigned> tierwiseIncludeOffset(llvm::StringRef Code);

} // namespace tierwise
