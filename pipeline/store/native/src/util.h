// Small helpers shared by the store's native code: CRC-32, checked file output, read-only mappings.
#pragma once
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace scdv {

/** An error whose message is shown to the JavaScript caller as is. */
struct StoreError : std::runtime_error {
  std::string code;  // "" for a plain error; else a catalogue key such as "CORRUPT"
  /** Named facts of the error (e.g. a segment's path and versions), set as properties of the JS error so that
   *  callers never parse them out of the message. */
  std::vector<std::pair<std::string, std::string>> fields;
  StoreError(const std::string& msg, std::string c = "", std::vector<std::pair<std::string, std::string>> f = {})
      : std::runtime_error(msg), code(std::move(c)), fields(std::move(f)) {}
};

/** Error from errno, naming the operation and the path. */
[[noreturn]] void throwErrno(const std::string& op, const std::string& path);

uint32_t crc32(const void* data, size_t len, uint32_t crc = 0);

/** Sequential writer to a new file (O_CREAT|O_TRUNC), buffered; finish() flushes and fsyncs. */
class FileWriter {
 public:
  explicit FileWriter(const std::string& path);
  ~FileWriter();
  FileWriter(const FileWriter&) = delete;
  FileWriter& operator=(const FileWriter&) = delete;
  void write(const void* p, size_t n);
  void pad(size_t align);  // zero bytes up to the next multiple of align
  void zeros(size_t n);
  void pwriteAt(uint64_t off, const void* p, size_t n);  // after flushing, e.g. to patch the header
  uint64_t pos() const { return pos_; }
  void finish();  // flush, fsync, close
 private:
  void flushBuf();
  std::string path_;
  int fd_ = -1;
  uint64_t pos_ = 0;
  std::vector<char> buf_;
};

/** Read-only shared mapping of a whole file (the page cache is shared by every process mapping it). */
class Mapping {
 public:
  explicit Mapping(const std::string& path);
  ~Mapping();
  Mapping(const Mapping&) = delete;
  Mapping& operator=(const Mapping&) = delete;
  const uint8_t* data() const { return data_; }
  uint64_t size() const { return size_; }
  const std::string& path() const { return path_; }
 private:
  std::string path_;
  const uint8_t* data_ = nullptr;
  uint64_t size_ = 0;
};

/** Whole file into memory. */
std::vector<uint8_t> readFile(const std::string& path);
/** fsync a directory (after a rename inside it). */
void fsyncDir(const std::string& dir);

}  // namespace scdv
