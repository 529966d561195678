// WAV audio files: round trips of both encodings and any channel count, and IoError (never
// a crash) for truncated, malformed and unsupported files.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
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

BOOST_AUTO_TEST_SUITE_END()
