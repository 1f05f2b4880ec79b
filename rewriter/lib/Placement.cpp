// SPDX-License-Identifier: MIT
// Reading placement.json for the rewriter; see Placement.h.
#include "Placement.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"

#include <cctype>

using namespace llvm;

namespace tierwise {

std::string Frame::str() const {
  std::string S = Function + " " + File + ":" + std::to_string(Line);
  if (Column)
    S += ":" + std::to_string(Column);
  return S;
}

std::string Site::name() const {
  std::string Where = Location;
  if (Where.empty() && !Frames.empty())
    Where = Frames.front().str();
  if (Where.empty())
    Where = Stack;
  return "site " + std::to_string(Index) + " (" + Where + ")";
}

std::vector<Frame> parseLocationFrames(const std::string &Location) {
  // "function file:line (via FILE:LINE)": the innermost user frame (file
  // basename and line, function unknown) is shared, as behind a wrapper,
  // and the named frame is its caller's (advisor/FORMATS.md). Outer frames
  // that tell alike sites apart follow as " <- FILE:LINE[:COL][ #K]": not
  // frames of the allocation's own, dropped here.
  StringRef L = StringRef(Location).trim();
  L = L.take_front(L.find(" <- "));
  std::vector<Frame> Out;
  if (L.ends_with(")")) {
    size_t Via = L.rfind(" (via ");
    if (Via != StringRef::npos) {
      if (auto Inner = parseLocation(
              "?? " + L.slice(Via + 6, L.size() - 1).trim().str())) {
        Inner->Function.clear();
        Inner->Inlined = true;
        Out.push_back(*Inner);
      }
      L = L.take_front(Via);
    }
  }
  if (auto F = parseLocation(L.str()))
    Out.push_back(*F);
  else
    Out.clear();
  return Out;
}

std::optional<Frame> parseLocation(const std::string &Location) {
  StringRef L = StringRef(Location).trim();
  size_t Space = L.rfind(' ');
  if (Space == StringRef::npos)
    return std::nullopt;
  Frame F;
  F.Function = L.substr(0, Space).trim().str();
  StringRef Pos = L.substr(Space + 1);
  // file:line or file:line:col; the file itself never ends in ":digits".
  auto [Rest, Last] = Pos.rsplit(':');
  unsigned N = 0;
  if (Rest.empty() || Last.getAsInteger(10, N))
    return std::nullopt;
  auto [File, Mid] = Rest.rsplit(':');
  unsigned M = 0;
  if (!Mid.empty() && !File.empty() && !Mid.getAsInteger(10, M)) {
    F.File = File.str();
    F.Line = M;
    F.Column = N;
  } else {
    F.File = Rest.str();
    F.Line = N;
  }
  if (F.File == "??" || F.Line == 0)
    return std::nullopt;
  return F;
}

// numa:N for the N tierwise.h has (TW_TIER_NUMA(0) .. TW_TIER_NUMA(15)),
// written as FORMATS.md "Tier names" says: decimal, no sign or leading zero.
static std::optional<unsigned> numaNode(StringRef Tier) {
  unsigned N;
  if (Tier.consume_front("numa:") && !Tier.getAsInteger(10, N) && N < 16 &&
      Tier == std::to_string(N))
    return N;
  return std::nullopt;
}

std::optional<std::string> tierEnumName(const std::string &Tier) {
  if (Tier == "dram" || Tier == "pmem" || Tier == "kmem" || Tier == "hbw")
    return "TW_TIER_" + StringRef(Tier).upper();
  if (auto N = numaNode(Tier))
    return "TW_TIER_NUMA(" + std::to_string(*N) + ")";
  return std::nullopt;
}

std::optional<std::string> tierTagName(const std::string &Tier) {
  if (auto N = numaNode(Tier))
    return "tw::tier_tag{TW_TIER_NUMA(" + std::to_string(*N) + ")}";
  if (tierEnumName(Tier))
    return "tw::" + Tier;
  return std::nullopt;
}

// Drops a trailing balanced "(...)" group and cv/ref qualifiers.
static StringRef dropParameters(StringRef S) {
  S = S.trim();
  for (StringRef Q : {" const", " volatile", " &&", " &"})
    if (S.ends_with(Q))
      S = S.drop_back(Q.size()).trim();
  if (!S.ends_with(")"))
    return S;
  int Depth = 0;
  for (size_t I = S.size(); I-- > 0;) {
    if (S[I] == ')')
      ++Depth;
    else if (S[I] == '(' && --Depth == 0) {
      StringRef Head = S.substr(0, I);
      // "operator()" keeps its own parentheses.
      if (Head.ends_with("operator"))
        return S.substr(0, I + 2 <= S.size() ? I + 2 : S.size());
      return Head;
    }
  }
  return S;
}

std::string baseFunctionName(const std::string &Demangled) {
  StringRef S = dropParameters(Demangled);
  if (S.empty() || S == "??")
    return "";
  // Positions outside <...>, (...) and {...}: the last "::" before the name,
  // a space ending a return type ("double* make<double>"), "operator".
  int Depth = 0;
  size_t Start = 0;
  for (size_t I = 0; I < S.size(); ++I) {
    char C = S[I];
    if (C == '<' || C == '(' || C == '{')
      ++Depth;
    else if ((C == '>' || C == ')' || C == '}') && Depth > 0)
      --Depth;
    else if (Depth == 0 && S.substr(I).starts_with("operator") &&
             (I == 0 || !isalnum(S[I - 1])))
      return S.substr(I).str();
    else if (Depth == 0 && C == ':' && I + 1 < S.size() && S[I + 1] == ':')
      Start = ++I + 1;
    else if (Depth == 0 && C == ' ')
      Start = I + 1;
  }
  StringRef Base = S.substr(Start).ltrim("*& ");
  Base = Base.take_until([](char C) { return C == '<'; });
  // GCC clones and outlined regions: main._omp_fn.0, f.isra.0, f.part.1
  Base = Base.take_until([](char C) { return C == '.'; });
  return Base.str();
}

static Error fieldError(const std::string &Path, const std::string &What) {
  return createStringError(inconvertibleErrorCode(), "%s: %s", Path.c_str(),
                           What.c_str());
}

static Expected<std::vector<Frame>>
readFrames(const std::string &Path, unsigned I, const json::Array &Arr) {
  std::vector<Frame> Out;
  for (size_t J = 0; J < Arr.size(); ++J) {
    const json::Object *O = Arr[J].getAsObject();
    std::string Field =
        "sites[" + std::to_string(I) + "].frames[" + std::to_string(J) + "]";
    if (!O)
      return fieldError(Path, Field + " is not an object");
    Frame F;
    if (auto Fn = O->getString("function"))
      F.Function = Fn->str();
    if (auto File = O->getString("file"))
      F.File = File->str();
    if (auto Line = O->getInteger("line"))
      F.Line = *Line > 0 ? unsigned(*Line) : 0;
    if (auto Col = O->getInteger("column"))
      F.Column = *Col > 0 ? unsigned(*Col) : 0;
    if (auto Inl = O->getBoolean("inlined"))
      F.Inlined = *Inl;
    Out.push_back(std::move(F));
  }
  return Out;
}

Expected<Placement> readPlacement(const std::string &Path) {
  auto Buf = MemoryBuffer::getFile(Path);
  if (!Buf)
    return fieldError(Path,
                      "cannot read placement: " + Buf.getError().message());
  auto Root = json::parse((*Buf)->getBuffer());
  if (!Root)
    return fieldError(Path, "not valid JSON: " + toString(Root.takeError()));
  const json::Object *O = Root->getAsObject();
  if (!O)
    return fieldError(Path, "top level is not an object");
  auto Format = O->getString("format");
  if (!Format || *Format != "tierwise-placement")
    return fieldError(Path, "field 'format' must be \"tierwise-placement\" "
                            "(is this a placement from `tierwise advise`?)");
  auto Version = O->getInteger("version");
  if (!Version || *Version != 1)
    return fieldError(Path, "field 'version' must be 1 (this rewriter reads "
                            "tierwise-placement v1)");
  Placement P;
  auto Default = O->getString("default_tier");
  if (!Default)
    return fieldError(Path, "missing string field 'default_tier'");
  P.DefaultTier = Default->str();
  const json::Array *Sites = O->getArray("sites");
  if (!Sites)
    return fieldError(Path, "missing array field 'sites'");
  for (size_t I = 0; I < Sites->size(); ++I) {
    const json::Object *S = (*Sites)[I].getAsObject();
    std::string Field = "sites[" + std::to_string(I) + "]";
    if (!S)
      return fieldError(Path, Field + " is not an object");
    Site Out;
    Out.Index = I;
    auto Stack = S->getString("stack");
    auto Tier = S->getString("tier");
    if (!Stack || !Tier)
      return fieldError(Path,
                        Field + " needs string fields 'stack' and 'tier'");
    Out.Stack = Stack->str();
    Out.Tier = Tier->str();
    if (auto Loc = S->getString("location"))
      Out.Location = Loc->str();
    if (auto D = S->getInteger("dram_bytes"))
      Out.DramBytes = *D;
    if (const json::Array *Fr = S->getArray("frames")) {
      auto Frames = readFrames(Path, I, *Fr);
      if (!Frames)
        return Frames.takeError();
      Out.Frames = std::move(*Frames);
      Out.FromStack = true;
    } else {
      Out.Frames = parseLocationFrames(Out.Location);
    }
    P.Sites.push_back(std::move(Out));
  }
  return P;
}

} // namespace tierwise
