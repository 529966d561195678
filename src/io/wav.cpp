// WAV files: a RIFF container of chunks (id, 32-bit size, data, a pad byte when the size is
// odd); "fmt " says how samples are encoded, "data" holds the interleaved frames.
#include "strop/io/wav.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <optional>
#include <vector>

#include "io/atomic_file.hpp"
#include "strop/core/error.hpp"

namespace strop::io {
namespace {

constexpr std::uint16_t kFormatPcm = 1;
constexpr std::uint16_t kFormatFloat = 3;
constexpr std::uint16_t kFormatExtensible = 0xFFFE;

template <class... Parts>
[[noreturn]] void fail(const std::string& path, Parts&&... parts) {
  throw IoError(detail::concat(path, ": ", std::forward<Parts>(parts)...));
}

std::uint32_t read_le(const unsigned char* p, int bytes) {
  std::uint32_t v = 0;
  for (int b = bytes - 1; b >= 0; --b)
    v = (v << 8) | p[b];
  return v;
}

void write_le(std::ostream& out, std::uint32_t v, int bytes) {
  for (int b = 0; b < bytes; ++b)
    out.put(static_cast<char>((v >> (8 * b)) & 0xFF));
}

// A chunk id for a message: 4 bytes that may be anything, non-printable ones (a NUL would
// end the message early) written as \xNN.
std::string chunk_name(const unsigned char* id) {
  std::string name;
  for (int i = 0; i < 4; ++i) {
    if (id[i] >= 0x20 && id[i] < 0x7F) {
      name += char(id[i]);
    } else {
      constexpr char kHex[] = "0123456789abcdef";
      name += {'\\', 'x', kHex[id[i] >> 4], kHex[id[i] & 0xF]};
    }
  }
  return name;
}

struct Format {
  std::uint16_t tag = 0;
  std::uint16_t channels = 0;
  std::uint32_t sample_rate = 0;
  std::uint16_t block_align = 0;
  std::uint16_t bits = 0;
};

Format parse_format(const std::string& path, const unsigned char* p, std::uint32_t size) {
  if (size < 16) fail(path, "the fmt chunk has ", size, " bytes, fewer than the 16 it needs");
  Format f{static_cast<std::uint16_t>(read_le(p, 2)), static_cast<std::uint16_t>(read_le(p + 2, 2)),
           read_le(p + 4, 4), static_cast<std::uint16_t>(read_le(p + 12, 2)),
           static_cast<std::uint16_t>(read_le(p + 14, 2))};
  if (f.tag == kFormatExtensible) {
    if (size < 40) fail(path, "the WAVE_FORMAT_EXTENSIBLE fmt chunk has only ", size, " bytes");
    // The standard sub-format GUIDs (KSDATAFORMAT_SUBTYPE_PCM, ..._IEEE_FLOAT) hold the
    // format tag in their first 4 bytes and these 12 after it; any other GUID is another
    // encoding altogether, whatever its first bytes say.
    static constexpr unsigned char kGuidTail[12] = {0x00, 0x00, 0x10, 0x00, 0x80, 0x00,
                                                    0x00, 0xAA, 0x00, 0x38, 0x9B, 0x71};
    const unsigned char* guid = p + 24;
    const std::uint32_t sub_format = read_le(guid, 4);
    if (sub_format > 0xFFFF || std::memcmp(guid + 4, kGuidTail, sizeof kGuidTail) != 0)
      fail(path,
           "unsupported WAVE_FORMAT_EXTENSIBLE sub-format (not a standard format GUID); "
           "supported: 16-bit PCM and 32-bit float");
    f.tag = static_cast<std::uint16_t>(sub_format);
  }
  const bool pcm16 = f.tag == kFormatPcm && f.bits == 16;
  const bool float32 = f.tag == kFormatFloat && f.bits == 32;
  if (!pcm16 && !float32)
    fail(path, "unsupported WAV encoding (format tag ", f.tag, ", ", f.bits,
         " bits per sample); supported: 16-bit PCM and 32-bit float");
  if (f.channels == 0) fail(path, "the fmt chunk says 0 channels");
  if (f.sample_rate == 0) fail(path, "the fmt chunk says a sample rate of 0");
  // WavAudio holds the rate as an int: a larger one would read as negative.
  if (f.sample_rate > std::uint32_t(std::numeric_limits<int>::max()))
    fail(path, "the fmt chunk says a sample rate of ", f.sample_rate, " Hz, more than the ",
         std::numeric_limits<int>::max(), " this reader takes");
  if (f.block_align != f.channels * f.bits / 8)
    fail(path, "inconsistent fmt chunk: block align ", f.block_align, " for ", f.channels,
         " channels of ", f.bits, " bits");
  return f;
}

std::vector<unsigned char> read_whole_file(const std::string& path) {
  std::error_code ec;
  const std::filesystem::file_status status = std::filesystem::status(path, ec);
  if (status.type() == std::filesystem::file_type::not_found) fail(path, "no such file");
  if (ec) fail(path, "cannot open: ", ec.message());
  if (std::filesystem::is_directory(status)) fail(path, "is a directory, not a WAV file");
  if (!std::filesystem::is_regular_file(status)) fail(path, "not a regular file");
  std::ifstream in(path, std::ios::binary);
  if (!in) fail(path, "cannot open");
  const auto bytes = std::filesystem::file_size(path, ec);
  if (ec) fail(path, "cannot read its size: ", ec.message());
  std::vector<unsigned char> data(static_cast<std::size_t>(bytes));
  in.read(reinterpret_cast<char*>(data.data()), std::streamsize(data.size()));
  if (!in) fail(path, "cannot read");
  return data;
}

}  // namespace

WavAudio load_wav(const std::string& path) {
  const std::vector<unsigned char> file = read_whole_file(path);
  if (file.size() < 12 || std::memcmp(file.data(), "RIFF", 4) != 0 ||
      std::memcmp(file.data() + 8, "WAVE", 4) != 0)
    fail(path, "not a WAV file (no RIFF/WAVE header)");
  std::optional<Format> format;
  const unsigned char* data = nullptr;
  std::uint32_t data_bytes = 0;
  std::size_t at = 12;
  while (at + 8 <= file.size() && data == nullptr) {
    const unsigned char* id = file.data() + at;
    const std::uint32_t size = read_le(id + 4, 4);
    const std::size_t body = at + 8;
    if (size > file.size() - body)
      fail(path, "truncated: chunk '", chunk_name(id), "' claims ", size, " bytes but only ",
           file.size() - body, " remain");
    if (std::memcmp(id, "fmt ", 4) == 0) {
      format = parse_format(path, file.data() + body, size);
    } else if (std::memcmp(id, "data", 4) == 0) {
      if (!format) fail(path, "the data chunk comes before any fmt chunk");
      data = file.data() + body;
      data_bytes = size;
    }
    at = body + size + (size % 2);
  }
  if (!format) fail(path, "no fmt chunk");
  if (data == nullptr) fail(path, "no data chunk");
  if (data_bytes % format->block_align != 0)
    fail(path, "truncated: the data chunk holds ", data_bytes, " bytes, not a whole number of ",
         format->block_align, "-byte frames");

  WavAudio audio;
  audio.sample_rate = static_cast<int>(format->sample_rate);
  audio.encoding = format->tag == kFormatPcm ? WavEncoding::Pcm16 : WavEncoding::Float32;
  const Index frames = data_bytes / format->block_align;
  const Index channels = format->channels;
  audio.samples.resize(frames, channels);
  const int bytes = format->bits / 8;
  for (Index t = 0; t < frames; ++t)
    for (Index c = 0; c < channels; ++c) {
      const std::uint32_t raw = read_le(data + (t * channels + c) * bytes, bytes);
      audio.samples(t, c) = audio.encoding == WavEncoding::Pcm16
                                ? float(static_cast<std::int16_t>(raw)) / 32768.f
                                : std::bit_cast<float>(raw);
    }
  return audio;
}

void save_wav(const std::string& path, const WavAudio& audio) {
  const HostMatrix<float>& s = audio.samples;
  const bool pcm = audio.encoding == WavEncoding::Pcm16;
  if (s.cols() < 1 || s.cols() > 0xFFFF) fail(path, "cannot write ", s.cols(), " channels");
  if (audio.sample_rate <= 0) fail(path, "cannot write a sample rate of ", audio.sample_rate);
  if (!s.allFinite()) fail(path, "the samples hold NaN or infinite values");
  if (pcm && s.size() > 0 && s.cwiseAbs().maxCoeff() > 1.f)
    fail(path, "samples reach ", s.cwiseAbs().maxCoeff(),
         ", outside the [-1, 1] that 16-bit PCM holds; write 32-bit float instead");
  const std::uint32_t bits = pcm ? 16 : 32;
  const std::uint32_t block_align = std::uint32_t(s.cols()) * bits / 8;
  // The header stores the byte rate (sample rate x block align) and the block align in 32
  // and 16 bits: refuse what they cannot hold rather than write a wrapped value.
  if (block_align > 0xFFFFu || std::uint64_t(audio.sample_rate) * block_align > 0xFFFFFFFFu)
    fail(path, "cannot write ", s.cols(), " channels at ", audio.sample_rate,
         " Hz: the byte rate does not fit a WAV header");
  const std::uint64_t data_bytes = std::uint64_t(s.rows()) * block_align;
  // fmt: 16 bytes for PCM; 18 (with cbSize = 0) and a fact chunk for float, as the spec asks.
  const std::uint32_t fmt_bytes = pcm ? 16 : 18;
  const std::uint64_t riff_bytes =
      4 + (8 + fmt_bytes) + (pcm ? 0 : 12) + 8 + data_bytes + (data_bytes % 2);
  if (riff_bytes > 0xFFFFFFFFu) fail(path, "too many samples for a WAV file (4 GiB)");

  write_file_atomically(path, [&](std::ostream& out) {
    out.write("RIFF", 4);
    write_le(out, std::uint32_t(riff_bytes), 4);
    out.write("WAVEfmt ", 8);
    write_le(out, fmt_bytes, 4);
    write_le(out, pcm ? kFormatPcm : kFormatFloat, 2);
    write_le(out, std::uint32_t(s.cols()), 2);
    write_le(out, std::uint32_t(audio.sample_rate), 4);
    write_le(out, std::uint32_t(audio.sample_rate) * block_align, 4);
    write_le(out, block_align, 2);
    write_le(out, bits, 2);
    if (!pcm) {
      write_le(out, 0, 2);  // cbSize
      out.write("fact", 4);
      write_le(out, 4, 4);
      write_le(out, std::uint32_t(s.rows()), 4);
    }
    out.write("data", 4);
    write_le(out, std::uint32_t(data_bytes), 4);
    for (Index t = 0; t < s.rows(); ++t)
      for (Index c = 0; c < s.cols(); ++c) {
        const float v = s(t, c);
        if (pcm) {
          const long q = std::clamp(std::lround(double(v) * 32768.0), -32768L, 32767L);
          write_le(out, static_cast<std::uint16_t>(static_cast<std::int16_t>(q)), 2);
        } else {
          write_le(out, std::bit_cast<std::uint32_t>(v), 4);
        }
      }
    if (data_bytes % 2) out.put(0);
  });
}

}  // namespace strop::io
