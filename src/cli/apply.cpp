// `strop apply OP.h5[:name] SIGNALS -o OUT`: Y = A X (or A^T X, A^H X) for a batch of
// signals read from a .npy file or an HDF5 dataset.
//
// Signals are N x B, one signal per column (the library's convention, and what
// `A @ X` means in numpy). With --batch-rows they are B x N, one signal per row (numpy's
// usual "batch first" (B, N) arrays); the output then is B x M as well.
#include <chrono>
#include <cstdio>
#include <string>

#include "cli/commands.hpp"
#include "cli/device_choice.hpp"
#include "cli/gpu_apply.hpp"
#include "cli/locations.hpp"
#include "cli/scalar_dispatch.hpp"
#include "cli/table.hpp"
#include "strop/io/hdf5.hpp"
#include "strop/strop.hpp"

namespace strop::cli {
namespace {

struct ApplyOptions {
  std::string op;
  std::string signals;
  std::string output;
  std::string device = "cpu";
  bool transpose = false;
  bool adjoint = false;
  bool batch_rows = false;
  bool cast = false;
  bool quiet = false;
};

int run_apply(const ApplyOptions& o) {
  const OperatorLocation where = parse_operator_location(o.op);
  const MatrixLocation input = parse_matrix_location(o.signals);
  const MatrixLocation output = parse_matrix_location(o.output);
  // As in `strop transform`: the output never replaces the input.
  require<IoError>(!same_file(input.file, output.file) ||
                       (!input.is_npy() && !output.is_npy() && input.dataset != output.dataset),
                   "apply: the output '", output.text(),
                   "' is the input; write the result somewhere else");
  const ResolvedOperator stored = resolve_operator(where);
  const bool gpu = use_gpu(o.device, "apply");
  const Op op = o.adjoint ? Op::Adjoint : o.transpose ? Op::Trans : Op::NoTrans;
  const char* op_text = to_string(op);

  return with_scalar_type(stored.scalar_type, [&]<class T>() {
    const AnyOperator<T> a = io::load<T>(where.file, stored.name);
    HostMatrix<T> x = read_matrix<T>(input, o.cast ? Cast::any : Cast::lossless);
    const Index in = op == Op::NoTrans ? a.cols() : a.rows();
    const Index out = op == Op::NoTrans ? a.rows() : a.cols();
    // (Signals of length 1 are fine for an operator that takes them.)
    require<ShapeError>(!(o.batch_rows && x.cols() == 1 && x.rows() > 1 && in != 1),
                        batch_rows_of_one_column("apply", input, x.rows()));
    if (o.batch_rows) x.transposeInPlace();
    require<ShapeError>(
        x.rows() == in, "apply: A = '", stored.name, "' is ", format_shape(a.rows(), a.cols()),
        ", so ", op_text, " takes signals of length ", in, ", but '", input.text(), "' holds ",
        o.batch_rows ? format_shape(x.cols(), x.rows()) : format_shape(x.rows(), x.cols()),
        o.batch_rows ? " (B x N, one signal per row, as --batch-rows says)"
                     : " (read as N x B, one signal per column; pass --batch-rows for B x N)");

    HostMatrix<T> y(out, x.cols());
    const auto start = std::chrono::steady_clock::now();
    if (gpu) {
      y = apply_on_gpu(a, op, x);
    } else {  // batch-last (RowMajor): the layout the KS kernels prefer
      using BatchLast = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
      const BatchLast xr = x;
      BatchLast yr(out, x.cols());
      a.apply(op, view(xr), view(yr));
      y = yr;
    }
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (o.batch_rows) y.transposeInPlace();
    write_matrix<T>(output, y);
    if (!o.quiet)
      std::printf(
          "strop apply: %s with A = %s (%s, %s) to %lld signal%s of %s on %s in %s ms "
          "-> %s (%s)\n",
          op_text, stored.name.c_str(), format_shape(a.rows(), a.cols()).c_str(),
          stored.scalar_type.c_str(), static_cast<long long>(x.cols()), x.cols() == 1 ? "" : "s",
          input.text().c_str(), gpu ? "cuda" : "cpu", format_ms(seconds).c_str(),
          output.text().c_str(), format_shape(y.rows(), y.cols()).c_str());
    return 0;
  });
}

}  // namespace

Subcommand add_apply_command(CLI::App& parent) {
  auto o = std::make_shared<ApplyOptions>();
  CLI::App* app = parent.add_subcommand(
      "apply",
      "Apply a saved operator to a batch of signals: OUT = A SIGNALS.\n"
      "SIGNALS and OUT are 'file.npy' or 'file.h5:/dataset'. SIGNALS is N x B, one signal per\n"
      "column (numpy: Y = A @ X); with --batch-rows it is B x N, one signal per row, and so\n"
      "is OUT. Signals are converted to the operator's scalar type when no value changes.");
  app->add_option("OP", o->op, "The operator: file.h5 (its only operator) or file.h5:NAME")
      ->required();
  app->add_option("SIGNALS", o->signals, "The signals: file.npy or file.h5:/dataset")->required();
  app->add_option("-o,--output", o->output,
                  "Where to write the result: file.npy or "
                  "file.h5:/dataset")
      ->required();
  auto* t = app->add_flag("-t,--transpose", o->transpose, "Apply A^T instead of A");
  auto* h = app->add_flag("--adjoint", o->adjoint, "Apply A^H (conjugate transpose) instead of A");
  t->excludes(h);
  app->add_flag("--batch-rows", o->batch_rows,
                "Signals (and the output) are B x N, one signal per row");
  app->add_flag("--cast", o->cast,
                "Convert the signals to the operator's scalar type even when values change "
                "(e.g. float64 signals, float32 operator)");
  app->add_flag("-q,--quiet", o->quiet, "Print nothing on success");
  add_device_option(*app, o->device, true);
  return {app, [o] { return run_apply(*o); }};
}

}  // namespace strop::cli
