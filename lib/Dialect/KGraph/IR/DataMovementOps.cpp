// Reshape, transpose, slice, concat, broadcast_to: verifiers and folds.
#include "kgraph/Dialect/KGraph/IR/KGraphOps.h"
