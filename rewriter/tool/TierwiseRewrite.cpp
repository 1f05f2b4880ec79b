// SPDX-License-Identifier: MIT
// tierwise-rewrite: rewrites the allocation sites a placement puts outside
// the default tier into tierwise.h calls (tw_malloc(TW_TIER_PMEM, n),
// new (tw::pmem) T[n]) and prints the change as a unified diff.
// The work is in rewriter/lib; this is argument handling only.
#include "Rewrite.h"

#include "clang/Tooling/CommonOptionsParser.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/raw_ostream.h"

using namespace llvm;

static cl::OptionCategory Category("tierwise-rewrite options");
static cl::opt<std::string>
    PlacementPath("placement", cl::desc("placement.json from tierwise advise"),
                  cl::value_desc("FILE"), cl::cat(Category));
static cl::opt<bool> InPlace("i", cl::desc("edit the files in place"),
                             cl::cat(Category));
static cl::opt<std::string>
    PatchPath("o", cl::desc("write the unified diff to PATCH (default: stdout)"),
              cl::value_desc("PATCH"), cl::cat(Category));

static cl::extrahelp MoreHelp(R"(
For every placement site whose tier differs from default_tier, finds the
allocation expression at its location (function file:line, or the site's
symbolized frames) and rewrites it to libtierwise's API. Frees need no change.
Sites that cannot be rewritten are listed on stderr with the reason.
Exit status: 0 all placed sites rewritten, 1 some were not, 2 bad arguments.
Example: tierwise-rewrite --placement placement.json -p build src/bfs.cc
)");

int main(int argc, const char **argv) {
  auto Parser = clang::tooling::CommonOptionsParser::create(
      argc, argv, Category, cl::OneOrMore,
      "tierwise-rewrite: place allocation sites by rewriting the source");
  if (!Parser) {
    std::string Msg = toString(Parser.takeError());
    StringRef First = StringRef(Msg).trim().split('\n').first;
    errs() << "tierwise-rewrite: error: " << First
           << (First.contains("compilation database")
                   ? " (give -p BUILD_DIR with compile_commands.json, or "
                     "compiler flags after --)"
                   : "")
           << "\n";
    return 2;
  }
  if (PlacementPath.empty()) {
    errs() << "tierwise-rewrite: error: --placement FILE is required (the "
              "placement.json to apply)\n";
    return 2;
  }
  if (InPlace && !PatchPath.empty()) {
    errs() << "tierwise-rewrite: error: -i and -o are exclusive: edit in "
              "place or write a patch\n";
    return 2;
  }
  tierwise::RewriteOptions Opts;
  Opts.PlacementPath = PlacementPath;
  Opts.PatchPath = PatchPath;
  Opts.InPlace = InPlace;
  Opts.ResourceDir = TW_CLANG_RESOURCE_DIR;
  if (StringRef(TW_REWRITE_INCLUDE_DIR) != "")
    Opts.ExtraIncludeDirs.push_back(TW_REWRITE_INCLUDE_DIR);
  return tierwise::runRewrite(Opts, Parser->getCompilations(),
                              Parser->getSourcePathList(), outs(), errs());
}
