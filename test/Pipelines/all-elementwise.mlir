// Every elementwise op, in the generic form with no attributes where the op
// has none, with broadcasting and casts, compiled to PTX that ptxas accepts.
// REQUIRES: ptxas
// RUN: kgraph-opt --tile=sm_80 %s -o %t.sm80.ptx
// RUN: %ptxas -arch=sm_80 -v %t.sm80.ptx -o %t.sm80.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS
// RUN: FileCheck %s --check-prefix=PTX < %t.sm80.ptx
// RUN: FileCheck %s --check-prefix=PLAN --match-full-lines < %t.sm80.plan.json
// RUN: kgraph-opt --tile=sm_90a %s -o %t.sm90a.ptx
// RUN: %ptxas -arch=sm_90a %t.sm90a.ptx -o %t.sm90a.cubin
// RUN: FileCheck %s --check-prefix=PTX90 < %t.sm90a.ptx
// RUN: kgraph-opt --tile=sm_75 %s -o %t.sm75.ptx
// RUN: %ptxas -arch=sm_75 %t.sm75.ptx -o %t.sm75.cubin
// RUN: kgraph-opt --tile=sm_86 %s -o %t.sm86.ptx
// RUN: %ptxas -arch=sm_86 %t.sm86.ptx -o %t.sm86.cubin
// RUN: kgraph-opt --tile=sm_89 %s -o %t.sm89.ptx
// RUN: %ptxas -arch=sm_89 %t.sm89.ptx -o %t.sm89.cubin
// RUN: kgraph-opt --tile=sm_90 %s -o %t.sm90.ptx
// RUN: %ptxas -arch=sm_90 %t.sm90.ptx -o %t.sm90.cubin

// No kernel spills: every "N bytes spill" that ptxas reports is 0.
// PTXAS-NOT: {{[1-9][0-9]* bytes spill}}
// PTXAS: , 0 bytes spill stores, 0 bytes spill loads
// PTXAS-NOT: {{[1-9][0-9]* bytes spill}}

// PTX: .version 7.0
// PTX: .target sm_80
// PTX: .visible .entry main_k0(
// PTX: ld.global.v4
// PTX: st.global.v4
// PTX: .visible .entry main_k25(
// PTX90: .target sm_90a

// PLAN: "format": "kgraph-launch-plan",
// PLAN: "functions": [
// PLAN: "name": "main_k25",
// PLAN: "name": "main"
// PLAN: "target": "sm_80",
// PLAN: "version": 2

