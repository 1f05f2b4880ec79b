// SPDX-License-Identifier: MIT
// Reading placement.json (format tierwise-placement v1, advisor/FORMATS.md)
// into the sites the rewriter works on: tier and symbolized frames.
#pragma once

#include "llvm/Support/Error.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tierwise {

/// One symbolized frame of a site's stack, innermost first.
struct Frame {
  std::string Function;    ///< demangled name, "??" when unknown
  std::string File;        ///< as the debug info spells it (may be relative)
  unsigned Line = 0;       ///< 0: unknown
  unsigned Column = 0;     ///< 0: unknown
  bool Inlined = false;    ///< inlined into the next (deeper) frame
  std::string str() const; ///< "function file:line[:col]"
};

/// One entry of placement.json "sites".
struct Site {
  unsigned Index = 0;        ///< position in "sites" (for messages)
  std::string Stack;         ///< module+offset frames as in sites.csv
  std::string Location;      ///< "function file:line", may be empty
  std::string Tier;          ///< "dram", "pmem", ...
  int64_t DramBytes = 0;     ///< "dram_bytes": a DRAM head (malloc/calloc)
  std::vector<Frame> Frames; ///< from "frames", else parsed from "location"
  bool FromStack = false;    ///< Frames are the symbolized stack ("frames")
  std::string name() const;  ///< "site N (location)" for messages
};

struct Placement {
  std::string DefaultTier = "dram";
  std::vector<Site> Sites;
};

/// Reads and validates \p Path; the error names the file, field and value.
llvm::Expected<Placement> readPlacement(const std::string &Path);

/// Parses "function file:line[:col]".
std::optional<Frame> parseLocation(const std::string &Location);
/// The frames a sites.csv `location` gives, innermost first: one, or two
/// for "function file:line (via FILE:LINE)" (the shared innermost frame,
/// then the caller's); none when it does not parse.
std::vector<Frame> parseLocationFrames(const std::string &Location);

/// The tierwise.h spelling of a tier for C calls ("TW_TIER_PMEM") and for
/// placement new ("tw::pmem"); std::nullopt for tiers tierwise.h lacks.
std::optional<std::string> tierEnumName(const std::string &Tier);
std::optional<std::string> tierTagName(const std::string &Tier);

/// The unqualified name of a demangled frame function, for comparing with
/// the function that encloses a source line: "ns::Graph<int>::build(int)
/// const" -> "build", "main._omp_fn.0" -> "main". Empty when unknown.
std::string baseFunctionName(const std::string &Demangled);

} // namespace tierwise
