#pragma once
// AnyOperator<T>: the type-erased run-time form of any expression: a shared, immutable
// node graph. Converting an expression keeps its structure (a Product stays a product node
// whose children are AnyOperators), so the planner, the HDF5 codecs and the CLI can walk it.
// Leaves are the same classes in both worlds.
#include <memory>
#include <typeinfo>
#include <vector>

#include "strop/expr/operator_base.hpp"

namespace strop {

namespace detail {

template <class T>
struct AnyNode {
  virtual ~AnyNode() = default;
  virtual Index rows() const = 0;
  virtual Index cols() const = 0;
  virtual void apply_unchecked(Op op, ConstView<T> X, MatrixView<T> Y, T alpha, T beta,
                               Context& ctx) const = 0;
  virtual double flops(Index batch) const = 0;
  virtual double transposed_flops(Index batch) const = 0;
  virtual Index parameter_count() const = 0;
  virtual bool acts_per_signal() const = 0;
  virtual const char* type_name() const = 0;
  virtual std::vector<AnyOperator<T>> children() const = 0;
  // The concrete operator if it is of type `type`, else nullptr.
  virtual const void* object(const std::type_info& type) const = 0;
};

template <class T, class E>
struct AnyNodeModel final : AnyNode<T> {
  explicit AnyNodeModel(E op) : op(std::move(op)) {}
  Index rows() const override { return op.rows(); }
  Index cols() const override { return op.cols(); }
  void apply_unchecked(Op o, ConstView<T> X, MatrixView<T> Y, T alpha, T beta,
                       Context& ctx) const override {
    op.apply_unchecked(o, X, Y, alpha, beta, ctx);
  }
  double flops(Index batch) const override { return op.flops(batch); }
  double transposed_flops(Index batch) const override {
    return detail::transposed_flops(op, batch);
  }
  Index parameter_count() const override { return op.parameter_count(); }
  bool acts_per_signal() const override { return detail::acts_per_signal(op); }
  const char* type_name() const override { return E::type_name; }
  std::vector<AnyOperator<T>> children() const override {
    if constexpr (requires { op.children(); }) {
      return op.children();
    } else {
      return {};
    }
  }
  const void* object(const std::type_info& type) const override {
    return type == typeid(E) ? &op : nullptr;
  }
  E op;
};

template <class T, class E>
std::shared_ptr<const AnyNode<T>> make_any_node(const E& e) {
  if constexpr (requires { e.to_any_form(); }) {
    using Canonical = decltype(e.to_any_form());
    if constexpr (!std::is_same_v<Canonical, E>) {
      return std::make_shared<AnyNodeModel<T, Canonical>>(e.to_any_form());
    }
  }
  return std::make_shared<AnyNodeModel<T, E>>(e);
}

}  // namespace detail

template <class T>
class AnyOperator : public OperatorBase<AnyOperator<T>> {
 public:
  using Scalar = T;
  static constexpr const char* type_name = "any";

  template <Operator E>
  requires(std::is_same_v<typename E::Scalar, T> && !std::is_same_v<E, AnyOperator<T>>)
      AnyOperator(const E& e)  // NOLINT: every expression converts implicitly, like Eigen's Ref
      : node_(detail::make_any_node<T>(e)) {}

  Index rows() const { return node_->rows(); }
  Index cols() const { return node_->cols(); }
  void apply_unchecked(Op op, ConstView<T> X, MatrixView<T> Y, T alpha, T beta,
                       Context& ctx) const {
    node_->apply_unchecked(op, X, Y, alpha, beta, ctx);
  }
  double flops(Index batch) const { return node_->flops(batch); }
  double transposed_flops(Index batch) const { return node_->transposed_flops(batch); }
  Index parameter_count() const { return node_->parameter_count(); }
  // False when some node mixes the signals of a batch (see detail::acts_per_signal).
  bool acts_per_signal() const { return node_->acts_per_signal(); }

  // What the node is: "dense", "product", ... (the HDF5 strop_type).
  const char* node_type() const { return node_->type_name(); }
  std::vector<AnyOperator<T>> children() const { return node_->children(); }
  // The concrete node if it has type E, else nullptr.
  template <class E>
  const E* as() const {
    return static_cast<const E*>(node_->object(typeid(E)));
  }

 private:
  std::shared_ptr<const detail::AnyNode<T>> node_;
};

}  // namespace strop
