// WAV audio files: round trips of both encodings and any channel count, and IoError (never
// a crash) for truncated, malformed and unsupported files.
#include <climits>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "reference.hpp"
#include "strop/io/wav.hpp"

namespace {

using namespace strop;

std::vector<char> file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_bytes(const std::string& path, const std::vector<char>& bytes) {
  std::ofstream(path, std::ios::binary).write(bytes.data(), std::streamsize(bytes.size()));
}

io::WavAudio sample_audio(io::WavEncoding encoding, Index frames, Index channels) {
  io::WavAudio a;
  a.sample_rate = 22050;
  a.encoding = encoding;
  a.samples.resize(frames, channels);
  for (Index t = 0; t < frames; ++t)
    for (Index c = 0; c < channels; ++c)  // multiples of 1/32768: exact in 16-bit PCM
      a.samples(t, c) = float((t * 37 + c * 1001) % 65536 - 32768) / 32768.f;
  return a;
}

// Hand-built files: little-endian fields, chunks (id, size, body, pad byte), the RIFF header.
std::string le(std::uint32_t v, int bytes) {
  std::string out;
  for (int b = 0; b < bytes; ++b)
    out += char((v >> (8 * b)) & 0xFF);
  return out;
}

std::string chunk(const std::string& id, const std::string& body) {
  return id + le(std::uint32_t(body.size()), 4) + body + std::string(body.size() % 2, '\0');
}

std::string riff(const std::string& chunks) {
  return "RIFF" + le(std::uint32_t(4 + chunks.size()), 4) + "WAVE" + chunks;
}

// The 16 bytes every fmt chunk starts with, for one channel.
std::string fmt_fields(std::uint16_t tag, std::uint32_t rate, std::uint16_t bits) {
  return le(tag, 2) + le(1, 2) + le(rate, 4) + le(rate * (bits / 8u), 4) + le(bits / 8u, 2) +
         le(bits, 2);
}

// A mono 16-bit PCM file of 4 samples at `rate`.
std::string pcm_file(std::uint32_t rate) {
  return riff(chunk("fmt ", fmt_fields(1, rate, 16)) + chunk("data", std::string(8, '\1')));
}

// A WAVE_FORMAT_EXTENSIBLE file of 4 samples whose sub-format GUID is `guid` (16 bytes).
std::string extensible_file(std::uint16_t bits, const std::string& guid) {
  const std::string fmt =
      fmt_fields(0xFFFE, 8000, bits) + le(22, 2) + le(bits, 2) + le(4, 4) + guid;
  return riff(chunk("fmt ", fmt) + chunk("data", std::string(4u * bits / 8u, '\0')));
}

void write_text(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

// The message of the IoError that loading `path` raises ("" if it loads).
std::string load_error(const std::string& path) {
  try {
    io::load_wav(path);
  } catch (const IoError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

BOOST_AUTO_TEST_SUITE(wav)

BOOST_AUTO_TEST_CASE(both_encodings_round_trip) {
  const std::string path = "wav_round_trip.wav";
  for (io::WavEncoding e : {io::WavEncoding::Pcm16, io::WavEncoding::Float32})
    for (Index channels : {1, 2, 5}) {
      const io::WavAudio a = sample_audio(e, 101, channels);  // odd sizes: the pad byte
      io::save_wav(path, a);
      const io::WavAudio b = io::load_wav(path);
      BOOST_TEST_CONTEXT("channels " << channels
                                     << (e == io::WavEncoding::Pcm16 ? " pcm16" : " float")) {
        BOOST_TEST(b.sample_rate == 22050);
        BOOST_TEST((b.encoding == e));
        BOOST_TEST((b.samples == a.samples));
      }
    }
  // Float32 holds values outside [-1, 1]; 16-bit PCM refuses them rather than clipping.
  io::WavAudio loud = sample_audio(io::WavEncoding::Float32, 8, 1);
  loud.samples(3, 0) = 7.5f;
  io::save_wav(path, loud);
  BOOST_TEST(io::load_wav(path).samples(3, 0) == 7.5f);
  loud.encoding = io::WavEncoding::Pcm16;
  BOOST_CHECK_THROW(io::save_wav(path, loud), IoError);
  BOOST_TEST(io::load_wav(path).samples(3, 0) == 7.5f);  // the old file is intact
  std::remove(path.c_str());
}

BOOST_AUTO_TEST_CASE(bad_files_are_io_errors) {
  const std::string good = "wav_good.wav", bad = "wav_bad.wav";
  io::save_wav(good, sample_audio(io::WavEncoding::Pcm16, 64, 2));
  const std::vector<char> bytes = file_bytes(good);
  BOOST_CHECK_THROW(io::load_wav("wav_missing.wav"), IoError);
  // Truncated anywhere: in the header, in the fmt chunk, inside the data.
  for (std::size_t keep : {std::size_t(0), std::size_t(11), std::size_t(30), std::size_t(50),
                           bytes.size() - 1, bytes.size() - 100}) {
    write_bytes(bad, std::vector<char>(bytes.begin(), bytes.begin() + std::ptrdiff_t(keep)));
    BOOST_TEST_CONTEXT("first " << keep << " bytes") {
      BOOST_CHECK_THROW(io::load_wav(bad), IoError);
    }
  }
  // Not RIFF; 8-bit PCM (bits per sample at byte 34); a format tag we do not read (byte 20).
  std::vector<char> edited = bytes;
  edited[0] = 'X';
  write_bytes(bad, edited);
  BOOST_CHECK_THROW(io::load_wav(bad), IoError);
  edited = bytes;
  edited[34] = 8;
  write_bytes(bad, edited);
  BOOST_CHECK_THROW(io::load_wav(bad), IoError);
  edited = bytes;
  edited[20] = 2;  // ADPCM
  write_bytes(bad, edited);
  BOOST_CHECK_THROW(io::load_wav(bad), IoError);
  // A data size that is not whole frames (a partial frame at the end).
  edited = bytes;
  edited[40] = char(static_cast<unsigned char>(edited[40]) - 1);
  write_bytes(bad, edited);
  BOOST_CHECK_THROW(io::load_wav(bad), IoError);
  std::remove(good.c_str());
  std::remove(bad.c_str());
}

BOOST_AUTO_TEST_CASE(byte_rates_beyond_the_header_are_refused) {
  // 1 GHz x 4 channels x 4 bytes does not fit the header's 32-bit byte rate (it was wrapped).
  const io::WavAudio audio{1000000000, io::WavEncoding::Float32, HostMatrix<float>::Zero(4, 8)};
  BOOST_CHECK_THROW(io::save_wav("wav_rate.wav", audio), IoError);
  BOOST_TEST(!std::filesystem::exists("wav_rate.wav"));
}

BOOST_AUTO_TEST_CASE(sample_rates_above_int_max_are_refused) {
  // WavAudio holds the rate as an int: these used to load as negative rates.
  const std::string path = "wav_rate_huge.wav";
  for (std::uint32_t rate : {0x80000000u, 0xFFFFFFFFu}) {
    write_text(path, pcm_file(rate));
    const std::string message = load_error(path);
    BOOST_TEST_CONTEXT("rate " << rate << ", message: " << message) {
      BOOST_TEST(message.find(path) != std::string::npos);
      BOOST_TEST(message.find("sample rate of " + std::to_string(rate)) != std::string::npos);
    }
  }
  write_text(path, pcm_file(INT_MAX));
  BOOST_TEST(io::load_wav(path).sample_rate == INT_MAX);
  std::remove(path.c_str());
}

BOOST_AUTO_TEST_CASE(chunk_ids_in_messages_are_escaped) {
  // A NUL byte in the id used to end the message there.
  const std::string path = "wav_chunk_id.wav";
  write_text(path, riff(chunk("fmt ", fmt_fields(1, 8000, 16)) + std::string("\0ab\x01", 4) +
                        le(1000, 4)));
  const std::string message = load_error(path);
  BOOST_TEST(message.find("chunk '\\x00ab\\x01' claims 1000 bytes") != std::string::npos,
             "message: " << message);
  std::remove(path.c_str());
}

BOOST_AUTO_TEST_CASE(extensible_sub_formats_are_compared_whole) {
  const std::string path = "wav_extensible.wav";
  const std::string tail("\x00\x00\x00\x00\x10\x00\x80\x00\x00\xAA\x00\x38\x9B\x71", 14);
  write_text(path,
             extensible_file(16, std::string("\x01\x00", 2) + tail));  // KSDATAFORMAT_SUBTYPE_PCM
  BOOST_TEST((io::load_wav(path).encoding == io::WavEncoding::Pcm16));
  write_text(path, extensible_file(32, std::string("\x03\x00", 2) + tail));  // ..._IEEE_FLOAT
  BOOST_TEST((io::load_wav(path).encoding == io::WavEncoding::Float32));
  // The PCM GUID's first bytes, then another GUID's: not PCM (it used to load as PCM).
  std::string bogus = std::string("\x01\x00", 2) + tail;
  bogus[10] = '\x55';
  write_text(path, extensible_file(16, bogus));
  const std::string message = load_error(path);
  BOOST_TEST(message.find("sub-format") != std::string::npos, "message: " << message);
  std::remove(path.c_str());
}

BOOST_AUTO_TEST_CASE(a_directory_is_not_called_missing) {
  const std::string path = "wav_directory.wav";
  std::filesystem::create_directory(path);
  const std::string message = load_error(path);
  BOOST_TEST(message.find("is a directory") != std::string::npos, "message: " << message);
  std::filesystem::remove(path);
}

BOOST_AUTO_TEST_SUITE_END()
