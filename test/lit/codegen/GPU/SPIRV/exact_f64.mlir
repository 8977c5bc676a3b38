// RUN: kiln-opt %s -pass-pipeline='builtin.module(spirv.module(kiln-spirv-exact-f64))' \
// RUN:   | FileCheck %s

// f64 arithmetic is decorated NoContraction; f32 and integer arithmetic are not.
// CHECK-LABEL: spirv.func @f
// CHECK:         spirv.FMul %{{.*}}, %{{.*}} {no_contraction} : f64
// CHECK:         spirv.FAdd %{{.*}}, %{{.*}} {no_contraction} : f64
// CHECK:         spirv.FSub %{{.*}}, %{{.*}} {no_contraction} : f64
// CHECK:         spirv.FDiv %{{.*}}, %{{.*}} {no_contraction} : f64
// CHECK:         spirv.FNegate %{{.*}} {no_contraction} : f64
// CHECK:         spirv.GL.Fma %{{.*}}, %{{.*}}, %{{.*}} {no_contraction} : f64
// CHECK:         spirv.FMul %{{.*}}, %{{.*}} : f32
// CHECK-NOT:     no_contraction
// CHECK:         spirv.IAdd
spirv.module Logical GLSL450 requires #spirv.vce<v1.3, [Shader, Float64], []> {
  spirv.func @f(%a: f64, %b: f64, %c: f32, %i: i32) -> f64 "None" {
    %0 = spirv.FMul %a, %b : f64
    %1 = spirv.FAdd %0, %b : f64
    %2 = spirv.FSub %1, %a : f64
    %3 = spirv.FDiv %2, %b : f64
    %4 = spirv.FNegate %3 : f64
    %5 = spirv.GL.Fma %4, %a, %b : f64
    %6 = spirv.FMul %c, %c : f32
    %7 = spirv.IAdd %i, %i : i32
    spirv.ReturnValue %5 : f64
  }
}
