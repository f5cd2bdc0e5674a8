//===- Tensor.cpp - Backend-neutral tensor bookkeeping --------------------===//

#include "../Internal.h"
#include "Bf16.h"

#include <atomic>
#include <sstream>

namespace trident::rt {

namespace detail {
void fail(const char *fn, const std::string &message) {
  throw Error(std::string(fn) + ": " + message);
}

std::string shapeToString(const std::vector<int64_t> &shape) {
  std::ostringstream os;
  os << '[';
  for (size_t i = 0; i < shape.size(); ++i)
    os << (i ? ", " : "") << shape[i];
  os << ']';
  return os.str();
}
} // namespace detail

using detail::check;

size_t elementSize(DType dtype) { return dtype == DType::BF16 ? 2 : 4; }

const char *dtypeName(DType dtype) {
  switch (dtype) {
  case DType::F32:
    return "f32";
  case DType::I32:
    return "i32";
  case DType::BF16:
    return "bf16";
  }
  return "?";
}

int64_t numelOf(const std::vector<int64_t> &shape) {
  int64_t n = 1;
  for (int64_t d : shape) {
    check(d >= 0, "numelOf", "negative dimension in shape " +
                                 detail::shapeToString(shape));
    n *= d;
  }
  return n;
}

namespace {
std::atomic<int64_t> liveBytes{0}, peakBytes{0}, hostCopied{0};

void noteAllocated(int64_t bytes) {
  int64_t now = liveBytes.fetch_add(bytes) + bytes;
  int64_t peak = peakBytes.load();
  while (now > peak && !peakBytes.compare_exchange_weak(peak, now)) {
  }
}
} // namespace

int64_t liveTensorBytes() { return liveBytes.load(); }
int64_t peakTensorBytes() { return peakBytes.load(); }
void resetPeakTensorBytes() { peakBytes.store(liveBytes.load()); }
int64_t hostCopyBytes() { return hostCopied.load(); }
void detail::noteHostCopy(size_t bytes) {
  hostCopied.fetch_add(int64_t(bytes));
}

Tensor::Tensor(std::vector<int64_t> shape, DType dtype)
    : shape_(std::move(shape)), numel_(numelOf(shape_)), dtype_(dtype) {
  const size_t bytes =
      static_cast<size_t>(numel_ ? numel_ : 1) * elementSize(dtype_);
  std::shared_ptr<void> raw = detail::allocate(bytes);
  noteAllocated(int64_t(bytes));
  // The storage keeps the backend's buffer alive and uncounts it when the
  // last tensor sharing it goes.
  void *data = raw.get();
  storage_ = std::shared_ptr<void>(
      data, [raw = std::move(raw), bytes](void *) mutable {
        liveBytes.fetch_sub(int64_t(bytes));
        raw.reset();
      });
}

int64_t Tensor::dim(int i) const {
  int r = rank();
  int j = i < 0 ? i + r : i;
  check(j >= 0 && j < r, "Tensor::dim",
        "dimension " + std::to_string(i) + " out of range for shape " +
            shapeString());
  return shape_[j];
}

namespace {
void checkDtype(const Tensor &t, DType want, const char *fn) {
  check(t.defined(), fn, "tensor is empty");
  check(t.dtype() == want, fn,
        std::string("tensor ") + t.shapeString() + " holds " +
            dtypeName(t.dtype()) + " values, not " + dtypeName(want));
}
} // namespace

float *Tensor::f32() const {
  checkDtype(*this, DType::F32, "Tensor::f32");
  return static_cast<float *>(storage_.get()) + offset_;
}

int32_t *Tensor::i32() const {
  checkDtype(*this, DType::I32, "Tensor::i32");
  return static_cast<int32_t *>(storage_.get()) + offset_;
}

uint16_t *Tensor::bf16() const {
  checkDtype(*this, DType::BF16, "Tensor::bf16");
  return static_cast<uint16_t *>(storage_.get()) + offset_;
}

Tensor Tensor::view(int64_t offset, std::vector<int64_t> shape) const {
  int64_t n = numelOf(shape);
  check(defined(), "Tensor::view", "tensor is empty");
  check(offset >= 0 && offset + n <= numel_, "Tensor::view",
        "range [" + std::to_string(offset) + ", " + std::to_string(offset + n) +
            ") outside a tensor of " + std::to_string(numel_) + " elements");
  Tensor t = *this;
  t.offset_ = offset_ + offset;
  t.shape_ = std::move(shape);
  t.numel_ = n;
  return t;
}

Tensor Tensor::reshape(std::vector<int64_t> shape) const {
  check(numelOf(shape) == numel_, "Tensor::reshape",
        "cannot reshape " + shapeString() + " to " +
            detail::shapeToString(shape));
  return view(0, std::move(shape));
}

Tensor Tensor::clone() const {
  Tensor t(shape_, dtype_);
  const size_t size = elementSize(dtype_);
  if (numel_)
    detail::copyOnBackend(t.storage_.get(),
                          static_cast<char *>(storage_.get()) + offset_ * size,
                          numel_ * size);
  return t;
}

Tensor bf16Copy(const Tensor &t) {
  Tensor c = t.clone();
  roundToBf16(c);
  return c;
}

Tensor toF32(const Tensor &t) {
  if (t.dtype() != DType::BF16)
    return t;
  Tensor w(t.shape());
  if (t.numel())
    detail::widenBf16(w.f32(), t.bf16(), t.numel());
  return w;
}

Tensor toBf16(const Tensor &t) {
  if (t.dtype() == DType::BF16)
    return t;
  Tensor b(t.shape(), DType::BF16);
  if (t.numel())
    detail::narrowToBf16(b.bf16(), t.f32(), t.numel());
  return b;
}

std::vector<float> Tensor::toHost() const {
  std::vector<float> out(numel_);
  if (!numel_)
    return out;
  if (dtype_ == DType::BF16) {
    std::vector<uint16_t> bits(numel_);
    detail::copyToHost(bits.data(), bf16(), numel_ * 2);
    for (int64_t i = 0; i < numel_; ++i)
      out[i] = detail::bf16Value(bits[i]);
    return out;
  }
  detail::copyToHost(out.data(), f32(), numel_ * 4);
  return out;
}

std::vector<int32_t> Tensor::toHostI32() const {
  std::vector<int32_t> out(numel_);
  if (numel_)
    detail::copyToHost(out.data(), i32(), numel_ * 4);
  return out;
}

void Tensor::fromHost(const std::vector<float> &values) {
  check(static_cast<int64_t>(values.size()) == numel_, "Tensor::fromHost",
        "got " + std::to_string(values.size()) + " values for shape " +
            shapeString());
  if (!numel_)
    return;
  if (dtype_ == DType::BF16) {
    std::vector<uint16_t> bits(numel_);
    for (int64_t i = 0; i < numel_; ++i)
      bits[i] = detail::bf16Bits(values[i]);
    detail::copyFromHost(bf16(), bits.data(), numel_ * 2);
    return;
  }
  detail::copyFromHost(f32(), values.data(), numel_ * 4);
}

void Tensor::fromHostI32(const std::vector<int32_t> &values) {
  check(static_cast<int64_t>(values.size()) == numel_, "Tensor::fromHostI32",
        "got " + std::to_string(values.size()) + " values for shape " +
            shapeString());
  if (numel_)
    detail::copyFromHost(i32(), values.data(), numel_ * 4);
}

std::string Tensor::shapeString() const { return detail::shapeToString(shape_); }

} // namespace trident::rt
