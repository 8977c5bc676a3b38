//===- ExternalData.cpp - Safe reading of external tensor data ------------===//

#include "compiler/import/ExternalData.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <onnx/onnx_pb.h>

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace mlir;

namespace {
/// Closes a file descriptor on scope exit.
struct FileCloser {
  int fd = -1;
  ~FileCloser() {
    if (fd >= 0)
      ::close(fd);
  }
};
} // namespace

static bool parseUInt64(llvm::StringRef text, uint64_t &value) {
  // Decimal only; getAsInteger rejects empty strings, signs and trailing garbage.
  return !text.empty() && llvm::all_of(text, [](char c) { return llvm::isDigit(c); }) &&
         !text.getAsInteger(10, value);
}

LogicalResult kiln::import::readExternalData(
    const onnx::TensorProto &tensor, llvm::StringRef modelDir,
    llvm::MutableArrayRef<char> dest,
    llvm::function_ref<InFlightDiagnostic()> emitError) {
  std::string location;
  bool hasLocation = false, hasOffset = false, hasLength = false;
  uint64_t offset = 0, length = 0;
  for (const onnx::StringStringEntryProto &entry : tensor.external_data()) {
    if (entry.key() == "location") {
      location = entry.value();
      hasLocation = true;
    } else if (entry.key() == "offset") {
      if (!parseUInt64(entry.value(), offset))
        return emitError() << "external data offset '" << entry.value()
                           << "' is not a non-negative integer";
      hasOffset = true;
    } else if (entry.key() == "length") {
      if (!parseUInt64(entry.value(), length))
        return emitError() << "external data length '" << entry.value()
                           << "' is not a non-negative integer";
      hasLength = true;
    }
  }
  (void)hasOffset;
  if (!hasLocation || location.empty())
    return emitError() << "external data has no (or an empty) 'location'";

  // Path checks on the text first: they give the clearest messages.
  if (location.find('\0') != std::string::npos)
    return emitError() << "external data path contains a NUL byte";
  if (llvm::sys::path::is_absolute(location, llvm::sys::path::Style::posix) ||
      llvm::sys::path::is_absolute(location, llvm::sys::path::Style::windows))
    return emitError() << "external data path '" << location
                       << "' is absolute; it must be relative to the model's folder";
  for (llvm::StringRef component :
       llvm::make_range(llvm::sys::path::begin(location, llvm::sys::path::Style::posix),
                        llvm::sys::path::end(location))) {
    if (component == "..")
      return emitError() << "external data path '" << location
                         << "' has a '..' component; it must stay inside the model's "
                            "folder";
  }
  if (llvm::StringRef(location).contains('\\'))
    return emitError() << "external data path '" << location
                       << "' contains a backslash; use '/' separators";

  llvm::SmallString<256> joined(modelDir);
  llvm::sys::path::append(joined, location);
  llvm::SmallString<256> canonical;
  if (std::error_code ec = llvm::sys::fs::real_path(joined, canonical, /*expand_tilde=*/false))
    return emitError() << "cannot open external data file '" << location << "' ("
                       << joined << "): " << ec.message();
  llvm::SmallString<256> prefix(modelDir);
  if (!prefix.ends_with("/"))
    prefix += "/";
  if (!llvm::StringRef(canonical).starts_with(prefix))
    return emitError() << "external data path '" << location << "' resolves to '"
                       << canonical << "', outside the model's folder '" << modelDir << "'";

  // O_NONBLOCK: opening a FIFO must not wait for a writer; anything but a regular file is
  // rejected below.
  FileCloser file;
  file.fd = ::open(canonical.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (file.fd < 0)
    return emitError() << "cannot open external data file '" << location
                       << "': " << std::strerror(errno);
  struct stat st;
  if (::fstat(file.fd, &st) != 0)
    return emitError() << "cannot stat external data file '" << location
                       << "': " << std::strerror(errno);
  if (!S_ISREG(st.st_mode))
    return emitError() << "external data file '" << location << "' is not a regular file";
  uint64_t fileSize = static_cast<uint64_t>(st.st_size);
  uint64_t size = dest.size();

  if (hasLength && length != size)
    return emitError() << "external data in '" << location << "' has length " << length
                       << " bytes but the tensor's shape and type need " << size;
  if (offset > fileSize)
    return emitError() << "external data offset " << offset << " is beyond the end of '"
                       << location << "' (" << fileSize << " bytes)";
  if (size > fileSize - offset)
    return emitError() << "external data in '" << location << "' is too short: "
                       << size << " bytes needed at offset " << offset << " but the file "
                       << "has " << fileSize << " bytes";

  uint64_t done = 0;
  while (done < size) {
    ssize_t n = ::pread(file.fd, dest.data() + done, size - done,
                        static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return emitError() << "cannot read external data file '" << location << "': "
                         << (n < 0 ? std::strerror(errno) : "unexpected end of file");
    done += static_cast<uint64_t>(n);
  }
  return success();
}
