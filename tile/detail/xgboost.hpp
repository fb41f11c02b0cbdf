#pragma once
// Non-copyable owners of XGBoost's C API handles (DMatrix, Booster), with
// the project's check: a failing call throws tessera::Error with the call and
// XGBGetLastError()'s text. Only built with XGBoost (TESSERA_HAVE_XGBOOST).
#include <cstddef>
#include <string>
#include <vector>

#include <xgboost/c_api.h>

namespace tessera::tile::detail {

class DMatrix {
public:
  // rows: nrow x ncol floats, row-major.
  DMatrix(const std::vector<float>& rows, std::size_t nrow, std::size_t ncol);
  ~DMatrix() noexcept;
  DMatrix(const DMatrix&) = delete;
  DMatrix& operator=(const DMatrix&) = delete;
  void set(const char* field, const std::vector<float>& values);  // "label", "base_margin"
  void set_groups(const std::vector<unsigned>& sizes);               // consecutive rows per query, for ranking
  DMatrixHandle get() const { return h_; }

private:
  DMatrixHandle h_ = nullptr;
};

class Booster {
public:
  Booster();                          // empty, for load()
  explicit Booster(const DMatrix& train);
  ~Booster() noexcept;
  Booster(const Booster&) = delete;
  Booster& operator=(const Booster&) = delete;
  void set(const std::string& name, const std::string& value);
  void update(int iteration, const DMatrix& train);
  std::vector<float> margins(const DMatrix& data) const;  // raw outputs (base_score included)
  std::string save_ubj() const;  // XGBoost's UBJSON: a twentieth of the JSON's time to read back
  void load(const std::string& model);  // UBJSON or JSON (files written before 2026-12-05)

private:
  BoosterHandle h_ = nullptr;
};

}  // namespace tessera::tile::detail
