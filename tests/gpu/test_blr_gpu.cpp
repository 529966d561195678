// Block low-rank operators on the GPU (their KS form: cuBLAS and KS kernels, plus the
// Monarch shuffle as a row gather) against the CPU application, itself tested against
// dense matrices in tests/unit/test_blr.cpp.
#include "gpu_reference.hpp"

using namespace strop;
using namespace strop::testing;

namespace {
struct Shape {
  Index rows, cols, row_blocks, col_blocks, rank;
};
// Square and rectangular grids, wide and tall matrices, rank above the block size, one block.
const std::vector<Shape> kShapes = {{64, 64, 4, 4, 3},     {96, 64, 4, 2, 5}, {30, 90, 3, 5, 8},
                                    {128, 48, 8, 3, 2},    {40, 56, 1, 1, 6}, {64, 64, 16, 16, 1},
                                    {256, 256, 16, 16, 16}};
}  // namespace

BOOST_AUTO_TEST_SUITE(gpu_blr, *utf::precondition(HasDevice()))

BOOST_AUTO_TEST_CASE_TEMPLATE(monarch_blast_and_lowrank_match_cpu, T, ScalarTypes) {
  std::mt19937 gen(31);
  for (const Shape& s : kShapes) {
    BOOST_TEST_CONTEXT(s.rows << "x" << s.cols << " grid " << s.row_blocks << "x" << s.col_blocks
                              << " rank " << s.rank) {
      const auto M = Monarch<T>::random(s.rows, s.cols, s.row_blocks, s.col_blocks, s.rank, gen);
      const auto B = Blast<T>::random(s.rows, s.cols, s.row_blocks, s.col_blocks, s.rank, gen);
      const auto L = LowRank<T>::random(s.rows, s.cols, s.rank, gen);
      for (Index batch : {1, 7, 70}) {
        check_gpu_against_cpu(M, batch);
        check_gpu_against_cpu(B, batch);
        check_gpu_against_cpu(L, batch);
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(blr_in_an_expression_on_the_device) {
  std::mt19937 gen(37);
  const auto M = Monarch<float>::random(64, 64, 8, 8, 2, gen);
  const auto B = Blast<float>::random(64, 64, 4, 4, 4, gen);
  check_gpu_against_cpu(M * B + 0.5f * M, 9);
}

BOOST_AUTO_TEST_SUITE_END()
