#pragma once
// detail::FourierForm, the tag that KSChain carries when dft() or inverse_dft() built it (a
// header of its own, next to hadamard_form.hpp, so that the Product hook can name it).
#include <complex>
#include <memory>
#include <vector>

#include "strop/core/device_cache.hpp"
#include "strop/core/scalar.hpp"

namespace strop {

namespace detail {
// What dft() knows about the chain it builds: chain * P = scale * F_n^{sign} where P is the
// permutation with indices `input_order` (the digit reversal) and F_n^{sign} the matrix
// exp(sign 2 pi i j k / n) (sign -1: the forward DFT, +1: its conjugate). The product of
// such a chain and that permutation is applied whole by the Stockham FFT (in order in, in
// order out, no digit reversal pass): on the host (operators/transforms/fft_host.cpp) and on
// the GPU (fft_kernel.cu). The chain alone, and derived chains, apply from their factors.
struct FourierForm {
  Index n = 1;
  int sign = -1;
  double scale = 1.0;
  std::shared_ptr<const std::vector<Index>> input_order;
  // exp(sign 2 pi i e / n) for e = 0 .. n-1, exactly rounded from double.
  std::shared_ptr<const std::vector<std::complex<double>>> roots;
  // The GPU kernel's table of stage twiddles (fft_device_twiddles), made on first use.
  std::shared_ptr<DeviceCache<std::complex<float>>> device_twiddles =
      std::make_shared<DeviceCache<std::complex<float>>>();
};
}  // namespace detail

}  // namespace strop
