// `strop transform --kind hadamard|dft|dct [--inverse] IN -o OUT`: a fast transform
// (strop/operators/transforms.hpp) of every signal in IN.
//
// IN and OUT are 'file.npy', 'file.h5:/dataset' or 'file.wav'. Matrices are N x B, one
// signal per column (--batch-rows: B x N); a WAV file is one signal per channel. With
// --frame N --hop H the signals are cut into frames first (a short-time transform, see
// framing.hpp); --inverse with --frame puts the frames back together.
#include <chrono>
#include <cstdio>
#include <string>

#include "cli/commands.hpp"
#include "cli/framing.hpp"
#include "cli/locations.hpp"
#include "cli/scalar_dispatch.hpp"
#include "cli/table.hpp"
#include "strop/io/wav.hpp"
#include "strop/strop.hpp"

namespace strop::cli {
namespace {

struct TransformCliOptions {
  std::string kind;
  std::string input;
  std::string output;
  std::string normalization = "backward";
  bool inverse = false;
  int factors = 0;
  Index frame = 0;
  Index hop = 0;
  Index channels = 1;
  int sample_rate = 48000;
  bool batch_rows = false;
  bool quiet = false;
};

bool is_wav(const std::string& file) {
  return has_extension(file, ".wav");
}

// Signals as read: a matrix (file.npy, file.h5:/dataset) or a WAV file.
struct Endpoint {
  bool wav = false;
  std::string file;
  MatrixLocation matrix;
  std::string text() const { return wav ? file : matrix.text(); }
};

Endpoint parse_endpoint(const std::string& text) {
  if (is_wav(text)) return {true, text, {}};
  const MatrixLocation m = parse_matrix_location(text);
  return {false, m.file, m};
}

// The output must not replace the input (the same file, or the same HDF5 dataset).
void require_distinct(const Endpoint& in, const Endpoint& out) {
  const bool other_dataset =
      !in.wav && !out.wav && !in.matrix.is_npy() && in.matrix.dataset != out.matrix.dataset;
  require<IoError>(!same_file(in.file, out.file) || other_dataset, "transform: the output '",
                   out.text(), "' is the input; write the result somewhere else");
}

// The scalar type the transform runs in: the input's, made complex for the DFT.
std::string working_type(const std::string& stored, TransformKind kind) {
  if (kind != TransformKind::Dft) return stored;
  if (stored == "float32") return "complex64";
  if (stored == "float64") return "complex128";
  return stored;
}

template <class T>
std::size_t count_ks_factors(const AnyOperator<T>& a) {
  if (const auto* chain = a.template as<KSChain<T>>()) return chain->size();
  std::size_t total = 0;
  for (const AnyOperator<T>& child : a.children())
    total += count_ks_factors(child);
  return total;
}

template <class T>
HostMatrix<float> real_samples(const HostMatrix<T>& y, const std::string& where) {
  if constexpr (is_complex_v<T>) {
    // An inverse DFT of a real signal's spectrum is real up to rounding.
    const double scale = std::max<double>(y.cwiseAbs().maxCoeff(), 1e-30);
    const double imaginary = y.size() ? y.imag().cwiseAbs().maxCoeff() : 0.0;
    require<IoError>(imaginary <= 1e-4 * scale, "transform: '", where,
                     "' is a WAV file, which holds real samples, but the result is complex (",
                     "largest imaginary part ", imaginary, "); write .npy or .h5 instead");
    return y.real().template cast<float>();
  } else {
    return y.template cast<float>();
  }
}

int run_transform(const TransformCliOptions& o) {
  const TransformKind kind = parse_transform_kind(o.kind);
  const TransformOptions options{parse_normalization(o.normalization), o.factors};
  const Endpoint in = parse_endpoint(o.input);
  const Endpoint out = parse_endpoint(o.output);
  require_distinct(in, out);
  const bool framed = o.frame > 0;
  const Index hop = o.hop > 0 ? o.hop : o.frame;
  require<ShapeError>(!(o.batch_rows && (in.wav || out.wav)), "transform: --batch-rows is ",
                      "for matrices; a WAV file is one signal per channel");

  io::WavAudio audio;
  std::string stored;
  if (in.wav) {
    audio = io::load_wav(in.file);
    stored = "float32";
  } else {
    stored = stored_scalar_type(in.matrix);
  }

  return with_scalar_type(working_type(stored, kind), [&]<class T>() {
    HostMatrix<T> x =
        in.wav ? HostMatrix<T>(audio.samples.cast<T>()) : read_matrix<T>(in.matrix, Cast::lossless);
    // A transform of signals of length 1 changes nothing: a single column is one signal.
    require<ShapeError>(!(o.batch_rows && x.cols() == 1 && x.rows() > 1),
                        batch_rows_of_one_column("transform", in.matrix, x.rows()));
    if (o.batch_rows) x.transposeInPlace();
    if (framed && !o.inverse) x = cut_frames(x, o.frame, hop);
    require<ShapeError>(x.rows() >= 1 && x.cols() >= 1, "transform: '", in.text(),
                        "' holds no signals (", format_shape(x.rows(), x.cols()), ")");
    require<ShapeError>(!framed || x.rows() == o.frame, "transform: --inverse --frame ", o.frame,
                        " needs frames of ", o.frame, " samples, '", in.text(), "' holds ",
                        format_shape(x.rows(), x.cols()));

    const Index n = x.rows();
    const AnyOperator<T> a = make_transform<T>(kind, n, o.inverse, options);
    using BatchLast = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
    const BatchLast xr = x;
    BatchLast yr(n, x.cols());
    const auto start = std::chrono::steady_clock::now();
    a.apply(Op::NoTrans, view(xr), view(yr));
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    HostMatrix<T> y = yr;
    if (framed && o.inverse) y = overlap_average(y, hop, o.channels);
    if (o.batch_rows) y.transposeInPlace();

    if (out.wav) {
      require<ShapeError>(!framed || o.inverse, "transform: a short-time transform gives ",
                          "frames, not audio; write '", out.text(), "' as .npy or .h5");
      io::save_wav(out.file, {in.wav ? audio.sample_rate : o.sample_rate, io::WavEncoding::Float32,
                              real_samples(y, out.text())});
    } else {
      write_matrix<T>(out.matrix, y);
    }
    if (!o.quiet)
      std::printf(
          "strop transform: %s%s (%s, n = %lld, %zu KS factor%s) of %lld signal%s of "
          "%s in %s ms -> %s (%s)\n",
          o.inverse ? "inverse " : "", std::string(to_string(kind)).c_str(),
          std::string(to_string(options.normalization)).c_str(), static_cast<long long>(n),
          count_ks_factors(a), count_ks_factors(a) == 1 ? "" : "s",
          static_cast<long long>(x.cols()), x.cols() == 1 ? "" : "s", in.text().c_str(),
          format_ms(seconds).c_str(), out.text().c_str(), format_shape(y.rows(), y.cols()).c_str());
    return 0;
  });
}

}  // namespace

Subcommand add_transform_command(CLI::App& parent) {
  auto o = std::make_shared<TransformCliOptions>();
  CLI::App* app = parent.add_subcommand(
      "transform",
      "Fast Hadamard, DFT or DCT-II of every signal in IN, as a butterfly (KS) chain.\n"
      "IN and OUT are 'file.npy', 'file.h5:/dataset' or 'file.wav' (16-bit PCM or 32-bit\n"
      "float, any channels; written as 32-bit float). Matrices are N x B, one signal per\n"
      "column (--batch-rows: B x N); a WAV file is one signal per channel. The DFT runs in\n"
      "complex (real signals are promoted); its inverse may be written to WAV when real.\n"
      "Sizes: hadamard n = 2^k or m 2^k (m = 12, 20, 28); dft/dct n = m 2^k with odd m <= 63.");
  app->add_option("--kind", o->kind, "hadamard, dft or dct")->required();
  app->add_option("IN", o->input, "The signals: file.npy, file.h5:/dataset or file.wav")
      ->required();
  app->add_option("-o,--output", o->output,
                  "Where to write: file.npy, file.h5:/dataset or "
                  "file.wav (never the input)")
      ->required();
  app->add_flag("--inverse", o->inverse, "The inverse transform (DCT: a scaled DCT-III)");
  app->add_option("--norm", o->normalization,
                  "backward (forward unscaled, exact inverse), ortho (unitary) or none "
                  "(neither scaled)")
      ->capture_default_str();
  app->add_option("--factors", o->factors,
                  "KS factors for the power-of-two part (0: the default; a large number: the "
                  "full radix-2 chain)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  auto* frame = app->add_option("--frame", o->frame,
                                "Short-time transform: cut each signal into frames of N samples "
                                "(output N x frames, channel-major); with --inverse, put frames "
                                "back together")
                    ->check(CLI::PositiveNumber);
  app->add_option("--hop", o->hop, "Samples between frame starts (default: --frame)")
      ->needs(frame)
      ->check(CLI::PositiveNumber);
  app->add_option("--channels", o->channels,
                  "With --inverse --frame on a matrix: how many signals the frames came from")
      ->needs(frame)
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app->add_option("--sample-rate", o->sample_rate,
                  "Sample rate of a WAV output when the input is not WAV")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app->add_flag("--batch-rows", o->batch_rows, "Matrices are B x N, one signal per row");
  app->add_flag("-q,--quiet", o->quiet, "Print nothing on success");
  return {app, [o] { return run_transform(*o); }};
}

}  // namespace strop::cli
