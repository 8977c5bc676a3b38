//===- Sizes.h - `kiln inspect --sizes` -------------------------*- C++ -*-===//
#ifndef KILN_TOOLS_KILN_RUN_SIZES_H
#define KILN_TOOLS_KILN_RUN_SIZES_H

#include "kiln/model_abi.h"

#include <string>

namespace kiln_run {

/// Prints where the bytes of the compiled model at `path` go: its sections,
/// code (per kernel, named by the ONNX nodes it computes, from the
/// descriptor's kernel table and the file's symbol table), weights (the
/// constants in read-only data) and the scratch arena. `desc` is the opened
/// model's descriptor (its address locates the file's symbols in memory).
/// An artifact that is not ELF gets the descriptor's figures only.
void printSizes(const std::string &path, const kiln_model_desc *desc);

} // namespace kiln_run

#endif // KILN_TOOLS_KILN_RUN_SIZES_H
