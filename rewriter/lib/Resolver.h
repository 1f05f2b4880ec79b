// SPDX-License-Identifier: MIT
// Deciding, for each placed site, which allocation expression to rewrite:
// frame -> file:line -> expression (column, or one site per call), the
// stale-placement check, and the wrapper rule (an expression shared by sites
// of different tiers or DRAM heads is rewritten in its function, which gains
// a tier parameter, a tw_place where heads differ; one shared by sites of a
// single tier and head is rewritten once, inside the wrapper or macro).
#pragma once

#include "Placement.h"
#include "SourceIndex.h"

#include "clang/Tooling/Core/Replacement.h"

#include <string>
#include <vector>

namespace tierwise {

struct Outcome {
  std::vector<clang::tooling::Replacement> Edits; ///< deduplicated
  std::vector<std::string> Problems; ///< one line per site not rewritten
  std::vector<std::string> Notes;    ///< informational lines
  unsigned Placed = 0;    ///< sites whose tier differs from default_tier
  unsigned Rewritten = 0; ///< of those, sites fully rewritten
};

Outcome resolve(const Placement &P, const SourceIndex &Index);

} // namespace tierwise
