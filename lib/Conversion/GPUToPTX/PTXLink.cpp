//===- PTXLink.cpp - join PTX modules compiled apart ----------------------===//
//
// kgraph-serialize-kernels compiles each kernel module on its own thread;
// the launch plan wants one PTX module. PTX has no linker short of ptxas
// and the driver's, so the modules are joined as text: one header, every
// top-level statement once. The statements are found by a scanner that
// knows comments, strings and braces, which is all PTX's module level has.
//
//===----------------------------------------------------------------------===//

#include "kgraph/Conversion/GPUToPTX/GPUToPTX.h"

#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/Twine.h"

#include <algorithm>
#include <set>

using namespace mlir;
using namespace kgraph;

namespace {
/// One top-level PTX statement: a directive ending in `;` or a function with
/// its body.
struct Statement {
  std::string text;
  /// The symbol it declares or defines, empty for none.
  std::string name;
  /// Declared .visible, .extern, .weak or .common: its name is seen outside
  /// the module and cannot be renamed.
  bool external = false;
};

struct ParsedModule {
  /// Comments before the header, kept for the first module.
  std::string preamble;
  /// The .version, .target and .address_size lines.
  SmallVector<std::string> header;
  SmallVector<Statement> statements;
};
} // namespace

static bool isIdentifierChar(char c) {
  return llvm::isAlnum(c) || c == '_' || c == '$';
}

/// The symbol a statement declares and whether it is externally visible:
/// the first identifier after its directives, skipping a parenthesized
/// return list (`.func (.param .b32 r) name(...)`).
static void nameStatement(Statement &s) {
  StringRef t = s.text;
  size_t i = 0;
  while (i < t.size()) {
    char c = t[i];
    if (llvm::isSpace(c) || c == ',') {
      ++i;
    } else if (c == '.') {
      size_t e = i + 1;
      while (e < t.size() && isIdentifierChar(t[e]))
        ++e;
      StringRef directive = t.slice(i, e);
      if (directive == ".visible" || directive == ".extern" ||
          directive == ".weak" || directive == ".common")
        s.external = true;
      i = e;
    } else if (c == '(') {
      int depth = 0;
      for (; i < t.size(); ++i) {
        depth += t[i] == '(' ? 1 : t[i] == ')' ? -1 : 0;
        if (depth == 0)
          break;
      }
      ++i;
    } else if (llvm::isDigit(c)) {
      while (i < t.size() && isIdentifierChar(t[i]))
        ++i;
    } else if (isIdentifierChar(c)) {
      size_t e = i;
      while (e < t.size() && isIdentifierChar(t[e]))
        ++e;
      s.name = t.slice(i, e).str();
      return;
    } else {
      return;
    }
  }
}

/// Splits `text` into its header and top-level statements.
static LogicalResult parseModule(StringRef text, ParsedModule &module,
                                 std::string &error) {
  std::string current;
  int depth = 0;
  bool seenCode = false;
  auto blank = [](StringRef s) { return s.trim().empty(); };
  auto finish = [&]() {
    Statement s;
    s.text = StringRef(current).trim().str();
    current.clear();
    nameStatement(s);
    module.statements.push_back(std::move(s));
  };
  size_t i = 0, n = text.size();
  while (i < n) {
    char c = text[i];
    // Comments: kept inside a statement, dropped between statements (but
    // the first module's leading ones, its preamble).
    if (c == '/' && i + 1 < n && (text[i + 1] == '/' || text[i + 1] == '*')) {
      size_t e = text[i + 1] == '/' ? text.find('\n', i) : text.find("*/", i + 2);
      if (e == StringRef::npos) {
        if (text[i + 1] == '*') {
          error = "unterminated /* comment in PTX";
          return failure();
        }
        e = n;
      } else if (text[i + 1] == '*') {
        e += 2;
      }
      if (depth > 0 || !blank(current))
        current += text.slice(i, e).str();
      else if (!seenCode)
        module.preamble += text.slice(i, e).str() + "\n";
      i = e;
      continue;
    }
    // Header directives end at their line.
    if (c == '.' && depth == 0 && blank(current)) {
      StringRef rest = text.substr(i);
      auto isDirective = [&](StringRef directive) {
        return rest.starts_with(directive) &&
               (rest.size() == directive.size() ||
                !isIdentifierChar(rest[directive.size()]));
      };
      if (isDirective(".version") || isDirective(".target") ||
          isDirective(".address_size")) {
        size_t e = std::min(text.find('\n', i), n);
        module.header.push_back(text.slice(i, e).trim().str());
        current.clear();
        seenCode = true;
        i = e;
        continue;
      }
      if (isDirective(".file") || isDirective(".section")) {
        error = "cannot join PTX with debug information (.file/.section)";
        return failure();
      }
    }
    if (c == '"') {
      size_t e = text.find('"', i + 1);
      if (e == StringRef::npos) {
        error = "unterminated string in PTX";
        return failure();
      }
      current += text.slice(i, e + 1).str();
      i = e + 1;
      continue;
    }
    if (!llvm::isSpace(c))
      seenCode = true;
    current.push_back(c);
    ++i;
    if (c == '{') {
      ++depth;
    } else if (c == '}') {
      if (depth == 0) {
        error = "unbalanced '}' in PTX";
        return failure();
      }
      // A function body ends its statement; an initializer's closing brace
      // is followed by the statement's ';'.
      if (--depth == 0) {
        size_t j = i;
        while (j < n && llvm::isSpace(text[j]))
          ++j;
        if (j >= n || text[j] != ';')
          finish();
      }
    } else if (c == ';' && depth == 0) {
      finish();
    }
  }
  if (depth != 0 || !blank(current)) {
    error = "PTX ends inside a statement";
    return failure();
  }
  if (module.header.empty()) {
    error = "PTX module without a .version/.target header";
    return failure();
  }
  return success();
}

