//===- Npy.cpp - Reading .npy files for kiln-run
//----------------------------===//
//
// The reader of kiln-run's --input files, apart from the tool so that
// fuzz/npy_fuzzer.cpp runs it on arbitrary bytes. Every malformed file is a
// NpyError naming the file and what is wrong.
//
//===----------------------------------------------------------------------===//

#include "tools/kiln-run/Npy.h"

#include <cctype>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <string_view>
#include <sys/stat.h>
#include <unistd.h>

namespace kiln_run {

namespace {

std::string shapeString(const int64_t *shape, int32_t rank) {
  std::string s = "[";
  for (int32_t i = 0; i < rank; ++i) {
    if (i)
      s += ",";
    s += std::to_string(shape[i]);
  }
  return s + "]";
}

} // namespace

/// Parses the Python-literal dict of a .npy header.
class NpyHeaderParser {
public:
  NpyHeaderParser(const std::string &text, const std::string &path)
      : text(text), path(path) {}

  void parse(std::string &descr, bool &fortran, std::vector<int64_t> &shape) {
    bool haveDescr = false, haveFortran = false, haveShape = false;
    skipSpace();
    expect('{');
    for (;;) {
      skipSpace();
      if (peek() == '}')
        break;
      std::string key = parseString();
      skipSpace();
      expect(':');
      skipSpace();
      if (key == "descr") {
        if (peek() != '\'' && peek() != '"')
          fail("structured dtypes are not supported");
        descr = parseString();
        haveDescr = true;
      } else if (key == "fortran_order") {
        fortran = parseBool();
        haveFortran = true;
      } else if (key == "shape") {
        shape = parseTuple();
        haveShape = true;
      } else {
        fail("unexpected key '" + key + "'");
      }
      skipSpace();
      if (peek() == ',')
        ++pos;
    }
    if (!haveDescr || !haveFortran || !haveShape)
      fail("the header lacks 'descr', 'fortran_order' or 'shape'");
  }

private:
  [[noreturn]] void fail(const std::string &why) {
    throw NpyError(path + ": malformed .npy header: " + why);
  }
  char peek() const { return pos < text.size() ? text[pos] : '\0'; }
  void skipSpace() {
    while (pos < text.size() && std::isspace((unsigned char)text[pos]))
      ++pos;
  }
  void expect(char c) {
    if (peek() != c)
      fail(std::string("expected '") + c + "' at offset " +
           std::to_string(pos));
    ++pos;
  }
  std::string parseString() {
    char quote = peek();
    if (quote != '\'' && quote != '"')
      fail("expected a string at offset " + std::to_string(pos));
    size_t end = text.find(quote, pos + 1);
    if (end == std::string::npos)
      fail("unterminated string");
    std::string s = text.substr(pos + 1, end - pos - 1);
    pos = end + 1;
    return s;
  }
  bool parseBool() {
    if (text.compare(pos, 4, "True") == 0) {
      pos += 4;
      return true;
    }
    if (text.compare(pos, 5, "False") == 0) {
      pos += 5;
      return false;
    }
    fail("expected True or False for 'fortran_order'");
  }
  std::vector<int64_t> parseTuple() {
    std::vector<int64_t> dims;
    expect('(');
    for (;;) {
      skipSpace();
      if (peek() == ')') {
        ++pos;
        return dims;
      }
      size_t start = pos;
      while (pos < text.size() && std::isdigit((unsigned char)text[pos]))
        ++pos;
      if (pos == start || pos - start > 18)
        fail("bad dimension in 'shape'");
      dims.push_back(std::stoll(text.substr(start, pos - start)));
      skipSpace();
      if (peek() == 'L') // Python 2 longs
        ++pos;
      skipSpace();
      if (peek() == ',')
        ++pos;
      else if (peek() != ')')
        fail("expected ',' or ')' in 'shape'");
    }
  }

