// SPDX-License-Identifier: GPL-2.0
//
// TempDir: a directory removed with its contents on destruction; tests build fake sysfs
// trees in it.
#pragma once

#include <stdlib.h>

#include <cerrno>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <system_error>

namespace srnic::test {

class TempDir {
public:
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "srnic-test-XXXXXX").string();
    if (mkdtemp(tmpl.data()) == nullptr)
      throw std::system_error(errno, std::generic_category(), "mkdtemp");
    path_ = tmpl;
  }
  TempDir(const TempDir &) = delete;
  TempDir &operator=(const TempDir &) = delete;
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }

  const std::filesystem::path &path() const { return path_; }

  // Creates directory rel and its parents.
  void mkdir(const std::filesystem::path &rel) const {
    std::filesystem::create_directories(path_ / rel);
  }

  // Creates file rel (and its parent directories) holding contents.
  void write(const std::filesystem::path &rel, std::string_view contents) const {
    std::filesystem::create_directories((path_ / rel).parent_path());
    std::ofstream(path_ / rel) << contents;
  }

private:
  std::filesystem::path path_;
};

} // namespace srnic::test
