#include "tile/detail/xgboost.hpp"

#include <limits>

#include "core/error.hpp"

#define TESSERA_XGB_CHECK(call)                                                               \
  do {                                                                                         \
    if ((call) != 0) throw ::tessera::Error(::tessera::where(__FILE__, __LINE__, #call, XGBGetLastError())); \
  } while (0)

namespace tessera::tile::detail {

DMatrix::DMatrix(const std::vector<float>& rows, std::size_t nrow, std::size_t ncol) {
  TESSERA_REQUIRE(rows.size() == nrow * ncol, "a DMatrix needs nrow x ncol values");
  // NaN marks a missing value; every feature is always present.
  TESSERA_XGB_CHECK(XGDMatrixCreateFromMat(rows.data(), bst_ulong(nrow), bst_ulong(ncol), std::numeric_limits<float>::quiet_NaN(), &h_));
}

DMatrix::~DMatrix() noexcept {
  if (h_) XGDMatrixFree(h_);
}

void DMatrix::set(const char* field, const std::vector<float>& values) {
  TESSERA_XGB_CHECK(XGDMatrixSetFloatInfo(h_, field, values.data(), bst_ulong(values.size())));
}

void DMatrix::set_groups(const std::vector<unsigned>& sizes) {
  TESSERA_XGB_CHECK(XGDMatrixSetUIntInfo(h_, "group", sizes.data(), bst_ulong(sizes.size())));
}

Booster::Booster() { TESSERA_XGB_CHECK(XGBoosterCreate(nullptr, 0, &h_)); }

Booster::Booster(const DMatrix& train) {
  DMatrixHandle m = train.get();
  TESSERA_XGB_CHECK(XGBoosterCreate(&m, 1, &h_));
}

Booster::~Booster() noexcept {
  if (h_) XGBoosterFree(h_);
}

void Booster::set(const std::string& name, const std::string& value) {
  TESSERA_XGB_CHECK(XGBoosterSetParam(h_, name.c_str(), value.c_str()));
}

void Booster::update(int iteration, const DMatrix& train) {
  TESSERA_XGB_CHECK(XGBoosterUpdateOneIter(h_, iteration, train.get()));
}

std::vector<float> Booster::margins(const DMatrix& data) const {
  bst_ulong n = 0;
  const float* out = nullptr;
  // option_mask 1: the raw margin; ntree_limit 0: every tree; training 0.
  TESSERA_XGB_CHECK(XGBoosterPredict(h_, data.get(), 1, 0, 0, &n, &out));
  return std::vector<float>(out, out + n);
}

std::string Booster::save_ubj() const {
  bst_ulong n = 0;
  const char* out = nullptr;
  TESSERA_XGB_CHECK(XGBoosterSaveModelToBuffer(h_, R"({"format": "ubj"})", &n, &out));
  return std::string(out, n);
}

void Booster::load(const std::string& model) {
  TESSERA_XGB_CHECK(XGBoosterLoadModelFromBuffer(h_, model.data(), bst_ulong(model.size())));
}

}  // namespace tessera::tile::detail
