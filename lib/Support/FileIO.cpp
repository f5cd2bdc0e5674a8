//===- FileIO.cpp - Reading inputs and writing outputs atomically ---------===//

#include "trident/Support/FileIO.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
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

namespace {

/// Writes all of `contents` to `fd`, then syncs it when `sync`; false
/// (errno set) on failure.
bool writeAll(int fd, std::string_view contents, bool sync = true) {
  size_t off = 0;
  while (off < contents.size()) {
    ssize_t w = ::write(fd, contents.data() + off, contents.size() - off);
    if (w < 0) {
      if (errno == EINTR)
        continue;
      return false;
    }
    off += static_cast<size_t>(w);
  }
  return !sync || ::fsync(fd) == 0;
}

} // namespace

Status writeFileAtomically(const std::string &path, std::string_view contents) {
  if (path == "-") {
    std::fwrite(contents.data(), 1, contents.size(), stdout);
    std::fflush(stdout);
    return Status::ok();
  }
  // Through a symbolic link (/dev/stdout -> /proc/self/fd/1 -> a file): the
  // rules below apply to what it names, and the link itself stays.
  struct stat lst;
  if (::lstat(path.c_str(), &lst) == 0 && S_ISLNK(lst.st_mode)) {
    if (char *real = ::realpath(path.c_str(), nullptr)) {
      std::string target = real;
      std::free(real);
      if (target != path) {
        Status s = writeFileAtomically(target, contents);
        if (!s)
          return Status::error(path + " (" + s.message() + ")");
        return s;
      }
    }
  }
  // A target that exists and is not a regular file (/dev/null, a pipe, a
  // terminal) is written in place: renaming over it would replace the
  // device node or the pipe by a plain file (as root, /dev/null itself).
  struct stat st;
  if (::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
    if (S_ISDIR(st.st_mode))
      return Status::error(path + ": is a directory, not a file");
    int fd = ::open(path.c_str(), O_WRONLY);
    if (fd < 0)
      return Status::error(path + ": cannot write: " + std::strerror(errno));
    bool ok = writeAll(fd, contents, /*sync=*/false);
    std::string why = ok ? "" : std::strerror(errno);
    if (::close(fd) != 0 && ok) {
      ok = false;
      why = std::strerror(errno);
    }
    if (!ok)
      return Status::error(path + ": write failed: " + why);
    return Status::ok();
  }
  std::string tmp = path + ".tmp." + std::to_string(::getpid());
#ifdef O_TMPFILE
  // First choice (Linux): an unnamed file in the target's directory. A run
  // killed while writing it leaves nothing behind; it is named (tmp) only
  // once complete, then renamed over `path`. Where the file system does not
  // support O_TMPFILE, or /proc is absent, the named temporary below is used.
  {
    size_t slash = path.rfind('/');
    std::string dir = slash == std::string::npos ? "."
                      : slash == 0              ? "/"
                                                : path.substr(0, slash);
    int fd = ::open(dir.c_str(), O_TMPFILE | O_WRONLY, 0644);
    if (fd >= 0) {
      if (!writeAll(fd, contents)) {
        std::string why = std::strerror(errno);
        ::close(fd);
        return Status::error(path + ": write failed: " + why);
      }
      std::string self = "/proc/self/fd/" + std::to_string(fd);
      ::unlink(tmp.c_str());
      bool named = ::linkat(AT_FDCWD, self.c_str(), AT_FDCWD, tmp.c_str(),
                            AT_SYMLINK_FOLLOW) == 0;
      ::close(fd);
      if (named) {
        if (std::rename(tmp.c_str(), path.c_str()) != 0) {
          std::string why = std::strerror(errno);
          ::unlink(tmp.c_str());
          return Status::error(path + ": cannot replace: " + why);
        }
        return Status::ok();
      }
    }
  }
#endif
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0)
    return Status::error(path + ": cannot write: " + std::strerror(errno));
  if (!writeAll(fd, contents)) {
    std::string why = std::strerror(errno);
    ::close(fd);
    ::unlink(tmp.c_str());
    return Status::error(path + ": write failed: " + why);
  }
  if (::close(fd) != 0) {
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
