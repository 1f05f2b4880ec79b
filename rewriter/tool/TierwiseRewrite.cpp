// SPDX-License-Identifier: MIT
// tierwise-rewrite: rewrites the allocation sites a placement puts outside
// the default tier into tierwise.h calls (tw_malloc(TW_TIER_PMEM, n),
// new (tw::pmem) T[n]) and prints the change as a unified diff.
// The work is in rewriter/lib; this is argument handling only.
#include "Rewrite.h"

#include "clang/Tooling/CommonOptionsParser.h"
#include "clang/Tooling/CompilationDatabase.h"
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
    PatchPath("o",
              cl::desc("write the unified diff to PATCH (default: stdout)"),
              cl::value_desc("PATCH"), cl::cat(Category));

static cl::opt<std::string> Root(
    "root",
    cl::desc("name the patch's files relative to DIR (default: the git work "
             "tree of the first file, else the compile database's directory "
             "when it holds the files, else the deepest directory holding "
             "them; never the working directory)"),
    cl::value_desc("DIR"), cl::cat(Category));
// `tierwise rewrite` gives the tool a narrowed copy of the compile database
// (advisor/tierwise/compiledb.py) and the directory the user gave here, for
// the patch's root.
static cl::opt<std::string> DatabaseDir(
    "compile-db-dir",
    cl::desc("the compile database's directory for the patch's root "
             "(default: -p's)"),
    cl::value_desc("DIR"), cl::cat(Category), cl::Hidden);

static cl::extrahelp MoreHelp(R"(
For every placement site whose tier differs from default_tier, finds the
allocation expression at its location (function file:line, or the site's
symbolized frames) and rewrites it to libtierwise's API. Frees need no change.
Sites that cannot be rewritten are listed on stderr with the reason.
Exit status: 0 all placed sites rewritten, 1 some were not, 2 bad arguments.
Example: tierwise-rewrite --placement placement.json -p build src/bfs.cc
)");

// CommonOptionsParser falls back to "running without flags" (after several
// lines of noise) when it finds no compilation database; for a rewrite that
// is a setup error, so check first and say so on one line.
static std::string checkCompilationDatabase(int argc, const char **argv,
                                            std::string &BuildPath) {
  std::string FirstFile;
  for (int I = 1; I < argc; ++I) {
    StringRef A = argv[I];
    if (A == "--")
      return "";
    if ((A == "-p" || A == "--p") && I + 1 < argc)
      BuildPath = argv[++I];
    else if (A.consume_front("-p=") || A.consume_front("--p="))
      BuildPath = A.str();
    else if ((A == "--placement" || A == "-placement" || A == "-o" ||
              A == "--extra-arg" || A == "--extra-arg-before" ||
              A == "--root" || A == "-root" || A == "--compile-db-dir" ||
              A == "-compile-db-dir") &&
             I + 1 < argc)
      ++I;
    else if (!A.starts_with("-") && FirstFile.empty())
      FirstFile = A.str();
  }
  std::string Err;
  if (!BuildPath.empty()) {
    if (!clang::tooling::CompilationDatabase::loadFromDirectory(BuildPath, Err))
      return "-p " + BuildPath +
             ": no compile_commands.json there (configure with "
             "-DCMAKE_EXPORT_COMPILE_COMMANDS=ON, or give flags after --)";
  } else if (!FirstFile.empty() &&
             !clang::tooling::CompilationDatabase::autoDetectFromSource(
                 FirstFile, Err)) {
    return "no compilation database for " + FirstFile +
           ": give -p BUILD_DIR (with compile_commands.json) or compiler "
           "flags after --";
  }
  return "";
}

int main(int argc, const char **argv) {
  std::string BuildPath;
  std::string DBError = checkCompilationDatabase(argc, argv, BuildPath);
  if (!DBError.empty()) {
    errs() << "tierwise-rewrite: error: " << DBError << "\n";
    return 2;
  }
  auto Parser = clang::tooling::CommonOptionsParser::create(
      argc, argv, Category, cl::OneOrMore,
      "tierwise-rewrite: place allocation sites by rewriting the source");
  if (!Parser) {
    std::string Msg = toString(Parser.takeError());
    StringRef First = StringRef(Msg).trim().split('\n').first;
    First.consume_front("tierwise-rewrite: ");
    if (First.contains("Not enough positional"))
      First = "no FILES given: tierwise-rewrite --placement P -p BUILD_DIR "
              "FILES...";
    errs() << "tierwise-rewrite: error: " << First << "\n";
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
  Opts.Root = Root;
  Opts.DatabaseDir = DatabaseDir.empty() ? BuildPath : DatabaseDir;
  Opts.ResourceDir = TW_CLANG_RESOURCE_DIR;
  return tierwise::runRewrite(Opts, Parser->getCompilations(),
                              Parser->getSourcePathList(), outs(), errs());
}
