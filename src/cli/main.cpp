#include <iostream>

#include "strop/strop.hpp"

int main() {
  using namespace strop;
  Dense<double> A(HostMatrix<double>::Random(4, 4));
  auto e = 2.0 * A * A.transpose() + kron(A, Identity<double>(2)).transpose() * kron(A, A).transpose().transpose() * vstack(A, A) * hstack(A, A) * block_diag(A, A);
  HostMatrix<double> X = HostMatrix<double>::Random(4, 3);
  std::cout << (A * X) << "\n" << e.rows() << "\n";
  AnyOperator<double> any = e;
  std::cout << any.node_type() << " " << any.children().size() << "\n";
  return 0;
}
