//===- ModelBuilder.h - ONNX models built in unit tests ---------*- C++ -*-===//
//
// Builds ModelProtos with the ONNX protobuf classes, so the import tests need no Python.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_TEST_UNIT_IMPORT_MODELBUILDER_H
#define KILN_TEST_UNIT_IMPORT_MODELBUILDER_H

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <string>
#include <vector>

namespace importtest {


/// A dimension: a number, or a dim_param name when `param` is set.
struct Dim {
  int64_t value = 0;
  const char *param = nullptr;
  Dim(int64_t v) : value(v) {}
  Dim(const char *p) : param(p) {}
};

struct ModelBuilder {
  onnx::ModelProto model;

  explicit ModelBuilder(int64_t opset = 17) {
    model.set_ir_version(8);
    model.set_producer_name("kiln-test");
    model.set_producer_version("1.0");
    onnx::OperatorSetIdProto *op = model.add_opset_import();
    op->set_domain("");
    op->set_version(opset);
    model.mutable_graph()->set_name("test");
  }
  onnx::GraphProto &graph() { return *model.mutable_graph(); }

  onnx::ValueInfoProto *input(const std::string &name, std::vector<Dim> dims,
                              int elemType = onnx::TensorProto::FLOAT) {
    onnx::ValueInfoProto *v = graph().add_input();
    v->set_name(name);
    auto *t = v->mutable_type()->mutable_tensor_type();
    t->set_elem_type(elemType);
    auto *shape = t->mutable_shape();
    for (const Dim &d : dims) {
      auto *dim = shape->add_dim();
      if (d.param)
        dim->set_dim_param(d.param);
      else
        dim->set_dim_value(d.value);
    }
    return v;
  }
  void output(const std::string &name) { graph().add_output()->set_name(name); }

  onnx::NodeProto *node(const std::string &op, std::vector<std::string> inputs,
                        std::vector<std::string> outputs, const std::string &name = "") {
    onnx::NodeProto *n = graph().add_node();
    n->set_op_type(op);
    n->set_name(name);
    for (auto &i : inputs)
      n->add_input(i);
    for (auto &o : outputs)
      n->add_output(o);
    return n;
  }

  onnx::TensorProto *floatInit(const std::string &name, std::vector<int64_t> dims,
                               std::vector<float> data) {
    onnx::TensorProto *t = graph().add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::FLOAT);
    for (int64_t d : dims)
      t->add_dims(d);
    for (float f : data)
      t->add_float_data(f);
    return t;
  }
};

inline void addInts(onnx::NodeProto *n, const std::string &name, std::vector<int64_t> v) {
  auto *a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INTS);
  for (int64_t x : v)
    a->add_ints(x);
}
inline void addInt(onnx::NodeProto *n, const std::string &name, int64_t v) {
  auto *a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(v);
}
inline void addFloat(onnx::NodeProto *n, const std::string &name, float v) {
  auto *a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::FLOAT);
  a->set_f(v);
}

inline void addString(onnx::NodeProto *n, const std::string &name, const std::string &v) {
  auto *a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::STRING);
  a->set_s(v);
}

} // namespace importtest

#endif // KILN_TEST_UNIT_IMPORT_MODELBUILDER_H