  const std::string &text;
  const std::string &path;
  size_t pos = 0;
};

bool isFloat8(kiln_dtype dtype) {
  switch (dtype) {
#define KILN_X(NAME, ID, STR, BYTES, CLASS, CTYPE)                             \
  case KILN_DTYPE_##NAME:                                                      \
    return CLASS == KILN_DTYPE_CLASS_FLOAT8;
    KILN_DTYPE_TABLE(KILN_X)
#undef KILN_X
  default:
    return false;
  }
}

bool isVoidByte(kiln_dtype dtype) {
  switch (dtype) {
#define KILN_X(NAME, ID, STR, BYTES, CLASS, CTYPE)                             \
  case KILN_DTYPE_##NAME:                                                      \
    return CLASS == KILN_DTYPE_CLASS_FLOAT8 ||                                 \
           CLASS == KILN_DTYPE_CLASS_FLOAT8E8M0 ||                             \
           CLASS == KILN_DTYPE_CLASS_FLOAT4 ||                                 \
           CLASS == KILN_DTYPE_CLASS_PACKED_SIGNED ||                          \
           CLASS == KILN_DTYPE_CLASS_PACKED_UNSIGNED;
    KILN_DTYPE_TABLE(KILN_X)
#undef KILN_X
  default:
    return false;
  }
}

/// numpy's type code of `dtype` without the byte order ("f4", "b1"), from
/// model_abi.h's dtype table. bfloat16 has none in numpy: "V2", the 2-byte
/// void numpy writes for ml_dtypes' bfloat16 (np.save of such an array says
/// '<V2'; np.load(...).view(ml_dtypes.bfloat16) reads it back). The 8-bit
/// floats likewise are "V1" (all four formats: the model's dtype says which),
/// and so are ml_dtypes' float8_e8m0fnu, float4_e2m1fn, int4, uint4, int2
/// and uint2, one element per byte (the code in its low bits).
std::string npyCode(kiln_dtype dtype) {
  if (dtype == KILN_DTYPE_BFLOAT16)
    return "V2";
  if (isVoidByte(dtype))
    return "V1";
  switch (dtype) {
#define KILN_X(NAME, ID, STR, BYTES, CLASS, CTYPE)                             \
  case KILN_DTYPE_##NAME:                                                      \
    return std::string(1, CLASS == KILN_DTYPE_CLASS_FLOAT    ? 'f'             \
                          : CLASS == KILN_DTYPE_CLASS_SIGNED ? 'i'             \
                          : CLASS == KILN_DTYPE_CLASS_BOOL   ? 'b'             \
                                                             : 'u') +            \
           std::to_string(BYTES);
    KILN_DTYPE_TABLE(KILN_X)
#undef KILN_X
  default:
    return "";
  }
}

static kiln_dtype dtypeFromDescr(const std::string &descr,
                                 const std::string &path) {
  if (descr.size() < 3)
    throw NpyError(path + ": unsupported .npy dtype '" + descr + "'");
  char order = descr[0];
  std::string code = descr.substr(1);
  kiln_dtype dtype = KILN_DTYPE_UNDEFINED;
  // The dtype whose numpy code matches: u2 is uint16, V2 bfloat16 (a
  // bfloat16 input also takes u2 bit patterns: kiln-run.cpp), V1 the first
  // float8 format (kiln-run gives it the model input's).
#define KILN_X(NAME, ID, STR, BYTES, CLASS, CTYPE)                             \
  if (dtype == KILN_DTYPE_UNDEFINED && npyCode(KILN_DTYPE_##NAME) == code)     \
    dtype = KILN_DTYPE_##NAME;
  KILN_DTYPE_TABLE(KILN_X)
#undef KILN_X
  // np.save writes ml_dtypes' float8_e5m2 as '<f1' (the other formats as V1).
  if (code == "f1")
    dtype = KILN_DTYPE_FLOAT8E5M2;
  if (dtype == KILN_DTYPE_UNDEFINED ||
      (order != '<' && order != '>' && order != '|' && order != '='))
    throw NpyError(path + ": unsupported .npy dtype '" + descr +
                   "' (supported: f2 f4 f8 i1 i2 i4 i8 u1 u2 u4 u8 b1, "
                   "V2 for bfloat16, V1 and f1 for the float8 formats, V1 "
                   "for float8e8m0, float4e2m1, int4, uint4, int2, uint2)");
  size_t size = kiln_dtype_size(dtype);
  if (size > 1 && order == '>')
    throw NpyError(path + ": big-endian .npy data ('" + descr +
                   "') is not supported; save it little-endian");
  return dtype;
}

NpyArray parseNpy(const char *data, size_t size, const std::string &path) {
  std::string_view bytes(data, size);
  if (bytes.size() < 10 || std::memcmp(bytes.data(), "\x93NUMPY", 6) != 0)
    throw NpyError(path + ": not a .npy file (no \\x93NUMPY magic)");
  unsigned major = (unsigned char)bytes[6], minor = (unsigned char)bytes[7];
  size_t headerLen, headerStart;
  if (major == 1) {
    headerLen = (unsigned char)bytes[8] | ((unsigned char)bytes[9] << 8);
    headerStart = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12)
      throw NpyError(path + ": truncated .npy header");
    headerLen = (size_t)(unsigned char)bytes[8] |
                ((size_t)(unsigned char)bytes[9] << 8) |
                ((size_t)(unsigned char)bytes[10] << 16) |
                ((size_t)(unsigned char)bytes[11] << 24);
    headerStart = 12;
  } else {
    throw NpyError(path + ": unsupported .npy format version " +
                   std::to_string(major) + "." + std::to_string(minor));
  }
  if (bytes.size() - headerStart < headerLen)
    throw NpyError(path + ": truncated .npy header");
  std::string header(bytes.data() + headerStart, headerLen);
  std::string descr;
  bool fortran = false;
  NpyArray array;
  NpyHeaderParser(header, path).parse(descr, fortran, array.shape);
  array.dtype = dtypeFromDescr(descr, path);
  if (fortran && array.shape.size() > 1)
    throw NpyError(path + ": Fortran-order .npy arrays are not supported; save "
                          "with np.ascontiguousarray");
  uint64_t count = 1;
  for (int64_t d : array.shape) {
    if (d != 0 && count > UINT64_MAX / 16 / (uint64_t)d)
      throw NpyError(
          path + ": shape " +
          shapeString(array.shape.data(), (int32_t)array.shape.size()) +
          " is too large");
    count *= (uint64_t)d;
  }
  uint64_t need = count * kiln_dtype_size(array.dtype);
  size_t have = bytes.size() - headerStart - headerLen;
  if (have != need)
    throw NpyError(
        path + ": holds " + std::to_string(have) +
        " bytes of data, but dtype '" + descr + "' and shape " +
        shapeString(array.shape.data(), (int32_t)array.shape.size()) +
        " need " + std::to_string(need) +
        (have < need ? " (truncated file?)" : ""));
  array.data.assign(bytes.begin() + headerStart + headerLen, bytes.end());
  return array;
}

NpyArray readNpyFile(const std::string &path) {
  // O_NONBLOCK and fstat: a FIFO or device given as an input is an error,
  // not a wait for a writer or an endless read.
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0)
    throw NpyError("cannot open '" + path + "': " + std::strerror(errno));
  struct stat st;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    int err = errno;
    bool isDir = S_ISDIR(st.st_mode);
    ::close(fd);
    throw NpyError("cannot read '" + path + "': " +
                   (err     ? std::strerror(err)
                    : isDir ? "it is a directory"
                            : "it is not a regular file"));
  }
  std::string bytes;
  bytes.resize(static_cast<size_t>(st.st_size));
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = ::read(fd, &bytes[done], bytes.size() - done);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      break;
    done += static_cast<size_t>(n);
  }
  ::close(fd);
  bytes.resize(done); // a file that shrank: the parser reports what is short
  return parseNpy(bytes.data(), bytes.size(), path);
}

} // namespace kiln_run
