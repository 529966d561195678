// Uses an installed strop from a shared library (strop is position-independent, so a plugin
// or a Python extension can link it): a Kronecker product applied lazily, checked against the
// Kronecker product written out entry by entry (on the GPU too where there is one), then
// saved to HDF5 and loaded back.
#include <cstdio>
#include <string>

#include <strop/io/hdf5.hpp>
#include <strop/strop.hpp>

using namespace strop;

extern "C" int check_strop(const char* file) {
  const std::string path = file;
  const Index p = 3, q = 4, batch = 5;
  const HostMatrix<double> F = HostMatrix<double>::Random(p, p);
  const HostMatrix<double> G = HostMatrix<double>::Random(q, q);
  const HostMatrix<double> X = HostMatrix<double>::Random(p * q, batch);

  // (F kron G)[i q + k, j q + l] = F[i, j] G[k, l], written out by hand.
  HostMatrix<double> K(p * q, p * q);
  for (Index i = 0; i < p; ++i)
    for (Index j = 0; j < p; ++j)
      for (Index k = 0; k < q; ++k)
        for (Index l = 0; l < q; ++l)
          K(i * q + k, j * q + l) = F(i, j) * G(k, l);

  const AnyOperator<double> A = kron(Dense<double>(F), Dense<double>(G));
  const HostMatrix<double> Y = A * X;
  const double error = (Y - K * X).cwiseAbs().maxCoeff();
  std::printf("max |kron(F, G) X - reference| = %.3g\n", error);
  if (!(error < 1e-13)) return 1;

  if (cuda_available()) {  // the CUDA kernels of the installed library, where a GPU is
    const HostMatrix<double> Yd = (A * to_device(X)).to_host();
    const double device_error = (Yd - K * X).cwiseAbs().maxCoeff();
    std::printf("on %s: max |kron(F, G) X - reference| = %.3g\n", device_name(), device_error);
    if (!(device_error < 1e-13)) return 1;
  }

  io::save(path, A, "kron");
  const AnyOperator<double> loaded = io::load<double>(path, "kron");
  const bool identical = (loaded.to_dense().array() == K.array()).all();
  std::printf("loaded from %s: %s\n", path.c_str(), identical ? "identical" : "DIFFERENT");
  std::remove(file);
  return identical ? 0 : 1;
}
