// The program of tests/install: runs the checks of the shared library that uses strop.
extern "C" int check_strop(const char* path);

int main(int argc, char** argv) {
  return check_strop(argc > 1 ? argv[1] : "strop_consumer.h5");
}
