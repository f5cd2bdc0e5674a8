//===- FileIO.cpp - Reading inputs and writing outputs atomically ---------===//

#include "trident/Support/FileIO.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <unistd.h>

namespace trident {

Result<std::string> readFile(const std::string &path) {
  FILE *f = std::fopen(path.c_str(), "rb");
  if (!f)
    return Status::error(path + ": cannot open: " + std::strerror(errno));
  std::string data;
  char buf[65536];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0)
    data.append(buf, n);
  bool failed = std::ferror(f);
  std::fclose(f);
  if (failed)
    return Status::error(path + ": read error");
  return data;
}

Status writeFileAtomically(const std::string &path, std::string_view contents) {
  if (path == "-") {
    std::fwrite(contents.data(), 1, contents.size(), stdout);
    std::fflush(stdout);
    return Status::ok();
  }
  std::string tmp = path + ".tmp." + std::to_string(::getpid());
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0)
    return Status::error(path + ": cannot write: " + std::strerror(errno));
  size_t off = 0;
  while (off < contents.size()) {
    ssize_t w = ::write(fd, contents.data() + off, contents.size() - off);
    if (w < 0) {
      if (errno == EINTR)
        continue;
      std::string why = std::strerror(errno);
      ::close(fd);
      ::unlink(tmp.c_str());
      return Status::error(path + ": write failed: " + why);
    }
    off += static_cast<size_t>(w);
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0) {
    std::string why = std::strerror(errno);
    ::unlink(tmp.c_str());
    return Status::error(path + ": write failed: " + why);
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::string why = std::strerror(errno);
    ::unlink(tmp.c_str());
    return Status::error(path + ": cannot replace: " + why);
  }
  return Status::ok();
}

} // namespace trident
