#include "util.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace scdv {

void throwErrno(const std::string& op, const std::string& path) {
  int e = errno;
  throw StoreError(op + " " + path + ": " + std::strerror(e), e == ENOENT ? "ENOENT" : "");
}

static uint32_t kCrcTable[256];
static bool initCrc() {
  for (uint32_t i = 0; i < 256; i++) {
    uint32_t c = i;
    for (int k = 0; k < 8; k++) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
    kCrcTable[i] = c;
  }
  return true;
}
static const bool kCrcReady = initCrc();

uint32_t crc32(const void* data, size_t len, uint32_t crc) {
  (void)kCrcReady;
  const uint8_t* p = static_cast<const uint8_t*>(data);
  crc = ~crc;
  for (size_t i = 0; i < len; i++) crc = kCrcTable[(crc ^ p[i]) & 0xff] ^ (crc >> 8);
  return ~crc;
}

FileWriter::FileWriter(const std::string& path) : path_(path) {
  fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd_ < 0) throwErrno("cannot create", path);
  buf_.reserve(1 << 20);
}

FileWriter::~FileWriter() {
  if (fd_ >= 0) ::close(fd_);
}

void FileWriter::flushBuf() {
  size_t off = 0;
  while (off < buf_.size()) {
    ssize_t w = ::write(fd_, buf_.data() + off, buf_.size() - off);
    if (w < 0) {
      if (errno == EINTR) continue;
      throwErrno("cannot write", path_);
    }
    off += static_cast<size_t>(w);
  }
  buf_.clear();
}

void FileWriter::write(const void* p, size_t n) {
  const char* c = static_cast<const char*>(p);
  pos_ += n;
  if (n >= (1u << 20)) {
    flushBuf();
    size_t off = 0;
    while (off < n) {
      ssize_t w = ::write(fd_, c + off, n - off);
      if (w < 0) {
        if (errno == EINTR) continue;
        throwErrno("cannot write", path_);
      }
      off += static_cast<size_t>(w);
    }
    return;
  }
  if (buf_.size() + n > (1u << 20)) flushBuf();
  buf_.insert(buf_.end(), c, c + n);
}

void FileWriter::zeros(size_t n) {
  static const char z[4096] = {0};
  while (n > 0) {
    size_t m = n < sizeof z ? n : sizeof z;
    write(z, m);
    n -= m;
  }
}

void FileWriter::pad(size_t align) {
  size_t r = pos_ % align;
  if (r) zeros(align - r);
}

void FileWriter::pwriteAt(uint64_t off, const void* p, size_t n) {
  flushBuf();
  if (::pwrite(fd_, p, n, static_cast<off_t>(off)) != static_cast<ssize_t>(n)) throwErrno("cannot write", path_);
}

void FileWriter::finish() {
  flushBuf();
  if (::fsync(fd_) != 0) throwErrno("cannot fsync", path_);
  if (::close(fd_) != 0) {
    fd_ = -1;
    throwErrno("cannot close", path_);
  }
  fd_ = -1;
}

Mapping::Mapping(const std::string& path) : path_(path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throwErrno("cannot open", path);
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    ::close(fd);
    throwErrno("cannot stat", path);
  }
  size_ = static_cast<uint64_t>(st.st_size);
  if (size_ > 0) {
    void* p = ::mmap(nullptr, size_, PROT_READ, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) {
      ::close(fd);
      throwErrno("cannot map", path);
    }
    data_ = static_cast<const uint8_t*>(p);
  }
  ::close(fd);
}

Mapping::~Mapping() {
  if (data_) ::munmap(const_cast<uint8_t*>(data_), size_);
}

std::vector<uint8_t> readFile(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throwErrno("cannot open", path);
  std::vector<uint8_t> out;
  uint8_t buf[65536];
  for (;;) {
    ssize_t r = ::read(fd, buf, sizeof buf);
    if (r < 0) {
      if (errno == EINTR) continue;
      ::close(fd);
      throwErrno("cannot read", path);
    }
    if (r == 0) break;
    out.insert(out.end(), buf, buf + r);
  }
  ::close(fd);
  return out;
}

void fsyncDir(const std::string& dir) {
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) throwErrno("cannot open directory", dir);
  if (::fsync(fd) != 0) {
    ::close(fd);
    throwErrno("cannot fsync directory", dir);
  }
  ::close(fd);
}

}  // namespace scdv
