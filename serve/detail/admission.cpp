#include "serve/detail/admission.hpp"

namespace tessera::serve::detail {

Admission::Ticket::~Ticket() { owner_->give_back(n_); }

std::shared_ptr<Admission::Ticket> Admission::try_admit(std::size_t n) {
  {
    std::lock_guard g(mu_);
    if (n == 0 || outstanding_ + n > capacity_) return nullptr;
    outstanding_ += n;
  }
  return std::make_shared<Ticket>(shared_from_this(), n);
}

std::size_t Admission::outstanding() const {
  std::lock_guard g(mu_);
  return outstanding_;
}

void Admission::give_back(std::size_t n) {
  std::lock_guard g(mu_);
  outstanding_ -= n;
}

}  // namespace tessera::serve::detail
