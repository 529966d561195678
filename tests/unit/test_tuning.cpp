// The tuning cache (strop/core/tuning.hpp): choices kept in memory and in a file, reloaded,
// and malformed files rejected without touching the cache or the file.
#include <unistd.h>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "reference.hpp"

using namespace strop;

namespace {
std::string read_all(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// Restores the process-wide state after each case.
struct TuningState {
  std::string dir =
      (std::filesystem::temp_directory_path() / ("strop-tuning-" + std::to_string(::getpid())))
          .string();
  TuningState() { std::filesystem::create_directories(dir); }
  ~TuningState() {
    set_tuning_file("");
    clear_tuned_choices();
    set_tuning_enabled(false);
    std::filesystem::remove_all(dir);
  }
};
}  // namespace

BOOST_AUTO_TEST_SUITE(tuning_cache)

BOOST_AUTO_TEST_CASE(choices_persist_in_the_file) {
  TuningState state;
  const std::string path = state.dir + "/cache.txt";
  set_tuning_file(path);
  BOOST_TEST(tuning_file() == path);
  BOOST_TEST(!tuned_choice("kron|gpu|float32|B=4|2x2").has_value());
  store_tuned_choice("kron|gpu|float32|B=4|2x2", "gemm");
  store_tuned_choice("ks|gpu|float64|a=1", "fused");
  store_tuned_choice("kron|gpu|float32|B=4|2x2", "sliced");  // replaces the first choice
  BOOST_TEST(*tuned_choice("kron|gpu|float32|B=4|2x2") == "sliced");
  BOOST_TEST(
      read_all(path) ==
      "# strop tuning cache v1\nkron|gpu|float32|B=4|2x2\tsliced\nks|gpu|float64|a=1\tfused\n");
  // A fresh start (memory cleared) reloads the file.
  set_tuning_file("");
  clear_tuned_choices();
  BOOST_TEST(tuned_choice_count() == 0u);
  set_tuning_file(path);
  BOOST_TEST(tuned_choice_count() == 2u);
  BOOST_TEST(*tuned_choice("ks|gpu|float64|a=1") == "fused");
  // The snapshot lists what the cache holds, in key order.
  const auto all = tuned_choices();
  BOOST_REQUIRE(all.size() == 2u);
  BOOST_TEST(all[0].first == "kron|gpu|float32|B=4|2x2");
  BOOST_TEST(all[0].second == "sliced");
  BOOST_TEST(all[1].first == "ks|gpu|float64|a=1");
  BOOST_TEST(all[1].second == "fused");
}

BOOST_AUTO_TEST_CASE(bad_files_and_keys_are_rejected) {
  TuningState state;
  const std::string path = state.dir + "/not-a-cache.txt";
  std::ofstream(path) << "hello\tworld\n";
  BOOST_CHECK_THROW(set_tuning_file(path), IoError);
  BOOST_TEST(tuning_file().empty());
  BOOST_TEST(read_all(path) == "hello\tworld\n");  // untouched
  const std::string truncated = state.dir + "/truncated.txt";
  std::ofstream(truncated) << "# strop tuning cache v1\nkron|a\tgemm\nkron|b";
  BOOST_CHECK_THROW(set_tuning_file(truncated), IoError);
  BOOST_TEST(tuned_choice_count() == 0u);
  BOOST_CHECK_THROW(store_tuned_choice("key\twith tab", "x"), ShapeError);
  BOOST_CHECK_THROW(store_tuned_choice("key", ""), ShapeError);
  set_tuning_enabled(true);
  BOOST_TEST(tuning_enabled());
}

BOOST_AUTO_TEST_CASE(an_unwritable_file_keeps_choices_in_memory) {
  // Writing the file is best effort: an apply that measured a choice failed (IoError) on its
  // first call when the directory was missing.
  TuningState state;
  set_tuning_file(state.dir + "/missing-directory/cache.txt");
  BOOST_CHECK_NO_THROW(store_tuned_choice("k", "v"));
  BOOST_TEST(*tuned_choice("k") == "v");
}

BOOST_AUTO_TEST_CASE(a_bad_file_named_by_the_environment_is_ignored) {
  // Run by the next case in a child process whose STROP_TUNING_FILE names a file that is no
  // tuning cache (read once per process). Every call into the tuning code threw there, so
  // every GPU apply failed, even with tuning off.
  BOOST_CHECK_NO_THROW(tuning_enabled());
  BOOST_CHECK_NO_THROW(set_tuning_enabled(false));
  if (std::getenv("STROP_TUNING_FILE") != nullptr) BOOST_TEST(tuning_file().empty());
}

BOOST_AUTO_TEST_CASE(a_process_with_a_bad_file_in_its_environment_works) {
  TuningState state;
  const std::string bad = state.dir + "/bad.txt";
  std::ofstream(bad) << "garbage\n";
  // This test program (in the shell that system() starts, /proc/self/exe is the shell).
  const std::string self = std::filesystem::read_symlink("/proc/self/exe").string();
  const std::string command =
      "STROP_TUNING_FILE='" + bad + "' '" + self +
      "' --run_test=tuning_cache/a_bad_file_named_by_the_environment_is_ignored > /dev/null 2>&1";
  BOOST_TEST(std::system(command.c_str()) == 0);
}

BOOST_AUTO_TEST_SUITE_END()
