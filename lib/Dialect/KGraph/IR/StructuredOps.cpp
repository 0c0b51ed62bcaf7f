// Matmul, conv2d, pool2d, reduce and fused: verifiers and inference.
#include "kgraph/Dialect/KGraph/IR/KGraphOps.h"
