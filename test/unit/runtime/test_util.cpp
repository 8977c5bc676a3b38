#include "test_util.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <sys/wait.h>
#include <unistd.h>

namespace kiln_test {

std::string modelPath(const std::string &name) {
  return std::string(KILN_TEST_MODEL_DIR) + "/" + name + ".so";
}

TempDir::TempDir() {
  std::string tmpl = (std::filesystem::temp_directory_path() / "kiln-rt-XXXXXX").string();
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back('\0');
  if (!mkdtemp(buf.data()))
    throw std::runtime_error("mkdtemp failed");
  dir = buf.data();
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
}

void writeFile(const std::string &path, const std::string &contents) {
  std::ofstream out(path, std::ios::binary);
  out << contents;
}

std::string readFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void writeNpy(const std::string &path, const std::string &descr,
              const std::vector<int64_t> &shape, const void *data, size_t size,
              int major) {
  std::string dims = "(";
  for (size_t i = 0; i < shape.size(); ++i)
    dims += std::to_string(shape[i]) + (shape.size() == 1 ? "," : i + 1 < shape.size() ? ", " : "");
  dims += ")";
  std::string header = "{'descr': '" + descr +
                       "', 'fortran_order': False, 'shape': " + dims + ", }";
  size_t prefix = major == 1 ? 10 : 12;
  size_t total = prefix + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::string out = "\x93NUMPY";
  out += (char)major;
  out += (char)0;
  size_t len = header.size();
  out += (char)(len & 0xff);
  out += (char)((len >> 8) & 0xff);
  if (major != 1) {
    out += (char)((len >> 16) & 0xff);
    out += (char)((len >> 24) & 0xff);
  }
  out += header;
  out.append((const char *)data, size);
  writeFile(path, out);
}

NpyContents readNpy(const std::string &path) {
  std::string bytes = readFile(path);
  if (bytes.size() < 10 || bytes.compare(0, 6, "\x93NUMPY") != 0 || bytes[6] != 1)
    throw std::runtime_error(path + ": not a version 1 .npy file");
  size_t len = (unsigned char)bytes[8] | ((unsigned char)bytes[9] << 8);
  std::string header = bytes.substr(10, len);
  NpyContents c;
  size_t d = header.find("'descr': '");
  size_t dEnd = header.find('\'', d + 10);
  c.descr = header.substr(d + 10, dEnd - d - 10);
  size_t s = header.find("'shape': (");
  size_t sEnd = header.find(')', s);
  std::string dims = header.substr(s + 10, sEnd - s - 10);
  std::stringstream ss(dims);
  std::string item;
  while (std::getline(ss, item, ','))
    if (item.find_first_not_of(' ') != std::string::npos)
      c.shape.push_back(std::stoll(item));
  if (header.find("'fortran_order': False") == std::string::npos)
    throw std::runtime_error(path + ": bad fortran_order");
  if ((10 + len) % 64 != 0 || header.back() != '\n')
    throw std::runtime_error(path + ": header not padded to 64 bytes");
  c.data = bytes.substr(10 + len);
  return c;
}

static std::string shellQuote(const std::string &s) {
  std::string q = "'";
  for (char c : s) {
    if (c == '\'')
      q += "'\\''";
    else
      q += c;
  }
  return q + "'";
}

CommandResult runCommand(const std::vector<std::string> &args) {
  TempDir tmp;
  std::string cmd;
  for (const std::string &a : args)
    cmd += shellQuote(a) + " ";
  cmd += ">" + shellQuote(tmp.file("out")) + " 2>" + shellQuote(tmp.file("err"));
  int status = std::system(cmd.c_str());
  CommandResult r;
  r.exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.out = readFile(tmp.file("out"));
  r.err = readFile(tmp.file("err"));
  return r;
}

std::string statusString(kiln_status status) {
  if (!status)
    return "OK";
  std::string s = std::string(kiln_status_code_string(kiln_status_code(status))) +
                  ": " + kiln_status_message(status);
  kiln_status_free(status);
  return s;
}

} // namespace kiln_test