/// `text` with every identifier in `renames` replaced. Tokens are runs of
/// identifier characters, '%' and '.', so registers (%r1) and instruction
/// suffixes (ld.shared.u32) never match a symbol.
static std::string applyRenames(StringRef text,
                                const llvm::StringMap<std::string> &renames) {
  if (renames.empty())
    return text.str();
  std::string out;
  out.reserve(text.size());
  size_t i = 0;
  while (i < text.size()) {
    char c = text[i];
    if (!isIdentifierChar(c) && c != '%' && c != '.') {
      out.push_back(c);
      ++i;
      continue;
    }
    size_t e = i;
    while (e < text.size() &&
           (isIdentifierChar(text[e]) || text[e] == '%' || text[e] == '.'))
      ++e;
    StringRef token = text.slice(i, e);
    auto it = renames.find(token);
    out += it == renames.end() ? token.str() : it->second;
    i = e;
  }
  return out;
}

LogicalResult kgraph::linkPTX(ArrayRef<StringRef> modules, std::string &linked,
                              std::string &error) {
  if (modules.empty()) {
    error = "no PTX modules to link";
    return failure();
  }
  // One module is already linked: keep it byte for byte.
  if (modules.size() == 1) {
    linked = modules.front().str();
    return success();
  }
  SmallVector<ParsedModule> parsed(modules.size());
  for (auto [i, text] : llvm::enumerate(modules)) {
    std::string why;
    if (failed(parseModule(text, parsed[i], why))) {
      error = (llvm::Twine("PTX module #") + llvm::Twine(i) + ": " + why).str();
      return failure();
    }
    if (parsed[i].header != parsed.front().header) {
      error = (llvm::Twine("PTX module #") + llvm::Twine(i) +
               " has another header than module #0 (" +
               llvm::join(parsed[i].header, ", ") + " against " +
               llvm::join(parsed.front().header, ", ") + ")")
                  .str();
      return failure();
    }
  }

  // What the output defines: each name's statements, in order.
  llvm::StringMap<SmallVector<std::string>> defined;
  std::set<std::string> unnamed;
  std::string out = parsed.front().preamble;
  if (!out.empty())
    out += "\n";
  out += llvm::join(parsed.front().header, "\n") + "\n";
  for (auto [index, module] : llvm::enumerate(parsed)) {
    // This module's names and their statements' text.
    llvm::MapVector<StringRef, SmallVector<const Statement *>> mine;
    for (const Statement &s : module.statements)
      if (!s.name.empty())
        mine[s.name].push_back(&s);
    // Rename module-local names defined differently before; a rename can
    // change a statement that uses the renamed name, so repeat until none.
    llvm::StringMap<std::string> renames;
    for (bool changed = true; changed;) {
      changed = false;
      for (auto &[name, statements] : mine) {
        if (renames.count(name))
          continue;
        auto it = defined.find(name);
        if (it == defined.end())
          continue;
        SmallVector<std::string> texts;
        for (const Statement *s : statements)
          texts.push_back(applyRenames(s->text, renames));
        if (texts == it->second)
          continue;
        if (llvm::any_of(statements,
                         [](const Statement *s) { return s->external; })) {
          error = (llvm::Twine("PTX modules define the externally visible '") +
                   name + "' differently")
                      .str();
          return failure();
        }
        std::string fresh;
        for (unsigned k = index;; ++k) {
          fresh = (name + "_" + llvm::Twine(k)).str();
          if (!defined.count(fresh) && !mine.count(fresh))
            break;
        }
        renames[name] = fresh;
        changed = true;
      }
    }
    // Names the output already defines with the same text (the loop above
    // renamed every other one): this module's statements of them are left
    // out.
    llvm::StringSet<> shared;
    for (auto &entry : mine)
      if (!renames.count(entry.first) && defined.count(entry.first))
        shared.insert(entry.first);
    for (const Statement &s : module.statements) {
      if (shared.count(s.name))
        continue;
      std::string text = applyRenames(s.text, renames);
      if (s.name.empty() && !unnamed.insert(text).second)
        continue;
      out.append("\n").append(text).append("\n");
      if (!s.name.empty()) {
        auto r = renames.find(s.name);
        defined[r == renames.end() ? s.name : r->second].push_back(
            std::move(text));
      }
    }
  }
  linked = std::move(out);
  return success();
}
