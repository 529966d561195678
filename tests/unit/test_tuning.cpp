// The tuning cache (strop/core/tuning.hpp): choices kept in memory and in a file, reloaded,
// and malformed files rejected without touching the cache or the file.
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>
#include <vector>

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

BOOST_AUTO_TEST_CASE(a_stale_loaded_choice_does_not_overwrite_a_newer_one) {
  // Each store wrote every choice in memory over the file, those merely loaded from it too:
  // a choice another process measured again since this one loaded the file was replaced by
  // the stale copy when this process stored an unrelated key.
  TuningState state;
  const std::string path = state.dir + "/cache.txt";
  const std::string header = "# strop tuning cache v1\n";
  std::ofstream(path) << header << "k\told\n";
  set_tuning_file(path);
  BOOST_TEST(*tuned_choice("k") == "old");
  std::ofstream(path) << header << "k\tnew\n";  // another process measures k again
  store_tuned_choice("j", "x");
  BOOST_TEST(read_all(path) == header + "j\tx\nk\tnew\n");
  BOOST_TEST(*tuned_choice("k") == "old");  // the memory keeps what this process loaded
  // A choice this process stored and wrote is not written back over a later measurement
  // either; one it stores again (after the other process wrote) is.
  std::ofstream(path) << header << "j\tnewer\nk\tnew\n";
  store_tuned_choice("i", "y");
  BOOST_TEST(read_all(path) == header + "i\ty\nj\tnewer\nk\tnew\n");
  std::ofstream(path) << header << "i\tz\nj\tnewer\nk\tnew\n";
  store_tuned_choice("k", "mine");
  BOOST_TEST(read_all(path) == header + "i\tz\nj\tnewer\nk\tmine\n");
  BOOST_TEST(*tuned_choice("i") == "y");
  // A clear forgets every choice in memory; the next store does not bring the file's back.
  clear_tuned_choices();
  store_tuned_choice("h", "1");
  BOOST_TEST(tuned_choice_count() == 1u);
  BOOST_TEST(read_all(path) == header + "h\t1\ni\tz\nj\tnewer\nk\tmine\n");
}

BOOST_AUTO_TEST_CASE(a_choice_not_written_is_written_by_the_next_store) {
  // A choice that stays in memory only (the directory was missing) is written with the next
  // choice once the file can be written, and one stored with no file set goes to the file
  // set later, unless that file holds the key already (loading replaces it).
  TuningState state;
  const std::string dir = state.dir + "/later";
  const std::string path = dir + "/cache.txt";
  const std::string header = "# strop tuning cache v1\n";
  store_tuned_choice("a", "1");
  store_tuned_choice("b", "1");
  set_tuning_file(path);
  store_tuned_choice("c", "1");  // not written: no directory
  std::filesystem::create_directories(dir);
  std::ofstream(path) << header << "b\t2\n";
  set_tuning_file(path);
  BOOST_TEST(*tuned_choice("b") == "2");
  store_tuned_choice("d", "1");
  BOOST_TEST(read_all(path) == header + "a\t1\nb\t2\nc\t1\nd\t1\n");
}

namespace {
// Built with +=: GCC 12 at -O3 warns (-Wrestrict, a false positive) on "literal" + string.
std::string thread_key(int thread, int i) {
  std::string key = "t";
  key += std::to_string(thread);
  key += '|';
  key += std::to_string(i);
  return key;
}
std::string thread_value(int i) {
  std::string value = "v";
  value += std::to_string(i);
  return value;
}
}  // namespace

BOOST_AUTO_TEST_CASE(concurrent_stores_all_reach_the_file) {
  // Threads storing at once (each merging into the file) must not drop one another's
  // entries; meanwhile lookups go on.
  TuningState state;
  const std::string path = state.dir + "/cache.txt";
  set_tuning_file(path);
  constexpr int kThreads = 4, kKeys = 25;
  std::atomic<int> failures{0};  // Boost.Test's checks are not thread-safe
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([t, &failures] {
      for (int i = 0; i < kKeys; ++i) {
        store_tuned_choice(thread_key(t, i), thread_value(i));
        if (tuned_choice(thread_key(t, i)) != thread_value(i)) ++failures;
      }
    });
  for (auto& thread : threads)
    thread.join();
  BOOST_TEST(failures.load() == 0);
  set_tuning_file("");
  clear_tuned_choices();
  set_tuning_file(path);
  BOOST_TEST(tuned_choice_count() == std::size_t{kThreads * kKeys});
  for (int t = 0; t < kThreads; ++t)
    for (int i = 0; i < kKeys; ++i)
      BOOST_TEST(tuned_choice(thread_key(t, i)).value_or("") == thread_value(i));
}

BOOST_AUTO_TEST_SUITE_END()
