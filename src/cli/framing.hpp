#pragma once
// Short-time transforms: cutting signals into frames and putting them back.
//
// A T x C matrix (C signals of T samples, e.g. the channels of a WAV file) becomes an
// N x (F C) matrix of frames: frame f of channel c (samples f*hop ... f*hop + N - 1) is
// column c*F + f, with F = 1 + (T - N) / hop frames per channel (samples after the last
// whole frame are not transformed). overlap_average undoes it: each sample is the mean of
// the frames that hold it, which gives the samples back exactly for any hop <= N.
#include "strop/core/error.hpp"
#include "strop/expr/operator_base.hpp"

namespace strop::cli {

inline Index frames_per_channel(Index samples, Index frame, Index hop) {
  require<ShapeError>(frame >= 1 && hop >= 1, "--frame and --hop must be >= 1, got --frame ", frame,
                      " --hop ", hop);
  require<ShapeError>(samples >= frame, "--frame ", frame, " is longer than the signals (", samples,
                      " samples)");
  return 1 + (samples - frame) / hop;
}

template <class T>
HostMatrix<T> cut_frames(const HostMatrix<T>& signals, Index frame, Index hop) {
  const Index per_channel = frames_per_channel(signals.rows(), frame, hop);
  HostMatrix<T> frames(frame, per_channel * signals.cols());
  for (Index c = 0; c < signals.cols(); ++c)
    for (Index f = 0; f < per_channel; ++f)
      frames.col(c * per_channel + f) = signals.col(c).segment(f * hop, frame);
  return frames;
}

template <class T>
HostMatrix<T> overlap_average(const HostMatrix<T>& frames, Index hop, Index channels) {
  require<ShapeError>(hop >= 1 && hop <= frames.rows(),
                      "--hop must be in [1, --frame = ", frames.rows(),
                      "] to put frames back together, got ", hop);
  require<ShapeError>(channels >= 1 && frames.cols() % channels == 0, "--channels ", channels,
                      " does not divide the ", frames.cols(), " frames");
  const Index per_channel = frames.cols() / channels;
  const Index samples = per_channel == 0 ? 0 : (per_channel - 1) * hop + frames.rows();
  HostMatrix<T> signals = HostMatrix<T>::Zero(samples, channels);
  Eigen::VectorXd count = Eigen::VectorXd::Zero(samples);
  for (Index f = 0; f < per_channel; ++f)
    count.segment(f * hop, frames.rows()).array() += 1.0;
  for (Index c = 0; c < channels; ++c)
    for (Index f = 0; f < per_channel; ++f)
      signals.col(c).segment(f * hop, frames.rows()) += frames.col(c * per_channel + f);
  for (Index t = 0; t < samples; ++t)
    signals.row(t) /= T(RealOf<T>(count(t)));
  return signals;
}

}  // namespace strop::cli