func.func @main(%a: tensor<3x5x1023xf32>, %row: tensor<1023xf32>, %col: tensor<3x5x1xf32>,
                %h: tensor<1000xf16>, %bf: tensor<1000xbf16>, %i: tensor<7x9xi32>, %j: tensor<9xi32>)
    -> (tensor<3x5x1023xf32>, tensor<3x5x1023xf32>, tensor<3x5x1023xf32>, tensor<3x5x1023xf32>,
        tensor<3x5x1023xf32>, tensor<3x5x1023xf32>, tensor<3x5x1023xf32>,
        tensor<1000xf16>, tensor<1000xf16>, tensor<1000xf16>, tensor<1000xf16>, tensor<1000xf16>,
        tensor<1000xbf16>, tensor<1000xbf16>, tensor<1000xbf16>, tensor<1000xbf16>, tensor<1000xbf16>,
        tensor<7x9xi32>, tensor<7x9xi32>, tensor<1000xf32>, tensor<1000xi8>, tensor<7x9xf16>,
        tensor<1000xi1>, tensor<1000xf16>, tensor<7x9xi32>, tensor<3x5x1023xf32>) {
  %0 = "kgraph.add"(%a, %row) : (tensor<3x5x1023xf32>, tensor<1023xf32>) -> tensor<3x5x1023xf32>
  %1 = "kgraph.sub"(%a, %col) : (tensor<3x5x1023xf32>, tensor<3x5x1xf32>) -> tensor<3x5x1023xf32>
  %2 = "kgraph.mul"(%a, %a) : (tensor<3x5x1023xf32>, tensor<3x5x1023xf32>) -> tensor<3x5x1023xf32>
  %3 = "kgraph.div"(%row, %col) : (tensor<1023xf32>, tensor<3x5x1xf32>) -> tensor<3x5x1023xf32>
  %4 = "kgraph.max"(%a, %row) : (tensor<3x5x1023xf32>, tensor<1023xf32>) -> tensor<3x5x1023xf32>
  %5 = "kgraph.min"(%a, %col) : (tensor<3x5x1023xf32>, tensor<3x5x1xf32>) -> tensor<3x5x1023xf32>
  %6 = "kgraph.pow"(%a, %row) : (tensor<3x5x1023xf32>, tensor<1023xf32>) -> tensor<3x5x1023xf32>
  %7 = "kgraph.neg"(%h) : (tensor<1000xf16>) -> tensor<1000xf16>
  %8 = "kgraph.abs"(%h) : (tensor<1000xf16>) -> tensor<1000xf16>
  %9 = "kgraph.exp"(%h) : (tensor<1000xf16>) -> tensor<1000xf16>
  %10 = "kgraph.log"(%h) : (tensor<1000xf16>) -> tensor<1000xf16>
  %11 = "kgraph.sqrt"(%h) : (tensor<1000xf16>) -> tensor<1000xf16>
  %12 = "kgraph.rsqrt"(%bf) : (tensor<1000xbf16>) -> tensor<1000xbf16>
  %13 = "kgraph.tanh"(%bf) : (tensor<1000xbf16>) -> tensor<1000xbf16>
  %14 = "kgraph.sigmoid"(%bf) : (tensor<1000xbf16>) -> tensor<1000xbf16>
  %15 = "kgraph.relu"(%bf) : (tensor<1000xbf16>) -> tensor<1000xbf16>
  %16 = "kgraph.gelu"(%bf) : (tensor<1000xbf16>) -> tensor<1000xbf16>
  %17 = "kgraph.div"(%i, %j) : (tensor<7x9xi32>, tensor<9xi32>) -> tensor<7x9xi32>
  %18 = kgraph.clamp %i {max = 100.5 : f64, min = -3.5 : f64} : tensor<7x9xi32>
  %19 = "kgraph.cast"(%bf) : (tensor<1000xbf16>) -> tensor<1000xf32>
  %20 = "kgraph.cast"(%h) : (tensor<1000xf16>) -> tensor<1000xi8>
  %21 = "kgraph.cast"(%i) : (tensor<7x9xi32>) -> tensor<7x9xf16>
  %22 = kgraph.compare le, %h, %h : tensor<1000xf16>, tensor<1000xf16>
  %23 = kgraph.select %22, %h, %7 : tensor<1000xi1>, tensor<1000xf16>, tensor<1000xf16>
  %24 = kgraph.relu %i : tensor<7x9xi32>
  %25 = kgraph.gelu %a {approximate} : tensor<3x5x1023xf32>
  return %0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25
    : tensor<3x5x1023xf32>, tensor<3x5x1023xf32>, tensor<3x5x1023xf32>, tensor<3x5x1023xf32>,
      tensor<3x5x1023xf32>, tensor<3x5x1023xf32>, tensor<3x5x1023xf32>,
      tensor<1000xf16>, tensor<1000xf16>, tensor<1000xf16>, tensor<1000xf16>, tensor<1000xf16>,
      tensor<1000xbf16>, tensor<1000xbf16>, tensor<1000xbf16>, tensor<1000xbf16>, tensor<1000xbf16>,
      tensor<7x9xi32>, tensor<7x9xi32>, tensor<1000xf32>, tensor<1000xi8>, tensor<7x9xf16>,
      tensor<1000xi1>, tensor<1000xf16>, tensor<7x9xi32>, tensor<3x5x1023xf32>
}
