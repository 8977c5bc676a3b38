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

  // Opened component by component from the model's folder with O_NOFOLLOW, and
  // the checks below are on the opened file (fstat): nothing can swap a path
  // component for a symlink between a check and the open.
  FileCloser dir;
  std::string dirPath = modelDir.str();
  dir.fd = ::open(dirPath.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir.fd < 0)
    return emitError() << "cannot open the model's folder '" << modelDir
                       << "': " << std::strerror(errno);
  llvm::SmallVector<llvm::StringRef> components;
  llvm::StringRef(location).split(components, '/', /*MaxSplit=*/-1,
                                  /*KeepEmpty=*/false);
  llvm::erase_if(components, [](llvm::StringRef c) { return c == "."; });
  if (components.empty())
    return emitError() << "external data path '" << location << "' names no file";
  FileCloser file;
  for (size_t i = 0; i < components.size(); ++i) {
    std::string component = components[i].str();
    bool last = i + 1 == components.size();
    // O_NONBLOCK: opening a FIFO must not wait for a writer; anything but a
    // regular file is rejected below.
    int flags = O_RDONLY | O_CLOEXEC | O_NOFOLLOW |
                (last ? O_NONBLOCK : O_DIRECTORY);
    int fd = ::openat(dir.fd, component.c_str(), flags);
    if (fd < 0) {
      int err = errno;
      struct stat lst;
      if ((err == ELOOP || err == ENOTDIR) &&
          ::fstatat(dir.fd, component.c_str(), &lst, AT_SYMLINK_NOFOLLOW) == 0 &&
          S_ISLNK(lst.st_mode))
        return emitError() << "external data path '" << location
                           << "' goes through the symlink '" << component
                           << "'; symlinks are not followed (they could lead outside "
                              "the model's folder)";
      return emitError() << "cannot open external data file '" << location << "': "
                         << std::strerror(err);
    }
    if (last) {
      file.fd = fd;
    } else {
      ::close(dir.fd);
      dir.fd = fd;
    }
  }
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
