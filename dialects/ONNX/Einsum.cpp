//===- Einsum.cpp - Parsing an Einsum equation ----------------------------===//

#include "dialects/ONNX/Einsum.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVectorExtras.h"
#include "llvm/ADT/StringExtras.h"

#include <algorithm>
#include <map>

using namespace mlir;

namespace kiln::onnx {
namespace {

/// A term of the equation: its letters in order, with the ellipsis (at most
/// one) written as '.'.
FailureOr<std::string> parseTerm(StringRef term, std::string &error) {
  std::string items;
  bool ellipsis = false;
  for (size_t i = 0; i < term.size(); ++i) {
    char c = term[i];
    if (llvm::isAlpha(c)) {
      items += c;
      continue;
    }
    if (term.substr(i).starts_with("...")) {
      if (ellipsis) {
        error = "term '" + term.str() + "' has more than one ellipsis";
        return failure();
      }
      ellipsis = true;
      items += '.';
      i += 2;
      continue;
    }
    error = "unexpected character '" + std::string(1, c) + "' in term '" +
            term.str() + "' (letters and '...' only)";
    return failure();
  }
  return items;
}

} // namespace

SmallVector<int64_t> EinsumEquation::outputShape() const {
  return llvm::map_to_vector(output, [&](int64_t l) { return sizes[l]; });
}

bool EinsumEquation::needsBroadcast(unsigned i) const {
  for (auto [label, size] : llvm::zip_equal(inputs[i], inputShapes[i]))
    if (size != sizes[label])
      return true;
  return false;
}

bool EinsumEquation::hasRepeatedLabel(unsigned i) const {
  SmallVector<int64_t> labels(inputs[i]);
  llvm::sort(labels);
  return std::adjacent_find(labels.begin(), labels.end()) != labels.end();
}

bool EinsumEquation::inOutput(int64_t label) const {
  return llvm::is_contained(output, label);
}

FailureOr<EinsumEquation>
parseEinsumEquation(StringRef equation, ArrayRef<ArrayRef<int64_t>> shapes,
                    std::string &error) {
  std::string eq;
  for (char c : equation)
    if (c != ' ')
      eq += c;
  StringRef text(eq);
  size_t arrow = text.find("->");
  StringRef lhs = text.substr(0, arrow);
  std::optional<StringRef> rhs;
  if (arrow != StringRef::npos) {
    rhs = text.substr(arrow + 2);
    if (rhs->contains("->") || rhs->contains(',')) {
      error = "equation '" + equation.str() + "' has more than one output term";
      return failure();
    }
  }
  SmallVector<StringRef> termTexts;
  lhs.split(termTexts, ',', /*MaxSplit=*/-1, /*KeepEmpty=*/true);
  if (termTexts.size() != shapes.size()) {
    error = "equation '" + equation.str() + "' has " +
            std::to_string(termTexts.size()) + " input terms, the node has " +
            std::to_string(shapes.size()) + " inputs";
    return failure();
  }

  SmallVector<std::string> terms;
  SmallVector<int64_t> ellipsisRanks;
  EinsumEquation result;
  for (auto [i, termText] : llvm::enumerate(termTexts)) {
    FailureOr<std::string> term = parseTerm(termText, error);
    if (failed(term))
      return failure();
    bool hasEllipsis = llvm::is_contained(*term, '.');
    int64_t letters = static_cast<int64_t>(term->size()) - (hasEllipsis ? 1 : 0);
    int64_t rank = static_cast<int64_t>(shapes[i].size());
    int64_t ellipsisRank = rank - letters;
    if (ellipsisRank < 0 || (!hasEllipsis && ellipsisRank != 0)) {
      error = "term '" + termText.str() + "' has " + std::to_string(letters) +
              " letters" + (hasEllipsis ? " and an ellipsis" : "") +
              ", but input " + std::to_string(i) + " has rank " +
              std::to_string(rank);
      return failure();
    }
    result.ellipsisRank = std::max(result.ellipsisRank, ellipsisRank);
    terms.push_back(*term);
    ellipsisRanks.push_back(ellipsisRank);
  }

  // Labels: the ellipsis dims first, then the letters as they appear.
  std::map<char, int64_t> letterLabel;
  std::map<char, int> letterCount;
  result.sizes.assign(result.ellipsisRank, 1);
  result.letters.assign(result.ellipsisRank, '.');
  auto merge = [&](int64_t label, int64_t size) -> LogicalResult {
    int64_t &known = result.sizes[label];
    if (known == -1 || known == 1)
      known = size;
    else if (size != known && size != 1) {
      std::string what =
          result.letters[label] == '.'
              ? std::string("an ellipsis dimension")
              : "label '" + std::string(1, result.letters[label]) + "'";
      error = what + " has sizes " + std::to_string(known) + " and " +
              std::to_string(size);
      return failure();
    }
    return success();
  };
  for (auto [i, term] : llvm::enumerate(terms)) {
    SmallVector<int64_t> labels;
    for (char c : term) {
      if (c == '.') {
        for (int64_t e = result.ellipsisRank - ellipsisRanks[i];
             e < result.ellipsisRank; ++e)
          labels.push_back(e);
        continue;
      }
      ++letterCount[c];
      auto [it, inserted] = letterLabel.try_emplace(c, result.numLabels());
      if (inserted) {
        result.sizes.push_back(-1);
        result.letters.push_back(c);
      }
      labels.push_back(it->second);
    }
    for (auto [label, size] : llvm::zip_equal(labels, shapes[i])) {
      if (size < 0) {
        error = "input " + std::to_string(i) + " has a dynamic dimension";
        return failure();
      }
      if (failed(merge(label, size)))
        return failure();
    }
    // A repeated label (a diagonal) reads the same index of each of its
    // dims: they must have one size.
    for (auto [a, la] : llvm::enumerate(labels))
      for (auto [b, lb] : llvm::enumerate(labels))
        if (a < b && la == lb && shapes[i][a] != shapes[i][b]) {
          error = "label '" + std::string(1, result.letters[la]) +
                  "' repeats in input " + std::to_string(i) +
                  " with sizes " + std::to_string(shapes[i][a]) + " and " +
                  std::to_string(shapes[i][b]);
          return failure();
        }
    result.inputs.push_back(std::move(labels));
    result.inputShapes.emplace_back(shapes[i]);
  }

  if (rhs) {
    FailureOr<std::string> term = parseTerm(*rhs, error);
    if (failed(term))
      return failure();
    for (char c : *term) {
      if (c == '.') {
        for (int64_t e = 0; e < result.ellipsisRank; ++e)
          result.output.push_back(e);
        continue;
      }
      auto it = letterLabel.find(c);
      if (it == letterLabel.end()) {
        error = "output label '" + std::string(1, c) + "' is in no input term";
        return failure();
      }
      if (result.inOutput(it->second)) {
        error = "output label '" + std::string(1, c) + "' appears twice";
        return failure();
      }
      result.output.push_back(it->second);
    }
  } else {
    // Implicit output: the ellipsis dims, then the letters that appear once,
    // in ASCII order (std::map's order).
    for (int64_t e = 0; e < result.ellipsisRank; ++e)
      result.output.push_back(e);
    for (auto [c, count] : letterCount)
      if (count == 1)
        result.output.push_back(letterLabel[c]);
  }
  return result;
}

} // namespace kiln::onnx
