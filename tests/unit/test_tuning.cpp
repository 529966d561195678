// The tuning cache (strop/core/tuning.hpp): choices kept in memory and in a file, reloaded,
// and malformed files rejected without touching the cache or the file.
#include <sys/stat.h>
#include <sys/wait.h>
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

BOOST_AUTO_TEST_CASE(damaged_lines_are_refused) {
  TuningState state;
  // Cut inside a value (the writer ends every line with a newline): "strided_ge" was
  // trusted, and written back by the next store.
  const std::string cut_value = state.dir + "/cut-value.txt";
  const std::string cut_text = "# strop tuning cache v1\nks|a\tfused\nks|b\tstrided_ge";
  std::ofstream(cut_value) << cut_text;
  BOOST_CHECK_THROW(set_tuning_file(cut_value), IoError);
  BOOST_TEST(tuned_choice_count() == 0u);
  BOOST_TEST(read_all(cut_value) == cut_text);  // untouched
  // A value with a tab, which store_tuned_choice refuses, was read as "\tv".
  const std::string two_tabs = state.dir + "/two-tabs.txt";
  std::ofstream(two_tabs) << "# strop tuning cache v1\nk\t\tv\n";
  BOOST_CHECK_THROW(set_tuning_file(two_tabs), IoError);
  BOOST_TEST(tuned_choice_count() == 0u);
}

namespace {
// In a child process (as "nobody" where the tests run as root, who reads any file): 0 when
// a cache file that exists but cannot be read is neither taken for a missing one nor
// replaced, else a bit per failure; 64 when the child cannot drop its privileges.
int check_unreadable_file(const std::string& path) {
  if (::geteuid() == 0 && (::setgid(65534) != 0 || ::setuid(65534) != 0)) return 64;
  const std::string kept = "# strop tuning cache v1\nkept\tfused\n";
  const mode_t write_only = 0200;  // unreadable, yet a store may replace it
  int failures = 0;
  std::ofstream(path) << kept;
  ::chmod(path.c_str(), write_only);
  try {
    set_tuning_file(path);  // was accepted as an empty cache
    failures |= 1;
  } catch (const IoError&) {
  }
  // Loaded while readable; another process then adds a choice and the file turns unreadable:
  // the next store rewrote it from the choices in memory, losing that one.
  ::chmod(path.c_str(), 0644);
  set_tuning_file(path);
  const std::string both = kept + "other\tgemm\n";
  std::ofstream(path) << both;
  ::chmod(path.c_str(), write_only);
  try {
    store_tuned_choice("new", "sliced");  // kept in memory only
    if (tuned_choice("new") != "sliced") failures |= 2;
  } catch (...) {
    failures |= 4;
  }
  ::chmod(path.c_str(), 0644);
  if (read_all(path) != both) failures |= 8;
  return failures;
}
}  // namespace

BOOST_AUTO_TEST_CASE(an_unreadable_file_is_never_replaced) {
  TuningState state;
  // A path through a regular file (ENOTDIR) was taken for a missing file too.
  const std::string plain = state.dir + "/plain.txt";
  std::ofstream(plain) << "# strop tuning cache v1\n";
  BOOST_CHECK_THROW(set_tuning_file(plain + "/cache.txt"), IoError);
  BOOST_TEST(tuning_file().empty());
  // EACCES, in a child process that may change its user (the directory lets it write).
  ::chmod(state.dir.c_str(), 0777);
  const pid_t child = ::fork();
  BOOST_REQUIRE(child >= 0);
  if (child == 0) ::_exit(check_unreadable_file(state.dir + "/cache.txt"));
  int status = 0;
  BOOST_REQUIRE(::waitpid(child, &status, 0) == child);
  BOOST_REQUIRE(WIFEXITED(status));
  if (WEXITSTATUS(status) == 64) {
    BOOST_TEST_MESSAGE("cannot drop root privileges: the EACCES case is not checked");
    return;
  }
  BOOST_TEST(WEXITSTATUS(status) == 0);  // a bit per failure (check_unreadable_file)
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
