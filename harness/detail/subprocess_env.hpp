#pragma once
// A Boost.Process initializer that gives the child exactly these
// "NAME=value" entries as its environment. Boost's own environment type is
// not used: its lookup reads past the end of shorter entries (Boost 1.74,
// found by AddressSanitizer), and every assignment goes through it.
#include <string>
#include <vector>

#include <boost/process/extend.hpp>

namespace tessera::detail {

class ExactEnvironment : public boost::process::extend::handler {
public:
  explicit ExactEnvironment(std::vector<std::string> entries) : entries_(std::move(entries)) {}
  template <class Executor>
  void on_setup(Executor& exec) const {
    // Built here, from this object's own strings: Boost may have copied it.
    pointers_.clear();
    for (const auto& e : entries_) pointers_.push_back(const_cast<char*>(e.c_str()));
    pointers_.push_back(nullptr);
    exec.env = pointers_.data();
  }

private:
  std::vector<std::string> entries_;
  mutable std::vector<char*> pointers_;
};

}  // namespace tessera::detail
