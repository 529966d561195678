#pragma once
// Internal: the Stockham FFT kernel (fft_kernel.cu) that applies the product dft() builds on
// the GPU, for complex<float> signals in either layout (fastest with contiguous signals).
#include <complex>
#include <vector>

#include "strop/core/context.hpp"
#include "strop/core/view.hpp"

namespace strop::detail {

// The largest n the kernel takes: a signal split over two blocks of 2^14 values.
inline constexpr Index kFftDeviceMaxSize = 32768;

// Whether the kernel takes size n: n = 2^k with 16 <= n <= kFftDeviceMaxSize (any strides)
// whose blocks fit the device's shared memory (2^14 values take 132 KiB: n >= 16384 needs
// more than sm_86/89 have; other paths take those transforms there).
bool fft_device_supported(Index n);

// The kernel's table of stage twiddles for size n (host values, to be copied to the device
// once per transform), and its length.
std::vector<std::complex<float>> fft_device_twiddles(Index n);
Index fft_device_twiddle_count(Index n);

// Y = alpha F X + beta Y with F = exp(-2 pi i j k / n) (forward) or its conjugate (inverse),
// for device views X and Y that do not overlap; `twiddles` the device copy of
// fft_device_twiddles(n). DeviceError unless supported.
void fft_device_apply(Index n, bool inverse, const std::complex<float>* twiddles,
                      ConstView<std::complex<float>> X, MatrixView<std::complex<float>> Y,
                      std::complex<float> alpha, std::complex<float> beta, Context& ctx);

}  // namespace strop::detail
