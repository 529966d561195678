#pragma once
// WAV audio (RIFF/WAVE, little-endian): 16-bit integer PCM and 32-bit IEEE float samples,
// any number of channels, plain or WAVE_FORMAT_EXTENSIBLE headers. Other encodings (8/24-bit
// PCM, 64-bit float, compressed) and RIFX/RF64 files are refused. No third-party library.
//
// Every problem raises IoError naming the file: missing file (or a directory), not
// RIFF/WAVE, no fmt or data chunk, an unsupported encoding (named; for extensible headers,
// a sub-format that is not the standard PCM or IEEE float GUID), inconsistent header fields,
// a sample rate above INT_MAX, chunks running past the end of the file (truncated), a data
// size that is not a whole number of frames.
#include <string>

#include "strop/expr/operator_base.hpp"

namespace strop::io {

enum class WavEncoding { Pcm16, Float32 };

struct WavAudio {
  int sample_rate = 48000;
  WavEncoding encoding = WavEncoding::Float32;
  // frames x channels. 16-bit PCM sample s reads as s / 32768, in [-1, 1).
  HostMatrix<float> samples;
};

WavAudio load_wav(const std::string& path);

// Writes atomically (temporary file, then rename). Pcm16 stores round(32768 v), except that
// values rounding to 32768 (up to 1.0, which 16 bits cannot hold) store 32767 and read back
// as 1 - 2^-15; it refuses (IoError) values outside [-1, 1] rather than clipping them.
// Float32 stores any finite value.
void save_wav(const std::string& path, const WavAudio& audio);

}  // namespace strop::io
